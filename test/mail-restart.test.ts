// A server killed (SIGKILL) while its mail is being handed to the SMTP server sends it after a restart, exactly once;
// `svc admin sign-in-link --mail` queues a sign-in link that the running server mails.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { after, before, test } from 'node:test';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { runSvc, startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import { TestSmtpServer, linkIn } from './helpers/smtp.ts';
import { until } from './helpers/wait.ts';

let database: TestDatabase;
let smtp: TestSmtpServer;
let dataDir: string;
let running: SvcProcess | undefined;

before(async () => {
  database = await createTestDatabase();
  smtp = await TestSmtpServer.start();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-mail-'));
});
after(async () => {
  await stopSvc(running);
  await smtp?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<string> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--data-plane', 'node', '--smtp-url', smtp.url(), '--mail-from', 'svc@svc.test'], {
    DATABASE_URL: database.url,
  });
  const [, url] = await running.waitFor(/listening on (\S+)\n/);
  await running.waitFor(/^Mail: smtp:\/\/mailer:\*\*\*@/m);
  return url;
}

async function mailRow(id: string): Promise<{ state: string; attempts: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query('SELECT state, attempts FROM mail_outbox WHERE invitation_id = $1', [id])).rows[0];
  } finally {
    await client.end();
  }
}

test('kill -9 while the mail is being sent, start again: it goes out once', async () => {
  smtp.mode = 'hold';
  const url = await start();
  // The first start prints the administrator's sign-in link; it may come after the lines start() waits for.
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  const admin = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey();
  const org = (await admin.post('/orgs', { name: 'Restart' })).body.id;
  const invitation = await admin.post(`/orgs/${org}/invitations`, { email: 'survivor@example.com' });
  assert.equal(invitation.status, 201, invitation.text);
  await smtp.until(() => smtp.held === 1, 'the mail to reach DATA');
  assert.equal((await admin.get(`/invitations/${invitation.body.id}`)).body.mail.state, 'sending');
  running!.child.kill('SIGKILL');
  await running!.exited;
  assert.deepEqual(await mailRow(invitation.body.id), { state: 'sending', attempts: 1 }, 'cut off while sending');

  smtp.mode = 'accept';
  const again = new ApiClient(await start(), { token: admin.auth.token });
  await smtp.until(() => smtp.received.length === 1, 'the mail after the restart');
  const sent = await until(async () => {
    const read = (await again.get(`/invitations/${invitation.body.id}`)).body;
    return read.mail.state === 'sent' ? read : undefined;
  }, 'mail state sent');
  assert.equal(sent.mail.attempts, 2);
  assert.deepEqual(smtp.received[0].to, ['survivor@example.com']);
  assert.equal(smtp.received[0].messageId, `<${(await mailId(invitation.body.id))}@svc>`);

  // Another mail through the same server settles too; the first one is not sent again meanwhile.
  const admin2 = await runSvc(['admin', 'sign-in-link', '--mail', '--data-dir', dataDir], { DATABASE_URL: database.url });
  assert.equal(admin2.code, 0, admin2.stderr);
  assert.match(admin2.stdout, /A sign-in link for admin@localhost is queued for mail/);
  await smtp.until(() => smtp.received.length === 2, 'the sign-in link mail');
  const signIn = smtp.received[1];
  assert.deepEqual(signIn.to, ['admin@localhost']);
  assert.equal(signIn.subject, 'Your sign-in link for svc');
  const session = await new ApiClient(again.baseUrl).signInWithLink(new URL(linkIn(signIn)).hash.slice('#token='.length));
  assert.equal((await session.get('/me')).body.email, 'admin@localhost');
  assert.equal(smtp.received.filter((m) => m.to.includes('survivor@example.com')).length, 1, 'the invitation went out once');
});

test('svc admin sign-in-link --mail without a running server refuses and says why', async () => {
  const empty = await mkdtemp(path.join(os.tmpdir(), 'svc-mail-none-'));
  try {
    const answer = await runSvc(['admin', 'sign-in-link', '--mail', '--data-dir', empty], { DATABASE_URL: database.url });
    assert.equal(answer.code, 1);
    assert.match(answer.stderr, /not sent: no running server/);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});

async function mailId(invitationId: string): Promise<string> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query('SELECT id FROM mail_outbox WHERE invitation_id = $1', [invitationId])).rows[0].id;
  } finally {
    await client.end();
  }
}
