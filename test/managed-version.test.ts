// An instance keeps the version it was created with when the catalog's default moves (spec 3.4): a real `svc`
// server whose operator turned postgres 17 off creates `db` (no providerVersion in the file) on the default, 16;
// restarted with 17 on again, the default is 17, yet Plan changes nothing of db and Sync keeps it on 16 with its row.
// Needs root (the service network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiClient } from './helpers/client.ts';
import { managedSkip as skip, webService } from './helpers/managed-landscape.ts';
import { prepareManagedRestarts, type ManagedRestarts } from './helpers/managed-restarts.ts';
import { operationFinished } from './helpers/wait.ts';

// No providerVersion and no secrets: db gets the catalog's default and a generated password.
const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
${webService}`;

let fixture: ManagedRestarts | undefined;

before(async () => {
  if (!skip) fixture = await prepareManagedRestarts('managed-version', { 'svc.yml': svcYml });
});

after(() => fixture?.close());

test('created on the default 16, the instance stays on 16 after the operator turns 17 on and the default moves', { skip }, async () => {
  const f = fixture!;
  const key = await f.adminKey(await f.startProcess({ SVC_MANAGED_DISABLE: 'postgres:17' }));
  const defaultVersion = async (client: ApiClient) => (await client.get('/providers')).body.items.find((p: { name: string }) => p.name === 'postgres').default_version;
  assert.equal(await defaultVersion(key), '16');
  const { ws } = await f.createWorkspace(key, 'Versions', 'versions');
  const instance = f.instance;
  assert.deepEqual([(await instance(key)).version, (await instance(key)).status], ['16', 'synchronized']);
  assert.equal(await f.ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');

  await f.stopProcess();
  const second = new ApiClient(await f.startProcess({ SVC_MANAGED_DISABLE: '' }), { token: key.auth.token });
  assert.equal(await defaultVersion(second), '17');
  const plan = await second.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual([plan.body.changed, plan.body.services], [false, []]);
  await f.sync(second);
  const kept = await instance(second);
  assert.deepEqual([kept.version, kept.status, kept.details.version], ['16', 'synchronized', '16']);
  assert.match(await f.ask('SHOW server_version'), /^16\./);
  assert.equal(await f.ask('SELECT body FROM notes'), 'kept');

  // The purge deletes the instance and its data (its process ends with it).
  const shown = await second.get(`/workspaces/${ws}`);
  const deleted = await second.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(second, deleted.body.id)).state, 'succeeded');
  assert.equal((await operationFinished(second, (await second.post(`/workspaces/${ws}/purge`)).body.id)).state, 'succeeded');
});
