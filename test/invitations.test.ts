// Invitations by e-mail through a real SMTP server on loopback (STARTTLS, AUTH): the mail arrives with a working
// link, accepting it makes the account and signs in, the inviter's event stream follows; an outage is retried and
// the mail goes out once; bad input gets its own problem.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { TestSmtpServer, linkIn } from './helpers/smtp.ts';
import { until } from './helpers/wait.ts';

let smtp: TestSmtpServer;
let server: TestServer;
let owner: { session: ApiClient; key: ApiClient; id: number };
let orgId: string;
let teamId: number;

before(async () => {
  smtp = await TestSmtpServer.start();
  server = await startTestServer({ env: { SVC_SMTP_URL: smtp.url(), SVC_MAIL_FROM: 'svc <invites@svc.test>' } });
  owner = await createPerson(server.admin, 'owner@example.com');
  orgId = (await owner.key.post('/orgs', { name: 'Acme' })).body.id;
  teamId = (await owner.key.post('/teams', { org_id: orgId, name: 'Platform' })).body.id;
});
after(async () => {
  await server?.close();
  await smtp?.close();
});

const tokenOf = (url: string) => new URL(url).hash.replace('#invitation=', '');

async function mailState(client: ApiClient, id: string, state: string) {
  return until(async () => {
    const invitation = (await client.get(`/invitations/${id}`)).body;
    return invitation.mail.state === state ? invitation : undefined;
  }, `invitation ${id} mail ${state}`, 30_000);
}

describe('invitations by mail', () => {
  test('the mail arrives with a working link; accepting makes the account, signs in, and the inviter sees invites.updated and members.updated', async () => {
    const stream = await EventStream.open(owner.session);
    await stream.next('ready');
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'newcomer@example.com', teams: [{ team_id: teamId, role: 'developer' }] });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.state, 'pending');
    assert.equal(created.body.url, undefined, 'with a mail server the link goes only by mail');
    assert.deepEqual(created.body.teams, [{ team_id: teamId, role: 'developer' }]);
    await stream.next('invites.updated', (e) => e.org_id === orgId);

    await smtp.until(() => smtp.received.length === 1, 'invitation mail');
    const mail = smtp.received[0];
    assert.deepEqual(mail.to, ['newcomer@example.com']);
    assert.equal(mail.from, 'invites@svc.test');
    assert.match(mail.subject, /invited you to Acme/);
    assert.ok(smtp.sessions.every((s) => s.secure && s.user === 'mailer'), 'STARTTLS and AUTH on every session');
    const sent = await mailState(owner.key, created.body.id, 'sent');
    assert.equal(sent.mail.detail, 'sent');
    assert.ok(sent.mail.sent_at);

    const link = linkIn(mail);
    assert.ok(link.startsWith(`${server.url}/sign-in#invitation=`), link);
    const accepted = await server.anonymous.post('/invitations/accept', { token: tokenOf(link), name: 'Newcomer' });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(accepted.body.account_created, true);
    assert.equal(accepted.body.user.email, 'newcomer@example.com');
    assert.equal(accepted.body.user.name, 'Newcomer');
    assert.equal(accepted.body.invitation.state, 'accepted');
    const cookie = /__Host-svc_session=([^;]+)/.exec(accepted.headers.get('set-cookie') ?? '')![1];
    const newcomer = new ApiClient(server.url, { cookie });
    assert.equal((await newcomer.get('/me')).body.email, 'newcomer@example.com');
    const teams = (await newcomer.get('/teams')).body.items;
    assert.deepEqual(teams.map((t: { id: number; role: string }) => [t.id, t.role]), [[teamId, 'developer']]);

    const passed = await stream.until('members.updated', (e) => e.team_id === teamId);
    assert.ok(passed.some((e) => e.event === 'invites.updated' && e.data.org_id === orgId), 'invites.updated on acceptance');
    assert.ok(passed.some((e) => e.event === 'members.updated' && e.data.org_id === orgId && e.data.team_id === undefined), 'members.updated of the org');
    assert.ok(!passed.some((e) => e.event === 'access.changed'), "the newcomer's access.changed is theirs alone");
    stream.close();

    const again = await server.anonymous.post('/invitations/accept', { token: tokenOf(link) });
    assertProblem(again, 403, 'sign-in-link-invalid');
    assert.equal(again.body.title, 'This link has expired');
    assert.equal(smtp.received.length, 1);
  });

  test('an SMTP server that refuses (451), then recovers: the state says retrying, then the mail goes out once', async () => {
    smtp.mode = 'refuse';
    const before = smtp.received.length;
    const refusalsBefore = smtp.refusals;
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'later@example.com' });
    assert.equal(created.status, 201, created.text);
    const retrying = await mailState(owner.key, created.body.id, 'retrying');
    assert.match(retrying.mail.detail, /^not sent yet: .*451.*; next attempt at /);
    assert.equal(retrying.mail.attempts, 1);
    assert.ok(smtp.refusals > refusalsBefore);
    smtp.mode = 'accept';
    server.clock.advance(31_000); // the first retry waits 30 s
    await mailState(owner.key, created.body.id, 'sent');
    await smtp.until(() => smtp.received.length === before + 1, 'the retried mail');
    const ids = smtp.received.filter((m) => m.to.includes('later@example.com'));
    assert.equal(ids.length, 1, 'sent once');
    server.clock.advance(3_600_000);
    const settled = (await owner.key.get(`/invitations/${created.body.id}`)).body;
    assert.equal(settled.mail.state, 'sent');
    assert.equal(settled.mail.attempts, 2);
  });

  test('a recipient the server refuses for good (550) bounces', async () => {
    smtp.mode = 'bounce';
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'nobody@example.com' });
    const bounced = await mailState(owner.key, created.body.id, 'bounced');
    assert.match(bounced.mail.detail, /^bounced: .*550/);
    smtp.mode = 'accept';
  });

  test('revoking stops the link (403 "This link has expired"); renewing mails a new link and the old one stops', async () => {
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'twice@example.com' });
    await mailState(owner.key, created.body.id, 'sent');
    const first = linkIn(smtp.received.at(-1)!);
    const renewed = await owner.key.post(`/invitations/${created.body.id}/renew`);
    assert.equal(renewed.status, 200, renewed.text);
    await smtp.until(() => smtp.received.filter((m) => m.to.includes('twice@example.com')).length === 2, 'the renewed mail');
    const second = linkIn(smtp.received.at(-1)!);
    assert.notEqual(first, second);
    assertProblem(await server.anonymous.post('/invitations/accept', { token: tokenOf(first) }), 403, 'sign-in-link-invalid');
    const revoked = await owner.key.post(`/invitations/${created.body.id}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.body.state, 'revoked');
    const refused = await server.anonymous.post('/invitations/accept', { token: tokenOf(second) });
    assertProblem(refused, 403, 'sign-in-link-invalid');
    assert.match(refused.body.detail, /revoked/);
    assertProblem(await owner.key.post(`/invitations/${created.body.id}/revoke`), 409, 'invitation-closed');
    assertProblem(await owner.key.post(`/invitations/${created.body.id}/renew`), 409, 'invitation-closed');
    const listed = (await owner.key.get(`/orgs/${orgId}/invitations?state=revoked`)).body.items;
    assert.deepEqual(listed.map((i: { email: string }) => i.email), ['twice@example.com']);
  });

  test('an expired link is refused; renewing it works again', async () => {
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'slow@example.com' });
    await mailState(owner.key, created.body.id, 'sent');
    const link = linkIn(smtp.received.at(-1)!);
    server.clock.advance(8 * 86_400_000);
    assert.equal((await owner.key.get(`/invitations/${created.body.id}`)).body.state, 'expired');
    const late = await server.anonymous.post('/invitations/accept', { token: tokenOf(link) });
    assertProblem(late, 403, 'sign-in-link-invalid');
    assert.match(late.body.detail, /expired/);
    assert.equal((await owner.key.post(`/invitations/${created.body.id}/renew`)).body.state, 'pending');
  });
});

describe('invitations: who may, and bad input', () => {
  test('an address that is a member already: 409 with the member; a pending one: 409 with its id; foreign teams 422', async () => {
    const already = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'OWNER@example.com' });
    assertProblem(already, 409, 'already-member');
    assert.deepEqual([already.body.member.user_id, already.body.member.role], [owner.id, 'owner']);
    const first = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'pending@example.com' });
    const second = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'Pending@example.com' });
    assertProblem(second, 409, 'invitation-pending');
    assert.equal(second.body.invitation_id, first.body.id);
    const otherOrg = (await owner.key.post('/orgs', { name: 'Elsewhere' })).body.id;
    const foreignTeam = (await owner.key.post('/teams', { org_id: otherOrg, name: 'Theirs' })).body.id;
    const foreign = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'x@example.com', teams: [{ team_id: foreignTeam, role: 'viewer' }] });
    assertProblem(foreign, 422, 'validation');
    assert.equal(foreign.body.errors[0].pointer, '/teams/0/team_id');
    assertProblem(await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'not an address' }), 422, 'validation');
    assertProblem(await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'y@example.com', teams: [{ team_id: teamId, role: 'boss' }] }), 422, 'validation');
  });

  test('a team admin invites into their team only, never as owner; others cannot; strangers get 404', async () => {
    const admin = await createPerson(server.admin, 'teamadmin@example.com');
    const developer = await createPerson(server.admin, 'dev@example.com');
    const stranger = await createPerson(server.admin, 'stranger@example.com');
    await owner.key.put(`/teams/${teamId}/members/${admin.id}`, { role: 'admin' });
    await owner.key.put(`/teams/${teamId}/members/${developer.id}`, { role: 'developer' });
    const other = (await owner.key.post('/teams', { org_id: orgId, name: 'Other' })).body.id;
    const made = await admin.key.post(`/orgs/${orgId}/invitations`, { email: 'byadmin@example.com', teams: [{ team_id: teamId, role: 'viewer' }] });
    assert.equal(made.status, 201, made.text);
    assertProblem(await admin.key.post(`/orgs/${orgId}/invitations`, { email: 'a@example.com' }), 403, 'forbidden');
    assertProblem(await admin.key.post(`/orgs/${orgId}/invitations`, { email: 'b@example.com', role: 'owner', teams: [{ team_id: teamId, role: 'viewer' }] }), 403, 'forbidden');
    assertProblem(await admin.key.post(`/orgs/${orgId}/invitations`, { email: 'c@example.com', teams: [{ team_id: other, role: 'viewer' }] }), 403, 'forbidden');
    assertProblem(await developer.key.post(`/orgs/${orgId}/invitations`, { email: 'd@example.com', teams: [{ team_id: teamId, role: 'viewer' }] }), 403, 'forbidden');
    assertProblem(await stranger.key.post(`/orgs/${orgId}/invitations`, { email: 'e@example.com' }), 404, 'not-found');
    assertProblem(await stranger.key.get(`/invitations/${made.body.id}`), 404, 'not-found');
    const seen = (await admin.key.get(`/orgs/${orgId}/invitations`)).body.items.map((i: { email: string }) => i.email);
    assert.ok(seen.includes('byadmin@example.com') && seen.includes('newcomer@example.com'), 'invitations into their team');
    assert.ok(!seen.includes('later@example.com'), 'not those into the org alone');
    assertProblem(await server.anonymous.post('/invitations/accept', { token: 'made-up' }), 403, 'sign-in-link-invalid');
    assertProblem(await server.anonymous.post('/invitations/accept', {}), 422, 'validation');
  });

  test('an invitation for an existing account is accepted only by that account, signed in by its own means; the link signs nobody in', async () => {
    const existing = await createPerson(server.admin, 'existing@example.com');
    const other = await createPerson(server.admin, 'bystander@example.com');
    const created = await owner.key.post(`/orgs/${orgId}/invitations`, { email: 'existing@example.com', role: 'owner' });
    await mailState(owner.key, created.body.id, 'sent');
    const mail = smtp.received.filter((m) => m.to.includes('existing@example.com')).at(-1)!;
    const token = tokenOf(linkIn(mail));
    const anonymous = await server.anonymous.post('/invitations/accept', { token });
    assertProblem(anonymous, 401, 'invitation-needs-sign-in');
    assert.equal(anonymous.headers.get('set-cookie'), null, 'no session for the link alone');
    assertProblem(await other.session.post('/invitations/accept', { token }), 403, 'invitation-for-another-account');
    assertProblem(await other.key.post('/invitations/accept', { token }), 403, 'invitation-for-another-account');
    assert.equal((await existing.key.get(`/orgs/${orgId}`)).status, 404, 'not a member yet: the refusals used nothing up');
    const accepted = await existing.session.post('/invitations/accept', { token });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(accepted.body.account_created, false);
    assert.equal(accepted.body.user.id, existing.id);
    assert.equal(accepted.body.expires_at, undefined);
    assert.equal(accepted.headers.get('set-cookie'), null, 'the account signed in by itself: no new session');
    assert.equal((await existing.key.get(`/orgs/${orgId}`)).body.role, 'owner');
  });
});

describe('without a mail server', () => {
  let bare: TestServer;
  before(async () => {
    bare = await startTestServer();
  });
  after(async () => bare?.close());

  test('the link is shown to the inviter once and the mail state says "not sent: no mail server configured"', async () => {
    const org = (await bare.admin.post('/orgs', { name: 'Quiet' })).body.id;
    const created = await bare.admin.post(`/orgs/${org}/invitations`, { email: 'quiet@example.com' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    assert.deepEqual(created.body.mail, { state: 'not_sent', detail: 'not sent: no mail server configured', attempts: 0 });
    assert.ok(created.body.url.startsWith(`${bare.url}/sign-in#invitation=`));
    const read = (await bare.admin.get(`/invitations/${created.body.id}`)).body;
    assert.equal(read.url, undefined, 'shown once');
    assert.equal(read.mail.state, 'not_sent');
    const accepted = await bare.anonymous.post('/invitations/accept', { token: tokenOf(created.body.url) });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(accepted.body.user.name, 'quiet');
  });

  test('nobody becomes the administrator through an invitation: the shown link, without credentials, with a session or a key of the inviter, is refused and used nothing up', async () => {
    const mallory = await createPerson(bare.admin, 'mallory@example.com');
    const org = (await mallory.key.post('/orgs', { name: 'Trap' })).body.id;
    const created = await mallory.key.post(`/orgs/${org}/invitations`, { email: 'admin@localhost', role: 'owner' });
    assert.equal(created.status, 201, created.text);
    const token = tokenOf(created.body.url);
    const anonymous = await bare.anonymous.post('/invitations/accept', { token });
    assertProblem(anonymous, 401, 'invitation-needs-sign-in');
    assert.equal(anonymous.headers.get('set-cookie'), null);
    assertProblem(await mallory.session.post('/invitations/accept', { token }), 403, 'invitation-for-another-account');
    assertProblem(await mallory.key.post('/invitations/accept', { token }), 403, 'invitation-for-another-account');
    assertProblem(await mallory.key.get('/users'), 403, 'forbidden');
    assert.equal((await bare.admin.get(`/invitations/${created.body.id}`)).body.state, 'pending');
    // The administrator, signed in by their own means, may still accept it.
    const accepted = await bare.admin.post('/invitations/accept', { token });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(accepted.headers.get('set-cookie'), null);
  });

  test('a shown link for a new address makes that account and signs it in, once; a signed-in account of another address cannot take it', async () => {
    const org = (await bare.admin.post('/orgs', { name: 'Fresh' })).body.id;
    const created = await bare.admin.post(`/orgs/${org}/invitations`, { email: 'fresh@example.com' });
    const token = tokenOf(created.body.url);
    assertProblem(await bare.admin.post('/invitations/accept', { token }), 403, 'invitation-for-another-account');
    // A browser that kept the cookie of an ended session is nobody here, not refused.
    const stale = new ApiClient(bare.url, { cookie: 'ended-session' });
    const accepted = await stale.post('/invitations/accept', { token, name: 'Fresh Person' });
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(accepted.body.account_created, true);
    assert.ok(accepted.body.expires_at);
    const cookie = /__Host-svc_session=([^;]+)/.exec(accepted.headers.get('set-cookie') ?? '')![1];
    const session = new ApiClient(bare.url, { cookie });
    assert.equal((await session.get('/me')).body.email, 'fresh@example.com');
    assert.equal((await session.get(`/orgs/${org}`)).body.role, 'member');
    assertProblem(await bare.anonymous.post('/invitations/accept', { token }), 403, 'sign-in-link-invalid');
  });
});
