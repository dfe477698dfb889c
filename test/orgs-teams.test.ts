import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { teamRolePermissions } from '../src/auth/permissions.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let owner: { session: ApiClient; key: ApiClient; id: number };
let member: { session: ApiClient; key: ApiClient; id: number };
before(async () => {
  server = await startTestServer();
  owner = await createPerson(server.admin, 'owner@example.com');
  member = await createPerson(server.admin, 'member@example.com');
});
after(async () => server?.close());

const ifMatch = (answer: { headers: Headers }) => ({ headers: { 'if-match': answer.headers.get('etag')! } });

describe('organizations', () => {
  test('any user creates an org and owns it; names are unique regardless of case', async () => {
    const created = await owner.key.post('/orgs', { name: 'Acme' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.role, 'owner');
    assert.ok(created.body.permissions.includes('org.delete'));
    assertProblem(await member.key.post('/orgs', { name: 'ACME' }), 409, 'name-taken');
    const listed = await owner.key.get('/orgs');
    assert.deepEqual(listed.body.items.map((o: { name: string }) => o.name), ['Acme']);
    assert.deepEqual((await member.key.get('/orgs')).body.items, []);
    assertProblem(await member.key.get(`/orgs/${created.body.id}`), 404, 'not-found');
  });

  test('members see the org; only owners rename it or manage members', async () => {
    const org = (await owner.key.post('/orgs', { name: 'Members Inc' })).body;
    assert.equal((await owner.key.put(`/orgs/${org.id}/members/${member.id}`, { role: 'member' })).status, 204);
    const seen = await member.key.get(`/orgs/${org.id}`);
    assert.equal(seen.status, 200);
    assert.equal(seen.body.role, 'member');
    assert.deepEqual(seen.body.permissions, ['org.view', 'org.members.view']);
    assertProblem(await member.key.patch(`/orgs/${org.id}`, { name: 'Mine now' }, ifMatch(seen)), 403, 'forbidden');
    assertProblem(await member.key.put(`/orgs/${org.id}/members/${member.id}`, { role: 'owner' }), 403, 'forbidden');
    const list = await member.key.get(`/orgs/${org.id}/members`);
    assert.deepEqual(list.body.items.map((m: { email: string; role: string }) => [m.email, m.role]), [
      ['owner@example.com', 'owner'],
      ['member@example.com', 'member'],
    ]);
    assertProblem(await owner.key.put(`/orgs/${org.id}/members/${member.id}`, { role: 'boss' }), 422, 'validation');
    assertProblem(await owner.key.put(`/orgs/${org.id}/members/987654`, { role: 'member' }), 404, 'not-found');
  });

  test('the last owner can neither leave nor be demoted; after a second owner they can', async () => {
    const org = (await owner.key.post('/orgs', { name: 'Lonely' })).body;
    assertProblem(await owner.key.delete(`/orgs/${org.id}/members/${owner.id}`), 409, 'last-owner');
    assertProblem(await owner.key.put(`/orgs/${org.id}/members/${owner.id}`, { role: 'member' }), 409, 'last-owner');
    await owner.key.put(`/orgs/${org.id}/members/${member.id}`, { role: 'owner' });
    assert.equal((await owner.key.delete(`/orgs/${org.id}/members/${owner.id}`)).status, 204);
    assertProblem(await owner.key.get(`/orgs/${org.id}`), 404, 'not-found');
  });

  test('an org with teams cannot be deleted (409); without teams it can', async () => {
    const org = await owner.key.post('/orgs', { name: 'Has teams' });
    const team = await owner.key.post('/teams', { org_id: org.body.id, name: 'Core' });
    assertProblem(await owner.key.delete(`/orgs/${org.body.id}`, ifMatch(org)), 409, 'org-not-empty');
    assert.equal((await owner.key.delete(`/teams/${team.body.id}`, ifMatch(team))).status, 204);
    assert.equal((await owner.key.delete(`/orgs/${org.body.id}`, ifMatch(org))).status, 204);
  });
});

describe('teams', () => {
  let org: { id: string };
  before(async () => {
    org = (await owner.key.post('/orgs', { name: 'Team Org' })).body;
  });

  test('an org owner creates a team and becomes its admin; plain members cannot create teams', async () => {
    const team = await owner.key.post('/teams', { org_id: org.id, name: 'Platform' });
    assert.equal(team.status, 201, team.text);
    assert.equal(team.body.role, 'admin');
    assert.equal(team.body.org_id, org.id);
    assert.equal(team.headers.get('location'), `/api/v1/teams/${team.body.id}`);
    await owner.key.put(`/orgs/${org.id}/members/${member.id}`, { role: 'member' });
    assertProblem(await member.key.post('/teams', { org_id: org.id, name: 'Rogue' }), 403, 'forbidden');
    assertProblem(await owner.key.post('/teams', { org_id: org.id, name: 'platform' }), 409, 'name-taken');
    assertProblem(await owner.key.post('/teams', { org_id: '00000000-0000-4000-8000-000000000000', name: 'X' }), 404, 'not-found');
  });

  test('roles give the documented permissions; members of other teams see nothing', async () => {
    const team = (await owner.key.post('/teams', { org_id: org.id, name: 'Roles' })).body;
    for (const role of ['viewer', 'developer', 'admin'] as const) {
      assert.equal((await owner.key.put(`/teams/${team.id}/members/${member.id}`, { role })).status, 204);
      const seen = await member.key.get(`/teams/${team.id}`);
      assert.equal(seen.status, 200);
      assert.equal(seen.body.role, role);
      assert.deepEqual(seen.body.permissions, [...teamRolePermissions[role]]);
    }
    const stranger = await createPerson(server.admin, 'stranger@example.com');
    assertProblem(await stranger.key.get(`/teams/${team.id}`), 404, 'not-found');
    assert.deepEqual((await stranger.key.get('/teams')).body.items, []);
    const members = await member.key.get(`/teams/${team.id}/members`);
    assert.deepEqual(members.body.items.map((m: { role: string }) => m.role), ['admin', 'admin']);
  });

  test('rename and delete need If-Match and team admin; viewers get 403', async () => {
    const team = await owner.key.post('/teams', { org_id: org.id, name: 'Renamable' });
    await owner.key.put(`/teams/${team.body.id}/members/${member.id}`, { role: 'viewer' });
    assertProblem(await member.key.patch(`/teams/${team.body.id}`, { name: 'Nope' }, ifMatch(team)), 403, 'forbidden');
    assertProblem(await owner.key.patch(`/teams/${team.body.id}`, { name: 'Renamed' }), 428, 'precondition-required');
    const renamed = await owner.key.patch(`/teams/${team.body.id}`, { name: 'Renamed' }, ifMatch(team));
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Renamed');
    assertProblem(await owner.key.delete(`/teams/${team.body.id}`, ifMatch(team)), 412, 'precondition-failed');
    assert.equal((await owner.key.delete(`/teams/${team.body.id}`, ifMatch(renamed))).status, 204);
    assertProblem(await owner.key.get(`/teams/${team.body.id}`), 404, 'not-found');
  });

  test('members can leave a team themselves; removing an absent member is 404', async () => {
    const team = (await owner.key.post('/teams', { org_id: org.id, name: 'Leavable' })).body;
    await owner.key.put(`/teams/${team.id}/members/${member.id}`, { role: 'developer' });
    assert.equal((await member.key.delete(`/teams/${team.id}/members/${member.id}`)).status, 204);
    assertProblem(await member.key.get(`/teams/${team.id}`), 404, 'not-found');
    assertProblem(await owner.key.delete(`/teams/${team.id}/members/${member.id}`), 404, 'not-found');
  });

  test('the team list filters by org and pages', async () => {
    const other = (await owner.key.post('/orgs', { name: 'Other Org' })).body;
    await owner.key.post('/teams', { org_id: other.id, name: 'One' });
    await owner.key.post('/teams', { org_id: other.id, name: 'Two' });
    const first = await owner.key.get(`/teams?org=${other.id}&limit=1`);
    assert.equal(first.body.items.length, 1);
    const second = await owner.key.get(`/teams?org=${other.id}&limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    assert.deepEqual([...first.body.items, ...second.body.items].map((t: { name: string }) => t.name), ['One', 'Two']);
    assert.equal(second.body.next_cursor, undefined);
  });

  test('administrators see every org and team', async () => {
    const orgs = await server.admin.get('/orgs?limit=200');
    assert.ok(orgs.body.items.length >= 3);
    for (const o of orgs.body.items) assert.ok(o.permissions.includes('org.delete'));
  });
});
