// Ownership transfers of a workspace: offered, accepted (owner and ETag change), declined, cancelled; each step's
// owner_transfers.updated reaches those who can view the workspace and the person offered, nobody else; an owner
// removed from the team leaves the workspace needing an owner until a team admin's offer is accepted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { runSvc } from './helpers/process.ts';
import { EventStream } from './helpers/events.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

type Person = { session: ApiClient; key: ApiClient; id: number };
let server: TestServer;
let orgOwner: Person, teamAdmin: Person, owner: Person, bob: Person, viewer: Person, outsider: Person;
let teamId: number;
let outsiderOrg: string;
let ws: number;
const streams: Record<string, EventStream> = {};

before(async () => {
  server = await startTestServer();
  [orgOwner, teamAdmin, owner, bob, viewer, outsider] = await Promise.all(
    ['orgowner', 'teamadmin', 'owner', 'bob', 'viewer', 'outsider'].map((name) => createPerson(server.admin, `${name}@example.com`)),
  );
  const org = (await orgOwner.key.post('/orgs', { name: 'Acme' })).body.id;
  teamId = (await orgOwner.key.post('/teams', { org_id: org, name: 'Platform' })).body.id;
  for (const [person, role] of [[teamAdmin, 'admin'], [owner, 'developer'], [bob, 'developer'], [viewer, 'viewer']] as const) {
    assert.equal((await orgOwner.key.put(`/teams/${teamId}/members/${person.id}`, { role })).status, 204);
  }
  outsiderOrg = (await outsider.key.post('/orgs', { name: 'Elsewhere' })).body.id;
  ws = (await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId, createdBy: owner.id, name: 'handed-on' })).id;
  for (const [name, person] of Object.entries({ owner, bob, viewer, outsider })) {
    streams[name] = await EventStream.open(person.session);
    await streams[name].next('ready');
  }
});
after(async () => {
  for (const stream of Object.values(streams)) stream.close();
  await server?.close();
});

/** The outsider's stream shows no owner_transfers.updated up to an event of their own made now. */
async function outsiderSawNothing(): Promise<void> {
  const org = await outsider.key.get(`/orgs/${outsiderOrg}`);
  await outsider.key.patch(`/orgs/${outsiderOrg}`, { name: `Elsewhere ${Date.now()}` }, { headers: { 'if-match': org.headers.get('etag')! } });
  const passed = await streams.outsider.until('org.updated');
  assert.deepEqual(passed.filter((e) => e.event === 'owner_transfers.updated'), []);
}

async function everyoneInTheTeamSees(transferWorkspace: number): Promise<void> {
  for (const name of ['owner', 'bob', 'viewer']) {
    const event = await streams[name].next('owner_transfers.updated');
    assert.equal(event.data.workspace_id, transferWorkspace, name);
    assert.equal(event.data.team_id, teamId);
    assert.equal(event.data.user_id, undefined, 'the recipient id stays on the server');
  }
}

test('offered and accepted: the owner and the ETag change; the events reach the team and the person offered, nobody else', async () => {
  const before = await owner.key.get(`/workspaces/${ws}`);
  assert.equal(before.body.owner_id, owner.id);
  assert.equal(before.body.needs_owner, false);
  assertProblem(await bob.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: bob.id }), 403, 'forbidden');
  assertProblem(await outsider.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: outsider.id }), 404, 'not-found');
  assertProblem(await owner.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: outsider.id }), 422, 'not-a-member');
  assertProblem(await owner.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: owner.id }), 422, 'validation');

  const offered = await owner.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: bob.id });
  assert.equal(offered.status, 201, offered.text);
  assert.deepEqual([offered.body.state, offered.body.from_user_id, offered.body.offered_by, offered.body.to_user_id], ['open', owner.id, owner.id, bob.id]);
  await everyoneInTheTeamSees(ws);
  await outsiderSawNothing();

  const twice = await owner.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: viewer.id });
  assertProblem(twice, 409, 'transfer-open');
  assert.equal(twice.body.transfer_id, offered.body.id);
  assert.deepEqual((await bob.key.get('/me/owner-transfers')).body.items.map((t: { id: string }) => t.id), [offered.body.id]);
  assert.deepEqual((await owner.key.get('/me/owner-transfers?state=open')).body.items.map((t: { id: string }) => t.id), [offered.body.id]);
  assert.deepEqual((await viewer.key.get(`/workspaces/${ws}/owner-transfers`)).body.items.map((t: { id: string }) => t.id), [offered.body.id]);
  assert.deepEqual((await viewer.key.get('/me/owner-transfers')).body.items, []);
  assertProblem(await outsider.key.get(`/workspaces/${ws}/owner-transfers`), 404, 'not-found');
  assertProblem(await outsider.key.get(`/owner-transfers/${offered.body.id}`), 404, 'not-found');

  assertProblem(await viewer.key.post(`/owner-transfers/${offered.body.id}/accept`), 404, 'not-found');
  assertProblem(await owner.key.post(`/owner-transfers/${offered.body.id}/accept`), 404, 'not-found');
  const accepted = await bob.key.post(`/owner-transfers/${offered.body.id}/accept`);
  assert.equal(accepted.status, 200, accepted.text);
  assert.equal(accepted.body.state, 'accepted');
  assert.equal(accepted.body.decided_by, bob.id);
  await everyoneInTheTeamSees(ws);
  const changed = await streams.viewer.next('workspace.updated', (e) => e.workspace_id === ws);
  assert.equal(changed.data.workspace.owner_id, bob.id);
  await streams.viewer.next('members.updated', (e) => e.workspace_id === ws);
  await outsiderSawNothing();
  const after = await bob.key.get(`/workspaces/${ws}`);
  assert.equal(after.body.owner_id, bob.id);
  assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
  assertProblem(await bob.key.post(`/owner-transfers/${offered.body.id}/accept`), 409, 'transfer-closed');
  assertProblem(await bob.key.post(`/owner-transfers/${offered.body.id}/decline`), 409, 'transfer-closed');
});

test('declined by the person offered; cancelled by the offerer; others may not cancel', async () => {
  server.clock.advance(1000); // newest first: each transfer a second after the last
  const offered = await bob.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: owner.id });
  assert.equal(offered.status, 201, offered.text);
  await everyoneInTheTeamSees(ws);
  const declined = await owner.key.post(`/owner-transfers/${offered.body.id}/decline`);
  assert.equal(declined.status, 200, declined.text);
  assert.equal(declined.body.state, 'declined');
  await everyoneInTheTeamSees(ws);
  assert.equal((await bob.key.get(`/workspaces/${ws}`)).body.owner_id, bob.id);

  server.clock.advance(1000);
  const again = await bob.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: viewer.id });
  assert.equal(again.status, 201, again.text);
  await everyoneInTheTeamSees(ws);
  assertProblem(await owner.key.post(`/owner-transfers/${again.body.id}/cancel`), 403, 'forbidden');
  assertProblem(await outsider.key.post(`/owner-transfers/${again.body.id}/cancel`), 404, 'not-found');
  const cancelled = await bob.key.post(`/owner-transfers/${again.body.id}/cancel`);
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.equal(cancelled.body.state, 'cancelled');
  await everyoneInTheTeamSees(ws);
  await outsiderSawNothing();
  const states = (await viewer.key.get(`/workspaces/${ws}/owner-transfers`)).body.items.map((t: { state: string }) => t.state);
  assert.deepEqual(states, ['cancelled', 'declined', 'accepted']);
  assertProblem(await viewer.key.get(`/workspaces/${ws}/owner-transfers?state=gone`), 422, 'validation');
});

test('an owner removed from the team: the workspace needs an owner; a team admin offers it, the person accepts', async () => {
  const pending = await bob.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: viewer.id });
  assert.equal(pending.status, 201, pending.text);
  assert.equal((await teamAdmin.key.delete(`/teams/${teamId}/members/${bob.id}`)).status, 204);
  const updated = await streams.viewer.next('workspace.updated', (e) => e.workspace_id === ws);
  assert.equal(updated.data.workspace.needs_owner, true);
  const orphan = await teamAdmin.key.get(`/workspaces/${ws}`);
  assert.equal(orphan.body.needs_owner, true);
  assert.equal(orphan.body.owner_id, bob.id, 'the former owner stays named until someone takes over');
  // The transfer bob offered stays open: a team admin may cancel it, the viewer may still accept.
  assert.equal((await teamAdmin.key.post(`/owner-transfers/${pending.body.id}/cancel`)).body.state, 'cancelled');

  const offered = await teamAdmin.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: owner.id });
  assert.equal(offered.status, 201, offered.text);
  assert.equal(offered.body.from_user_id, bob.id);
  assert.equal((await owner.key.post(`/owner-transfers/${offered.body.id}/accept`)).status, 200);
  const settled = await owner.key.get(`/workspaces/${ws}`);
  assert.deepEqual([settled.body.owner_id, settled.body.needs_owner], [owner.id, false]);
  assert.notEqual(settled.headers.get('etag'), orphan.headers.get('etag'));
});

test('transfers offered to someone who leaves are cancelled', async () => {
  const offered = await owner.key.post(`/workspaces/${ws}/owner-transfers`, { to_user_id: viewer.id });
  assert.equal(offered.status, 201, offered.text);
  assert.equal((await orgOwner.key.delete(`/teams/${teamId}/members/${viewer.id}`)).status, 204);
  assert.equal((await owner.key.get(`/owner-transfers/${offered.body.id}`)).body.state, 'cancelled');
  assert.equal((await owner.key.get(`/workspaces/${ws}`)).body.needs_owner, false);
});

test('svc invite and svc transfer drive the same API (--json)', async () => {
  const as = (person: Person) => (...args: string[]) =>
    runSvc(args, { SVC_URL: server.url, SVC_TOKEN: person.key.auth.token, SVC_TEAM: String(teamId), XDG_CONFIG_HOME: '/nonexistent' });
  const invited = await as(orgOwner)('invite', 'create', 'cli@example.com', '--org', 'Acme', '--teams', 'Platform:developer', '--json');
  assert.equal(invited.code, 0, invited.stderr);
  const invitation = JSON.parse(invited.stdout);
  assert.deepEqual(invitation.teams, [{ team_id: teamId, role: 'developer' }]);
  assert.equal(invitation.mail.detail, 'not sent: no mail server configured');
  assert.match(invitation.url, /#invitation=/);
  const listed = await as(orgOwner)('invite', 'list', '--state', 'pending');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /cli@example\.com\s+pending\s+not sent: no mail server configured/);
  const revoked = await as(orgOwner)('invite', 'revoke', invitation.id, '--json');
  assert.equal(JSON.parse(revoked.stdout).state, 'revoked');
  const again = await as(orgOwner)('invite', 'revoke', invitation.id);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /invitation was accepted or revoked|revoked already/);

  // An invitation for an account that exists is accepted by that account, with its own key: not by the inviter.
  const joiner = await createPerson(server.admin, 'joiner@example.com');
  const forJoiner = JSON.parse((await as(orgOwner)('invite', 'create', 'joiner@example.com', '--org', 'Acme', '--json')).stdout);
  const taken = await as(orgOwner)('invite', 'accept', forJoiner.url);
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /is for joiner@example\.com, and you are signed in as/);
  const joined = await as(joiner)('invite', 'accept', forJoiner.url);
  assert.equal(joined.code, 0, joined.stderr);
  assert.match(joined.stdout, /Accepted: joiner@example\.com joined the organization/);

  const offered = await as(owner)('transfer', 'offer', 'handed-on', 'teamadmin@example.com', '--json');
  assert.equal(offered.code, 0, offered.stderr);
  const transfer = JSON.parse(offered.stdout);
  assert.equal(transfer.to_user_id, teamAdmin.id);
  const mine = await as(teamAdmin)('transfer', 'list', '--state', 'open', '--json');
  assert.deepEqual(JSON.parse(mine.stdout).map((t: { id: string }) => t.id), [transfer.id]);
  const declined = await as(teamAdmin)('transfer', 'decline', transfer.id);
  assert.equal(declined.code, 0, declined.stderr);
  assert.match(declined.stdout, /Declined transfer/);
  const late = await as(teamAdmin)('transfer', 'accept', transfer.id, '--json');
  assert.equal(late.code, 1);
  assert.equal(JSON.parse(late.stdout).problem.type, 'urn:svc:problem:transfer-closed');
});
