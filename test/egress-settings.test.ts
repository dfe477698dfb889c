// The egress settings of a team and of a workspace (docs/runtime.md, "The pod network"): read by who sees the team,
// changed by its admins; a workspace's own in create and PATCH; each workspace shows its own and its team's, which
// follows the team at once (migration 044), and the runtime gets `off` when either is off.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { workspaceRef } from '../src/workspaces/operations.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { operationFinished } from './helpers/wait.ts';

let server: TestServer;
let owner: { session: ApiClient; key: ApiClient; id: number };
let developer: { session: ApiClient; key: ApiClient; id: number };
let team: number;
const workspaces: number[] = [];

before(async () => {
  server = await startTestServer();
  owner = await createPerson(server.admin, 'egress-owner@example.com');
  developer = await createPerson(server.admin, 'egress-dev@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Egress Org' })).body;
  team = (await owner.key.post('/teams', { org_id: org.id, name: 'Egress Team' })).body.id;
  assert.equal((await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' })).status, 204);
});
after(async () => {
  if (server) await removeWorkspaces(server.server.driver, workspaces);
  await server?.close();
});

test("a team's egress: on by default, turned off by its admin (not a developer), shown on its workspaces", async () => {
  assert.deepEqual((await developer.key.get(`/teams/${team}/network-settings`)).body, { egress: 'on' });
  const created = await owner.key.post('/workspaces', { team_id: team, name: 'egress-a', egress: 'off' });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  const createdOther = await owner.key.post('/workspaces', { team_id: team, name: 'egress-b' });
  const other = Number(createdOther.body.target.split('/')[2]);
  workspaces.push(id, other);
  // the creates end first: a create still running changes the workspace (its ETag) under the PATCH below
  for (const operation of [created, createdOther]) assert.equal((await operationFinished(owner.key, operation.body.id)).state, 'succeeded');
  const shown = async (ws: number) => {
    const body = (await owner.key.get(`/workspaces/${ws}`)).body;
    return [body.egress, body.team_egress];
  };
  assert.deepEqual([await shown(id), await shown(other)], [['off', 'on'], ['on', 'on']]);
  assertProblem(await developer.key.put(`/teams/${team}/network-settings`, { egress: 'off' }), 403, 'forbidden');
  assertProblem(await owner.key.put(`/teams/${team}/network-settings`, { egress: 'maybe' }), 422, 'validation');
  assert.deepEqual((await owner.key.put(`/teams/${team}/network-settings`, { egress: 'off' })).body, { egress: 'off' });
  assert.deepEqual([await shown(id), await shown(other)], [['off', 'off'], ['on', 'off']]);
  const listed = (await owner.key.get(`/workspaces?team_id=${team}`)).body.items.map((w: { name: string; egress: string; team_egress: string }) => [w.name, w.egress, w.team_egress]).sort();
  assert.deepEqual(listed, [['egress-a', 'off', 'off'], ['egress-b', 'on', 'off']]);
  const rows = (await server.server.database.pool.query('SELECT * FROM workspaces WHERE team_id = $1 ORDER BY id', [team])).rows;
  assert.deepEqual(rows.map((row) => workspaceRef(row as never).egress), ['off', 'off']);

  await owner.key.put(`/teams/${team}/network-settings`, { egress: 'on' });
  const current = await owner.key.get(`/workspaces/${id}`);
  const patched = await owner.key.patch(`/workspaces/${id}`, { egress: 'on' }, { headers: { 'if-match': current.headers.get('etag')! } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual([patched.body.egress, patched.body.team_egress], ['on', 'on']);
  const again = (await server.server.database.pool.query('SELECT * FROM workspaces WHERE id = $1', [id])).rows;
  assert.equal(workspaceRef(again[0] as never).egress, 'on');
});
