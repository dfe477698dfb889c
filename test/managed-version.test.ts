// An instance keeps the version it was created with when the catalog's default moves (spec 3.4): a real `svc`
// server whose operator turned postgres 17 off creates `db` (no providerVersion in the file) on the default, 16;
// restarted with 17 on again, the default is 17, yet Plan changes nothing of db and Sync keeps it on 16 with its row.
// Needs root (the service network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { after, before, test } from 'node:test';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { managedSkip as skip, postgresToolsDir, removeManagedInstances, sqlWebJs } from './helpers/managed-landscape.ts';
import { startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

// No providerVersion and no secrets: db gets the catalog's default and a generated password.
const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
`;


let database: TestDatabase;
let dataDir: string;
let tools: string;
let repository: BareRepository;
let running: SvcProcess | undefined;
let ws: number | undefined;

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-version-'));
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(postgresToolsDir, 'postgres'), path.join(tools, 'postgres'));
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': sqlWebJs });
});

after(async () => {
  if (skip) return;
  await stopSvc(running);
  await removeWorkspaces(createLocalDriver({ dataDir }), [ws]);
  await removeManagedInstances(dataDir); // the test purges the workspace; this is for a test that failed before
  await repository?.remove();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(tools, { recursive: true, force: true });
});

/** Starts `svc server` on the same database and data directory, with `disabled` turned off in the catalog. */
async function start(disabled: string): Promise<string> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--data-plane', 'node', '--allow-local-repositories', 'true'], {
    DATABASE_URL: database.url, SVC_TOOLS_DIR: tools, SVC_MANAGED_DISABLE: disabled,
  });
  const [, url] = await running.waitFor(/listening on (\S+)\n/, 60_000);
  return url;
}

async function offsetWorkspaceIds(): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  await client.end();
}

async function sync(key: ApiClient): Promise<void> {
  const plan = await key.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await key.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await operationFinished(key, started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

/** What the database answers to `sql`, asked by web through its DSN. */
function ask(sql: string): Promise<string> {
  const driver = createLocalDriver({ dataDir });
  return until(async () => {
    const web = (await driver.replicaStates({ id: ws!, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const answer = await fetch(`http://${web.address.host}:8080/?sql=${encodeURIComponent(sql)}`).catch(() => undefined);
    return answer?.status === 200 ? answer.text() : undefined;
  }, `the database to answer ${sql}`);
}

test('created on the default 16, the instance stays on 16 after the operator turns 17 on and the default moves', { skip }, async () => {
  const first = await start('postgres:17');
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  await offsetWorkspaceIds();
  const admin = await new ApiClient(first).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await admin.mintKey();
  const defaultVersion = async (client: ApiClient) => (await client.get('/providers')).body.items.find((p: { name: string }) => p.name === 'postgres').default_version;
  assert.equal(await defaultVersion(key), '16');
  const org = (await key.post('/orgs', { name: 'Versions' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Versions' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'versions', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  await sync(key);
  const instance = async (client: ApiClient) => (await client.get(`/teams/${team}/managed-services?workspace=${ws}`)).body.items[0];
  assert.deepEqual([(await instance(key)).version, (await instance(key)).status], ['16', 'synchronized']);
  assert.equal(await ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');

  await stopSvc(running);
  const second = new ApiClient(await start(''), { token: key.auth.token });
  assert.equal(await defaultVersion(second), '17');
  const plan = await second.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual([plan.body.changed, plan.body.services], [false, []]);
  await sync(second);
  const kept = await instance(second);
  assert.deepEqual([kept.version, kept.status, kept.details.version], ['16', 'synchronized', '16']);
  assert.match(await ask('SHOW server_version'), /^16\./);
  assert.equal(await ask('SELECT body FROM notes'), 'kept');

  // The purge deletes the instance and its data (its process ends with it).
  const shown = await second.get(`/workspaces/${ws}`);
  const deleted = await second.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(second, deleted.body.id)).state, 'succeeded');
  assert.equal((await operationFinished(second, (await second.post(`/workspaces/${ws}/purge`)).body.id)).state, 'succeeded');
});
