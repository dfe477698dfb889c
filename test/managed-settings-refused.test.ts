// An instance whose deployed settings the installation no longer accepts (spec 3.4 `invalid-provider`, issue 14): a
// real `svc` server whose plans file offers postgres plans small and medium creates `db` on medium; restarted with a
// plans file that dropped medium, db shows invalid-provider with the setting and why (managed_service.updated), keeps
// running with its row, Plan refuses the file as it stands, and a Sync of the file on plan small brings it back.
// Needs root (the service network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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

const svcYml = (plan: string) => `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    plan: ${plan}
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
`;

const postgresPlan = (id: string, memory: number) => `      ${id}:
        resources:
          cpu: { value: 500, min: 250, max: 2000 }
          memory: { value: ${memory}, min: 128, max: 2048 }
          storage: { value: 1024, min: 512, max: 8192 }
          connections: { value: 50, min: 10, max: 200 }
`;
const plansFile = (postgresPlans: string) => `workspace:
  default: standard
  plans:
    standard: { cpu: 2, memory: 4GiB, storageGib: 10 }
service:
  default: standard
  plans:
    standard: { cpu: 1, memory: 1GiB, maxReplicas: 10 }
managed:
  postgres:
    default: small
    plans:
${postgresPlans}`;

let database: TestDatabase;
let dataDir: string;
let tools: string;
let plans: string;
let repository: BareRepository;
let running: SvcProcess | undefined;
let ws: number | undefined;

before(async () => {
  if (skip) return;
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-settings-'));
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(postgresToolsDir, 'postgres'), path.join(tools, 'postgres'));
  plans = path.join(tools, 'plans.yml');
  repository = await createBareRepository({ 'svc.yml': svcYml('medium'), 'web.js': sqlWebJs });
});

after(async () => {
  if (skip) return;
  await stopSvc(running);
  await removeWorkspaces(createLocalDriver({ dataDir }), [ws]);
  await removeManagedInstances(dataDir);
  await repository?.remove();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
  await rm(tools, { recursive: true, force: true });
});

/** Starts `svc server` on the same database and data directory with the plans file as it is now. */
async function start(): Promise<string> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--data-plane', 'node', '--allow-local-repositories', 'true'], {
    DATABASE_URL: database.url, SVC_TOOLS_DIR: tools, SVC_PLANS_FILE: plans,
  });
  const [, url] = await running.waitFor(/listening on (\S+)\n/, 60_000);
  return url;
}

async function query<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
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

test('a plan the plans file dropped makes the instance invalid-provider at the restart; it keeps its data and a Sync brings it back', { skip }, async () => {
  await writeFile(plans, plansFile(postgresPlan('small', 256) + postgresPlan('medium', 512)));
  const first = await start();
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  await query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const admin = await new ApiClient(first).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await admin.mintKey();
  const org = (await key.post('/orgs', { name: 'Settings' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Settings' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'settings', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  await sync(key);
  const instance = async (client: ApiClient) => (await client.get(`/teams/${team}/managed-services?workspace=${ws}`)).body.items[0];
  const made = await instance(key);
  assert.deepEqual([made.plan, made.status, made.resources.memory], ['medium', 'synchronized', 512]);
  assert.equal(await ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');
  await stopSvc(running);
  const [{ last }] = await query<{ last: string }>('SELECT coalesce(max(id), 0) AS last FROM events');

  // The operator drops plan medium: at the start db is invalid-provider, saying which setting and why.
  await writeFile(plans, plansFile(postgresPlan('small', 256)));
  const second = new ApiClient(await start(), { token: key.auth.token });
  // The health check runs when the server starts, before it listens; waiting costs nothing when it has.
  const refused = await until(async () => {
    const shown = await instance(second);
    return shown.status === 'invalid-provider' ? shown : undefined;
  }, 'db to be invalid-provider');
  assert.equal(
    refused.details.reason,
    'its settings are no longer accepted by this installation: plan "medium" of service db is not a plan of provider postgres any more; choose small; ' +
      'its data is kept, and a Sync with settings this installation accepts brings it back',
  );
  const events = await query<{ payload: { managed_service_id: string; team_id: number } }>("SELECT payload FROM events WHERE type = 'managed_service.updated' AND id > $1", [last]);
  assert.deepEqual(events.map((e) => [e.payload.managed_service_id, e.payload.team_id]), [[made.id, team]]);
  // Nothing was stopped or deleted: db still answers with its row.
  assert.equal(await ask('SELECT body FROM notes'), 'kept');
  const landscape = (await second.get(`/workspaces/${ws}/landscape`)).body.services.find((s: { name: string }) => s.name === 'db');
  assert.equal(landscape.status, 'failure');

  // The file as it stands names the dropped plan: Plan refuses it with its place.
  const stale = await second.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(stale.status, 422, stale.text);
  assert.deepEqual(stale.body.errors.map((e: { code: string; pointer: string; line: number }) => [e.code, e.pointer, e.line]), [['unknown-plan', '/services/db/plan', 7]]);

  // The file on plan small: Sync brings db back, its row kept.
  await writeFile(path.join(dataDir, 'volumes', String(ws), 'svc.yml'), svcYml('small'));
  await sync(second);
  const back = await instance(second);
  assert.deepEqual([back.status, back.plan, back.resources.memory, back.details.reason], ['synchronized', 'small', 256, undefined]);
  assert.equal(await ask('SELECT body FROM notes'), 'kept');

  // The purge deletes the instance and its data.
  const shown = await second.get(`/workspaces/${ws}`);
  const deleted = await second.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(second, deleted.body.id)).state, 'succeeded');
  assert.equal((await operationFinished(second, (await second.post(`/workspaces/${ws}/purge`)).body.id)).state, 'succeeded');
});
