// Changes to a managed PostgreSQL of a real landscape (spec 2.8, 3.4, 9 item 5): the plan's resources and the
// file's config reach the server; Plan says whether Sync restarts it and why; a change within the bounds is applied
// by Sync (a restart for max_connections, a reload for live settings); one outside the bounds or against the update
// constraints is refused at Plan with its place in svc.yml; the instance keeps its version when the file stops
// naming one; a password the file leaves out is generated; the server runs in a cgroup with the plan's CPU (changed
// live) and memory (changed by a restart). Needs root, cgroups and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { managedInstanceDir, readInstanceProcess } from '../src/managed/instance-process.ts';
import { installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import { cgroupNames, hostCgroups } from '../src/runtime/local/cgroups.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { removeManagedInstances, sqlWebJs } from './helpers/managed-landscape.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const cgroups = hostCgroups(process.getuid?.() === 0);
const skip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : !cgroups
      ? 'needs cgroups with the cpu and memory controllers'
    : (await installedPostgresMajors(toolsDir)).includes(16)
      ? false
      : `PostgreSQL 16 is not installed in ${toolsDir}; run scripts/setup-postgres.sh`;

/** svc.yml with db's lines in `db` (after its type and provider); no secrets: its password is generated. */
const svcYml = (db = '    providerVersion: "16"\n    resources:\n      connections: 100\n') => `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
${db}  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
`;


let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let tools: string;
let ws: number;
let volume: string;
const finished = (operationId: string) => operationFinished(dev, operationId);

before(async () => {
  if (skip) return;
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(toolsDir, 'postgres'), path.join(tools, 'postgres'));
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TOOLS_DIR: tools },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'changes-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Changes' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Changes' })).body.id;
  dev = owner.key;
  repository = await createBareRepository({ 'svc.yml': svcYml(), 'web.js': sqlWebJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'changes', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  volume = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app');
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [ws]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
  await rm(tools, { recursive: true, force: true });
});

const plan = () => dev.get(`/workspaces/${ws}/landscape/plan`);

async function sync(): Promise<void> {
  const planned = await plan();
  assert.equal(planned.status, 200, planned.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: planned.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

/** What the database answers to `sql`, asked by web through its DSN (once web answers: it starts after a Sync). */
async function ask(sql: string): Promise<string> {
  return until(async () => {
    const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const answer = await fetch(`http://${web.address.host}:8080/?sql=${encodeURIComponent(sql)}`).catch(() => undefined);
    if (!answer) return undefined;
    const text = await answer.text();
    return answer.status === 200 ? text : undefined;
  }, `the database to answer ${sql}`);
}

const instance = async () => {
  const { rows } = await server.server.database.pool.query<{ id: string }>('SELECT id FROM managed_services WHERE workspace_id = $1 AND deleted_at IS NULL', [ws]);
  return (await dev.get(`/managed-services/${rows[0].id}`)).body;
};

const dbChanges = (body: { services: Array<{ name: string; action: string; restarts: boolean; reason?: string }> }) =>
  body.services.map(({ name, action, restarts, reason }) => ({ name, action, restarts, reason }));

/** The instance's cgroup as the kernel has it: memory limit (MiB), CPU quota (thousandths of a core), whether its server is in it. */
async function cgroupOf(): Promise<{ memoryMiB: number; cpuMillis: number; serverInside: boolean } | undefined> {
  const { rows } = await server.server.database.pool.query<{ number: number }>('SELECT number FROM managed_services WHERE workspace_id = $1 AND deleted_at IS NULL', [ws]);
  const name = cgroupNames(server.server.config.dataDir).managed(String(rows[0].number));
  const v1 = cgroups!.version === 1;
  const read = (controller: string, file: string) => readFile(path.join('/sys/fs/cgroup', v1 ? controller : '', name, file), 'utf8').catch(() => undefined);
  const memory = await read('memory', v1 ? 'memory.limit_in_bytes' : 'memory.max');
  if (memory === undefined) return undefined;
  const quota = Number((await read('cpu', v1 ? 'cpu.cfs_quota_us' : 'cpu.max'))!.split(' ')[0]);
  const record = await readInstanceProcess(managedInstanceDir(server.server.config.dataDir, rows[0].number));
  const ofServer = record ? await readFile(`/proc/${record.pid}/cgroup`, 'utf8').catch(() => '') : '';
  return { memoryMiB: Number(memory) / 2 ** 20, cpuMillis: quota / 100, serverInside: ofServer.includes(`${name}\n`) };
}

const placesOf = (body: { errors: Array<Record<string, unknown>> }) => body.errors.map(({ code, pointer, line, column }) => ({ code, pointer, line, column }));

test('a file with no password gets one generated; Sync starts the server with the plan connections and a quarter of its memory', { skip }, async () => {
  await sync();
  const shown = await instance();
  assert.equal(shown.status, 'synchronized');
  assert.deepEqual(shown.resources, { cpu: 500, memory: 512, storage: 1024, connections: 100 });
  assert.equal(await ask('SHOW max_connections'), '100');
  assert.equal(await ask('SHOW shared_buffers'), '128MB');
  assert.equal(await ask('SHOW effective_cache_size'), '384MB');
  // its server runs in a cgroup of its own with the plan's memory and CPU, as pods do
  assert.deepEqual(await cgroupOf(), { memoryMiB: 512, cpuMillis: 500, serverInside: true });
});

test('connections 100 -> 150 within the bounds: Plan says the server restarts and why; Sync restarts it (updating, then synchronized)', { skip }, async () => {
  const startedAt = await ask('SELECT extract(epoch FROM pg_postmaster_start_time())');
  await writeFile(path.join(volume, 'svc.yml'), svcYml('    providerVersion: "16"\n    resources:\n      connections: 150\n'));
  const planned = await plan();
  assert.equal(planned.status, 200, planned.text);
  assert.deepEqual(dbChanges(planned.body), [{ name: 'db', action: 'change', restarts: true, reason: 'the server restarts to apply connections 100 -> 150' }]);
  const events = await EventStream.open(dev);
  const { id } = await instance();
  await sync();
  const updates = [...(await events.until('managed_service.updated', (d) => d.managed_service_id === id)), ...(await events.until('managed_service.updated', (d) => d.managed_service_id === id))];
  events.close();
  assert.equal(updates.filter((e) => e.event === 'managed_service.updated').length, 2, 'updating, then synchronized');
  const shown = await instance();
  assert.equal(shown.status, 'synchronized');
  assert.equal(shown.resources.connections, 150);
  assert.equal(await ask('SHOW max_connections'), '150');
  assert.notEqual(await ask('SELECT extract(epoch FROM pg_postmaster_start_time())'), startedAt);
});

test('a live change (statement_timeout, work_mem, timezone) is no restart: Sync applies it by a reload', { skip }, async () => {
  const startedAt = await ask('SELECT extract(epoch FROM pg_postmaster_start_time())');
  const live = '    providerVersion: "16"\n    resources:\n      connections: 150\n    config:\n      statement_timeout: 5000\n      work_mem: 8\n      timezone: Europe/Berlin\n';
  await writeFile(path.join(volume, 'svc.yml'), svcYml(live));
  assert.deepEqual(dbChanges((await plan()).body), [{ name: 'db', action: 'change', restarts: false, reason: undefined }]);
  await sync();
  assert.equal(await ask('SHOW statement_timeout'), '5s');
  assert.equal(await ask('SHOW work_mem'), '8MB');
  assert.equal(await ask('SHOW timezone'), 'Europe/Berlin');
  assert.equal(await ask('SELECT extract(epoch FROM pg_postmaster_start_time())'), startedAt);
});

test('cpu 500 -> 750 is live: no restart, the cgroup gets its new quota; memory 512 -> 768 restarts the server in a cgroup of 768 MiB', { skip }, async () => {
  const startedAt = await ask('SELECT extract(epoch FROM pg_postmaster_start_time())');
  const config = '    config:\n      statement_timeout: 5000\n      work_mem: 8\n      timezone: Europe/Berlin\n';
  await writeFile(path.join(volume, 'svc.yml'), svcYml(`    providerVersion: "16"\n    resources:\n      connections: 150\n      cpu: 750\n${config}`));
  assert.deepEqual(dbChanges((await plan()).body), [{ name: 'db', action: 'change', restarts: false, reason: undefined }]);
  await sync();
  assert.deepEqual(await cgroupOf(), { memoryMiB: 512, cpuMillis: 750, serverInside: true });
  assert.equal(await ask('SELECT extract(epoch FROM pg_postmaster_start_time())'), startedAt);
  await writeFile(path.join(volume, 'svc.yml'), svcYml(`    providerVersion: "16"\n    resources:\n      connections: 150\n      cpu: 750\n      memory: 768Mi\n${config}`));
  assert.deepEqual(dbChanges((await plan()).body), [{ name: 'db', action: 'change', restarts: true, reason: 'the server restarts to apply memory 512 MiB -> 768 MiB' }]);
  await sync();
  assert.deepEqual(await cgroupOf(), { memoryMiB: 768, cpuMillis: 750, serverInside: true });
  assert.equal(await ask('SHOW shared_buffers'), '192MB');
  assert.deepEqual((await instance()).resources, { cpu: 750, memory: 768, storage: 1024, connections: 150 });
});

test('out of the bounds, against the update constraints, or an unknown secret: refused at Plan with the place in svc.yml', { skip }, async () => {
  const cases: Array<[string, Array<{ code: string; pointer: string; line: number; column: number }>]> = [
    ['    providerVersion: "16"\n    resources:\n      connections: 500\n', [{ code: 'out-of-range', pointer: '/services/db/resources/connections', line: 8, column: 20 }]],
    ['    providerVersion: "16"\n    resources:\n      storage: 512Mi\n', [{ code: 'update-forbidden', pointer: '/services/db/resources/storage', line: 8, column: 16 }]],
    ['    providerVersion: "17"\n', [{ code: 'update-forbidden', pointer: '/services/db/providerVersion', line: 6, column: 22 }]],
    ['    config:\n      locale: C\n', [{ code: 'update-forbidden', pointer: '/services/db/config/locale', line: 7, column: 15 }]],
    ['    secrets:\n      pasword: ${{ secrets.DB_PASSWORD }}\n', [{ code: 'unknown-secret', pointer: '/services/db/secrets/pasword', line: 7, column: 16 }]],
  ];
  for (const [db, expected] of cases) {
    await writeFile(path.join(volume, 'svc.yml'), svcYml(db));
    const answer = await plan();
    assertProblem(answer, 422, 'invalid-landscape');
    assert.deepEqual(placesOf(answer.body), expected, db);
  }
  // A secret the file names that has no value in the vault: the plan names it (a Sync is refused, test/landscape.test.ts).
  await writeFile(path.join(volume, 'svc.yml'), svcYml('    secrets:\n      password: ${{ secrets.DB_PASSWORD }}\n'));
  const missing = await plan();
  assert.equal(missing.status, 200, missing.text);
  assert.deepEqual(missing.body.missing_secrets.map((s: { name: string }) => s.name), ['DB_PASSWORD']);
});

test('after a Teardown the paused instance keeps its constraints; without providerVersion it keeps 16 while the default is 17', { skip }, async () => {
  const teardown = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  assert.equal((await instance()).status, 'paused');
  assert.equal(await cgroupOf(), undefined, 'a paused instance leaves no cgroup');
  await writeFile(path.join(volume, 'svc.yml'), svcYml('    resources:\n      connections: 150\n      storage: 512\n'));
  assert.deepEqual(placesOf((await plan()).body), [{ code: 'update-forbidden', pointer: '/services/db/resources/storage', line: 8, column: 16 }]);
  assert.equal((await dev.get('/providers')).body.items[0].default_version, '17');
  await writeFile(path.join(volume, 'svc.yml'), svcYml('    resources:\n      connections: 150\n'));
  await sync();
  const shown = await instance();
  assert.deepEqual([shown.status, shown.version], ['synchronized', '16']);
  assert.match(await ask('SHOW server_version'), /^16\./);
  // Synced again with nothing changed: the file without a version plans no change to db.
  assert.deepEqual(dbChanges((await plan()).body), []);
});
