// Workspace environment variables and the vault of secrets, over HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let outsider: ApiClient;
let ws: number;

before(async () => {
  server = await startTestServer();
  const owner = await createPerson(server.admin, 'vars-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Vars' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Vars' })).body.id;
  const developer = await createPerson(server.admin, 'vars-dev@example.com');
  const watcher = await createPerson(server.admin, 'vars-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  outsider = (await createPerson(server.admin, 'vars-outsider@example.com')).key;
  // Variables need no running workspace: a record is enough.
  ws = (
    await insertWorkspace(server.server.database.pool, {
      teamId: team, name: 'vars', plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
      idleTimeoutMinutes: 30, state: 'sleeping', statusDetail: 'Asleep', createdBy: developer.id, at: new Date(),
    })
  ).id;
});
after(async () => server?.close());

test('variables: set, overwrite, list in name order, delete', async () => {
  const set = await dev.put(`/workspaces/${ws}/variables/NODE_ENV`, { value: 'development' });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.body.value, 'development');
  await dev.put(`/workspaces/${ws}/variables/API_URL`, { value: 'http://localhost:3000' });
  await dev.put(`/workspaces/${ws}/variables/NODE_ENV`, { value: 'test' });
  const list = await viewer.get(`/workspaces/${ws}/variables`);
  assert.deepEqual(list.body.items.map((v: { name: string; value: string }) => [v.name, v.value]), [
    ['API_URL', 'http://localhost:3000'],
    ['NODE_ENV', 'test'],
  ]);
  assert.equal((await dev.delete(`/workspaces/${ws}/variables/API_URL`)).status, 204);
  assertProblem(await dev.delete(`/workspaces/${ws}/variables/API_URL`), 404, 'not-found');
});

test('names follow the env rules; SVC_ is reserved', async () => {
  for (const name of ['1ABC', 'WITH-DASH', 'x'.repeat(129)]) {
    assertProblem(await dev.put(`/workspaces/${ws}/variables/${name}`, { value: 'v' }), 422, 'validation');
  }
  const reserved = await dev.put(`/workspaces/${ws}/variables/SVC_TOKEN`, { value: 'v' });
  assertProblem(reserved, 422, 'validation');
  assert.match(reserved.body.detail, /reserved/);
});

test('secrets: values go in, never out; stored encrypted', async () => {
  const set = await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'correct horse' });
  assert.equal(set.status, 200, set.text);
  assert.deepEqual(Object.keys(set.body).sort(), ['created_at', 'name', 'updated_at']);
  const list = await viewer.get(`/workspaces/${ws}/secrets`);
  assert.equal(list.status, 200);
  assert.ok(list.body.vault_id >= 1);
  assert.deepEqual(list.body.items.map((s: { name: string }) => s.name), ['DB_PASSWORD']);
  assert.ok(!list.text.includes('correct horse'));
  const stored = await server.server.database.pool.query('SELECT ciphertext FROM vault_secrets');
  assert.ok(stored.rows.every((row) => !Buffer.from(row.ciphertext).includes(Buffer.from('correct horse'))));
  assert.equal((await dev.delete(`/workspaces/${ws}/secrets/DB_PASSWORD`)).status, 204);
  assertProblem(await dev.delete(`/workspaces/${ws}/secrets/DB_PASSWORD`), 404, 'not-found');
});

test('viewers read, only developers and up change; outsiders see nothing', async () => {
  assertProblem(await viewer.put(`/workspaces/${ws}/variables/X`, { value: '1' }), 403, 'forbidden');
  assertProblem(await viewer.put(`/workspaces/${ws}/secrets/X`, { value: '1' }), 403, 'forbidden');
  assertProblem(await outsider.get(`/workspaces/${ws}/variables`), 404, 'not-found');
  assertProblem(await outsider.get(`/workspaces/${ws}/secrets`), 404, 'not-found');
});
