// Sign-in links by mail (POST /users/{user}/sign-in-links with `mail: true`) through a real SMTP server on loopback:
// the answer carries the mail's state, never the link; the mail arrives once and its link signs the person in.
// Without a mail server the request is refused (501 not-available), never answered as if sent.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { TestSmtpServer, linkIn } from './helpers/smtp.ts';

let smtp: TestSmtpServer;
let server: TestServer;
let bare: TestServer;

before(async () => {
  smtp = await TestSmtpServer.start();
  server = await startTestServer({ env: { SVC_SMTP_URL: smtp.url(), SVC_MAIL_FROM: 'svc <links@svc.test>' } });
  bare = await startTestServer();
});
after(async () => {
  await server?.close();
  await bare?.close();
  await smtp?.close();
});

test('with mail: true the link goes through the outbox; the answer shows the mail state and no link', async () => {
  const person = await createPerson(server.admin, 'linked@example.com');
  const answer = await server.admin.post(`/users/${person.id}/sign-in-links`, { mail: true });
  assert.equal(answer.status, 201, answer.text);
  assert.equal(answer.body.url, undefined, 'the link goes only by mail');
  assert.equal(answer.body.mail.recipient, 'linked@example.com');
  assert.ok(['queued', 'sending', 'sent'].includes(answer.body.mail.state), answer.text);
  assert.equal(typeof answer.body.mail.detail, 'string');
  assert.ok(answer.body.expires_at);
  await smtp.until(() => smtp.received.some((m) => m.to.includes('linked@example.com')), 'the sign-in link mail');
  const mail = smtp.received.find((m) => m.to.includes('linked@example.com'))!;
  assert.equal(mail.subject, 'Your sign-in link for svc');
  assert.equal(mail.messageId, `<${answer.body.mail.id}@svc>`);
  const link = new URL(linkIn(mail));
  assert.equal(`${link.origin}${link.pathname}`, `${server.url}/sign-in`);
  const session = await new ApiClient(server.url).signInWithLink(link.hash.slice('#token='.length));
  assert.equal((await session.get('/me')).body.email, 'linked@example.com');
  assert.equal(smtp.received.filter((m) => m.to.includes('linked@example.com')).length, 1, 'sent once');
});

test('without mail (or mail: false) the link is answered as before', async () => {
  const person = await createPerson(server.admin, 'plain@example.com');
  const answer = await server.admin.post(`/users/${person.id}/sign-in-links`, { mail: false });
  assert.equal(answer.status, 201, answer.text);
  assert.match(answer.body.url, /\/sign-in#token=/);
  assert.equal(answer.body.mail, undefined);
  assertProblem(await server.admin.post(`/users/${person.id}/sign-in-links`, { mail: 'yes' }), 422, 'validation');
});

test('without a mail server, mail: true is refused with a problem that says so', async () => {
  const person = await createPerson(bare.admin, 'unmailed@example.com');
  const refused = await bare.admin.post(`/users/${person.id}/sign-in-links`, { mail: true });
  assertProblem(refused, 501, 'not-available');
  assert.match(refused.body.detail, /no mail server configured/);
  assertProblem(await person.key.post(`/users/${person.id}/sign-in-links`, { mail: true }), 403, 'forbidden');
});
