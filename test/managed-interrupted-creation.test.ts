// A server killed (kill -9) while a Sync creates a managed PostgreSQL, during its initdb (held halfway by the test
// hook SVC_TEST_HOLD_INITDB, once initdb wrote PG_VERSION and before the cluster has its databases): a new server
// and a Sync end with a working instance that `web` connects to and queries, never with a Sync that succeeded over an
// instance that does not serve. Needs root and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { INITDB_DIR, INITDB_HELD_FILE } from '../src/managed/postgres-rules.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { managedSkip as skip, postgresToolsDir, removeManagedInstances, sqlWebJs } from './helpers/managed-landscape.ts';
import { startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
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
const ids: number[] = [];

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-initdb-kill-'));
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-initdb-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(postgresToolsDir, 'postgres'), path.join(tools, 'postgres'));
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': sqlWebJs });
});

after(async () => {
  if (skip) return;
  await stopSvc(running);
  await removeWorkspaces(createLocalDriver({ dataDir }), ids);
  await removeManagedInstances(dataDir);
  await database?.drop();
  await repository?.remove();
  await rm(dataDir, { recursive: true, force: true });
  await rm(tools, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}): Promise<string> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir], {
    DATABASE_URL: database.url,
    SVC_TOOLS_DIR: tools,
    SVC_DATA_PLANE: 'node',
    SVC_ALLOW_LOCAL_REPOSITORIES: 'true',
    ...env,
  });
  return (await running.waitFor(/listening on (\S+)\n/))[1];
}

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The held initdb's announcement in some instance's directory, once it is there. */
async function heldInitdb(): Promise<string | undefined> {
  const root = path.join(dataDir, 'managed');
  for (const id of await readdir(root).catch(() => [] as string[])) {
    if (existsSync(path.join(root, id, INITDB_DIR, INITDB_HELD_FILE))) return path.join(root, id);
  }
  return undefined;
}

test('kill -9 during initdb of a new managed postgres, start again: a Sync ends with a working instance', { skip }, async () => {
  const first = await start({ SVC_TEST_HOLD_INITDB: '1' });
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  await query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const session = await new ApiClient(first).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await session.mintKey();
  const org = (await key.post('/orgs', { name: 'Initdb' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Initdb' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'initdb', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  const ws = Number(created.body.target.split('/')[2]);
  ids.push(ws);
  assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  const plan = await key.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const sync = await key.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(sync.status, 202, sync.text);

  const instanceDir = await until(heldInitdb, 'initdb to be held halfway', 120_000);
  running!.child.kill('SIGKILL');
  await running!.exited;
  const [cut] = await query<{ state: string }>('SELECT state FROM operations WHERE id = $1', [sync.body.id]);
  assert.equal(cut.state, 'running', 'the Sync was cut off while running');
  assert.ok(existsSync(path.join(instanceDir, INITDB_DIR, 'PG_VERSION')), 'initdb had begun writing the cluster');

  const second = await start();
  const again = new ApiClient(second, key.auth);
  // The cut-off Sync ends; whatever its end, it never succeeded over an instance that does not serve.
  const resumed = await operationFinished(again, sync.body.id);
  const [instance] = (await again.get(`/teams/${team}/managed-services?workspace=${ws}`)).body.items;
  if (resumed.state === 'succeeded') assert.equal(instance.status, 'synchronized', JSON.stringify(instance));
  else assert.ok(resumed.error?.type, JSON.stringify(resumed));

  // A Sync as a user makes it now: it succeeds, the instance is synchronized and web connects to it and queries it.
  const next = await again.get(`/workspaces/${ws}/landscape/plan`).then((answer) => again.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: answer.body.hash }));
  assert.equal(next.status, 202, next.text);
  const done = await operationFinished(again, next.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  const shown = (await again.get(`/managed-services/${instance.id}`)).body;
  assert.equal(shown.status, 'synchronized', JSON.stringify(shown));
  assert.equal(existsSync(path.join(instanceDir, INITDB_DIR)), false, 'what the cut-off initdb left is gone');
  const driver = createLocalDriver({ dataDir });
  const ask = (sql: string) =>
    until(async () => {
      const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
      if (!web?.address) return undefined;
      const answer = await fetch(`http://${web.address.host}:8080/?sql=${encodeURIComponent(sql)}`).catch(() => undefined);
      return answer?.status === 200 ? answer.text() : undefined;
    }, `web to answer ${sql}`);
  assert.equal(await ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');
  assert.equal(await ask('SELECT body FROM notes'), 'kept');
  assert.equal(await ask('SELECT current_database()'), 'app');
});
