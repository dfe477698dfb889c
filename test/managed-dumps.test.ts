// Dumps of a managed PostgreSQL 16 bound to real landscapes, through the running server: a row written by a `steps`
// service, a dump made by POST (an operation ending in a downloadable pg_dump file), listed and downloaded; a second
// workspace's fresh instance restored from it has the row; the nightly chore dumps where `backups` allows and keeps
// the newest 7; what cannot be done is refused with a problem (a paused instance, a viewer, an outsider, a bad
// dump). Needs root, scripts/setup-postgres.sh's PostgreSQL 16 and scripts/setup-pg-client.sh's client tools.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { DAY } from '../src/core/clock.ts';
import { queueNightlyDumps } from '../src/managed/backups.ts';
import { managedCatalog } from '../src/managed/catalog.ts';
import { dumpFile } from '../src/managed/dumps.ts';
import { findPgClientTools } from '../src/managed/pg-client.ts';
import { installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { insertManagedDump, type ManagedDumpRow } from '../src/store/managed-dumps.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { removeManagedInstances } from './helpers/managed-landscape.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const skip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : !(await installedPostgresMajors(toolsDir)).includes(16)
      ? `PostgreSQL 16 is not installed in ${toolsDir}; run scripts/setup-postgres.sh`
      : !(await findPgClientTools(toolsDir))
        ? `the PostgreSQL client tools are not installed in ${toolsDir}; run scripts/setup-pg-client.sh`
        : false;

const svcYml = (backups = '') => `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    secrets:
      password: \${{ secrets.DB_PASSWORD }}${backups}
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
`;
const webJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
const sql = { '/write': "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')", '/': "SELECT string_agg(body, ',') FROM notes" };
http.createServer((req, res) => {
  execFile('psql', [process.env.DSN, '-tAc', sql[req.url] ?? 'SELECT 1'], (error, stdout, stderr) => {
    res.statusCode = error ? 500 : 200;
    res.end(error ? stderr || error.message : stdout.trim());
  });
}).listen(8080, '0.0.0.0');
`;

let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let outsider: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let tools: string;
let team: number;
const workspaces: Record<'a' | 'b', number> = { a: 0, b: 0 };
const finished = (operationId: string) => operationFinished(dev, operationId);

before(async () => {
  if (skip) return;
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-dump-tools-'));
  await chmod(tools, 0o755);
  await symlink(path.join(toolsDir, 'postgres'), path.join(tools, 'postgres'));
  await symlink(path.join(toolsDir, 'pg-client'), path.join(tools, 'pg-client'));
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TOOLS_DIR: tools },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'dump-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Dumps' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Dumps' })).body.id;
  for (const [email, role] of [['dump-dev@example.com', 'developer'], ['dump-viewer@example.com', 'viewer']] as const) {
    const person = await createPerson(server.admin, email);
    await owner.key.put(`/teams/${team}/members/${person.id}`, { role });
    if (role === 'developer') dev = person.key;
    else viewer = person.key;
  }
  outsider = (await createPerson(server.admin, 'dump-outsider@example.com')).key;
  repository = await createBareRepository({ 'svc.yml': svcYml(), 'web.js': webJs });
  for (const name of ['a', 'b'] as const) {
    const created = await dev.post('/workspaces', { team_id: team, name: `dumps-${name}`, storage_gib: 1, git: { provider: 'git', repo: repository.url } });
    assert.equal(created.status, 202, created.text);
    workspaces[name] = Number(created.body.target.split('/')[2]);
    assert.equal((await finished(created.body.id)).state, 'succeeded');
    await dev.put(`/workspaces/${workspaces[name]}/secrets/DB_PASSWORD`, { value: `password of ${name}` });
  }
  // b asks for no nightly backups.
  await writeFile(path.join(server.server.config.dataDir, 'volumes', String(workspaces.b), 'app', 'svc.yml'), svcYml('\n    backups: false'));
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [workspaces.a, workspaces.b]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
  await rm(tools, { recursive: true, force: true });
});

async function sync(ws: number): Promise<void> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

/** web's answer for `urlPath` (status and text) once it answers. */
async function ask(ws: number, urlPath: string): Promise<{ status: number; text: string }> {
  return until(async () => {
    const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const answer = await fetch(`http://${web.address.host}:8080${urlPath}`).catch(() => undefined);
    return answer && { status: answer.status, text: await answer.text() };
  }, `web of workspace ${ws} to answer ${urlPath}`);
}

const instanceOf = async (ws: number) =>
  (await server.server.database.pool.query<{ id: string }>('SELECT id FROM managed_services WHERE workspace_id = $1 AND deleted_at IS NULL', [ws])).rows[0].id;

let dumpId: string;

test('a dump of a landscape\'s postgres is an operation ending in a pg_dump file that is listed and downloads', { skip }, async () => {
  await sync(workspaces.a);
  assert.deepEqual(await ask(workspaces.a, '/write'), { status: 200, text: 'CREATE TABLE\nINSERT 0 1' });
  const ms = await instanceOf(workspaces.a);

  assertProblem(await viewer.post(`/managed-services/${ms}/dumps`), 403, 'forbidden');
  assertProblem(await outsider.post(`/managed-services/${ms}/dumps`), 404, 'not-found');
  assertProblem(await dev.post(`/managed-services/${randomUUID()}/dumps`), 404, 'not-found');

  const started = await dev.post(`/managed-services/${ms}/dumps`);
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.kind, 'managed_service.dump');
  assert.equal(started.body.target, `/managed-services/${ms}`);
  assert.equal(started.headers.get('location'), `/api/v1/operations/${started.body.id}`);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));

  const listed = await viewer.get(`/managed-services/${ms}/dumps`);
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.body.items.length, 1);
  const [dump] = listed.body.items;
  assert.deepEqual({ ...dump, id: undefined, created_at: undefined, size_bytes: undefined }, {
    id: undefined, managed_service_id: ms, team_id: team, provider: 'postgres', version: '16', kind: 'manual', format: 'pg_dump custom format',
    media_type: 'application/octet-stream', operation_id: started.body.id, created_at: undefined, size_bytes: undefined,
  });
  assert.match(done.detail, new RegExp(`/api/v1/managed-services/${ms}/dumps/${dump.id}`));
  dumpId = dump.id;

  assertProblem(await viewer.get(`/managed-services/${ms}/dumps/${dumpId}`), 403, 'forbidden');
  assertProblem(await outsider.get(`/managed-services/${ms}/dumps`), 404, 'not-found');
  const download = await fetch(`${server.url}/api/v1/managed-services/${ms}/dumps/${dumpId}`, { headers: { authorization: `Bearer ${dev.auth.token}` } });
  assert.equal(download.status, 200);
  assert.match(download.headers.get('content-disposition') ?? '', /^attachment; filename="db-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.dump"$/);
  const bytes = Buffer.from(await download.arrayBuffer());
  assert.equal(bytes.length, dump.size_bytes);
  assert.equal(bytes.subarray(0, 5).toString(), 'PGDMP');
});

test('a second workspace\'s fresh instance restored from the dump has the row', { skip }, async () => {
  await sync(workspaces.b);
  const ms = await instanceOf(workspaces.b);
  assert.equal((await ask(workspaces.b, '/')).status, 500, 'a fresh database has no notes');

  assertProblem(await viewer.post(`/managed-services/${ms}/restore`, { dump: dumpId }), 403, 'forbidden');
  const unknown = await dev.post(`/managed-services/${ms}/restore`, { dump: randomUUID() });
  assertProblem(unknown, 422, 'validation');
  assert.deepEqual(unknown.body.errors, [{ pointer: '/dump', message: 'is no dump you may see' }]);
  assertProblem(await dev.post(`/managed-services/${ms}/restore`, { dump: 'nope' }), 422, 'validation');

  const started = await dev.post(`/managed-services/${ms}/restore`, { dump: dumpId });
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.kind, 'managed_service.restore');
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.deepEqual(await ask(workspaces.b, '/'), { status: 200, text: 'kept' });
});

test('the nightly chore dumps where backups allow and keeps the newest 7', { skip }, async () => {
  const a = await instanceOf(workspaces.a);
  const dataDir = server.server.config.dataDir;
  // Seven older nightly dumps of a, one a night.
  const now = server.clock.now();
  const old: ManagedDumpRow[] = [];
  for (let night = 7; night >= 1; night--) {
    const row: ManagedDumpRow = {
      id: randomUUID(), managed_service_id: a, team_id: team, provider: 'postgres', version: '16', kind: 'nightly', format: 'pg_dump custom format',
      extension: '.dump', media_type: 'application/octet-stream', size_bytes: 5, operation_id: null, created_by: null, created_at: new Date(now.getTime() - night * DAY),
    };
    await mkdir(path.dirname(dumpFile(dataDir, row)), { recursive: true });
    await writeFile(dumpFile(dataDir, row), 'PGDMP');
    old.push(await insertManagedDump(server.server.database.pool, row));
  }
  // The chore as the server runs it, the next night (the server's own clock stands still: its chore queues nothing,
  // as a new instance waits for its first night).
  const deps = {
    pool: server.server.database.pool, driver, catalog: managedCatalog(), now: () => new Date(server.clock.nowMs() + DAY),
    host: { dataDir, toolsDir: server.server.config.toolsDir, log: () => undefined },
  };
  assert.deepEqual(await queueNightlyDumps(deps), [a], 'b says backups: false');
  const nightly = await until(async () => {
    const items = (await dev.get(`/managed-services/${a}/dumps?limit=200`)).body.items.filter((d: { kind: string }) => d.kind === 'nightly');
    return items.some((d: { id: string }) => !old.some((o) => o.id === d.id)) ? items : undefined;
  }, 'the nightly dump');
  assert.equal(nightly.length, 7);
  assert.ok(!nightly.some((d: { id: string }) => d.id === old[0].id), 'the oldest nightly dump went');
  assert.equal(existsSync(dumpFile(dataDir, old[0])), false, 'with its file');
  assert.equal(existsSync(dumpFile(dataDir, old[1])), true);
  await until(async () => ((await dev.get(`/operations?team=${team}&active=true`)).body.items.length === 0 ? true : undefined), 'the nightly dump to end');
});

test('a paused instance is neither dumped nor restored; a deleted dump is gone', { skip }, async () => {
  const a = await instanceOf(workspaces.a);
  const teardown = await dev.post(`/workspaces/${workspaces.a}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  assertProblem(await dev.post(`/managed-services/${a}/dumps`), 409, 'managed-service-paused');
  assertProblem(await dev.post(`/managed-services/${a}/restore`, { dump: dumpId }), 409, 'managed-service-paused');

  assertProblem(await viewer.delete(`/managed-services/${a}/dumps/${dumpId}`), 403, 'forbidden');
  const deleted = await dev.delete(`/managed-services/${a}/dumps/${dumpId}`);
  assert.equal(deleted.status, 204, deleted.text);
  assertProblem(await dev.get(`/managed-services/${a}/dumps/${dumpId}`), 404, 'not-found');
  assertProblem(await dev.delete(`/managed-services/${a}/dumps/${dumpId}`), 404, 'not-found');
  const listed = (await dev.get(`/managed-services/${a}/dumps`)).body.items;
  assert.ok(!listed.some((d: { id: string }) => d.id === dumpId));
});
