// Dumps and restores of managed services whose password svc generates (no `secrets` in the file, the default), as a
// user makes them through the API: a PostgreSQL 16 and a Redis 7 instance of one landscape, each written to by a
// `steps` service, dumped, changed, restored, and read back as they were at the dump. Then a nightly backup that
// fails shows as failed: on the managed service (its `backup`) and by managed_service.updated. Needs root,
// scripts/setup-postgres.sh's PostgreSQL 16, scripts/setup-pg-client.sh's client tools and Debian's redis-server.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { DAY } from '../src/core/clock.ts';
import { queueNightlyDumps } from '../src/managed/backups.ts';
import { managedCatalog } from '../src/managed/catalog.ts';
import { instanceCgroup, managedInstanceDir, stopInstanceProcess } from '../src/managed/instance-process.ts';
import { findPgClientTools } from '../src/managed/pg-client.ts';
import { installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import { installedRedisMajor } from '../src/managed/redis-instance.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { hostCgroups } from '../src/runtime/local/cgroups.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { removeManagedInstances } from './helpers/managed-landscape.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const skip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : !(await installedPostgresMajors(toolsDir)).includes(16)
      ? `PostgreSQL 16 is not installed in ${toolsDir}; run scripts/setup-postgres.sh`
      : !(await findPgClientTools(toolsDir))
        ? `the PostgreSQL client tools are not installed in ${toolsDir}; run scripts/setup-pg-client.sh`
        : (await installedRedisMajor()) !== 7
          ? 'Redis 7 is not installed; apt-get install redis-server'
          : false;

// No `secrets`: svc generates both passwords.
const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
  cache:
    type: managed
    provider: redis
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
      CACHE: \${{ services.cache.dsn }}
`;
// /sql?q=... through psql and the DSN; /redis?c=SET&c=note&c=kept through redis-cli (the password by REDISCLI_AUTH).
const webJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
const cache = new URL(process.env.CACHE);
http.createServer((req, res) => {
  const url = new URL(req.url, 'http://web');
  const done = (error, stdout, stderr) => {
    res.statusCode = error || /^(ERR|WRONGPASS|NOAUTH)/.test(stdout) ? 500 : 200;
    res.end(error ? stderr || error.message : stdout.trim());
  };
  if (url.pathname === '/sql') return execFile('psql', [process.env.DSN, '-tAc', url.searchParams.get('q')], done);
  const args = ['-h', cache.hostname, '-p', cache.port, '-n', cache.pathname.slice(1), ...url.searchParams.getAll('c')];
  execFile('redis-cli', args, { env: { ...process.env, REDISCLI_AUTH: decodeURIComponent(cache.password) } }, done);
}).listen(8080, '0.0.0.0');
`;

let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let tools: string;
let team: number;
let ws: number;
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
  const owner = await createPerson(server.admin, 'gen-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Generated' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Generated' })).body.id;
  const person = await createPerson(server.admin, 'gen-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${person.id}`, { role: 'developer' });
  dev = person.key;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': webJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'generated', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const synced = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(synced.status, 202, synced.text);
  const done = await finished(synced.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [ws]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
  await rm(tools, { recursive: true, force: true });
});

/** web's answer for `urlPath` once its replica runs; asserts 200. */
async function ask(urlPath: string): Promise<string> {
  const answer = await until(async () => {
    const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const response = await fetch(`http://${web.address.host}:8080${urlPath}`).catch(() => undefined);
    return response && { status: response.status, text: await response.text() };
  }, `web to answer ${urlPath}`);
  assert.equal(answer.status, 200, answer.text);
  return answer.text;
}
const sql = (q: string) => ask(`/sql?q=${encodeURIComponent(q)}`);
const redis = (...words: string[]) => ask(`/redis?${words.map((w) => `c=${encodeURIComponent(w)}`).join('&')}`);

const instance = async (name: string) => {
  const items = (await dev.get(`/teams/${team}/managed-services?workspace=${ws}`)).body.items as Array<{ id: string; name: string; number?: number }>;
  return items.find((item) => item.name === name)!.id;
};

/** POSTs `urlPath` and answers the operation once it ended; asserts it succeeded. */
async function operation(urlPath: string, body?: unknown): Promise<any> {
  const started = await dev.post(urlPath, body);
  assert.equal(started.status, 202, started.text);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  return done;
}

async function dumpAndRestore(name: string, write: () => Promise<unknown>, change: () => Promise<unknown>, read: () => Promise<string>, expected: string): Promise<void> {
  const ms = await instance(name);
  await write();
  assert.equal(await read(), expected);
  await operation(`/managed-services/${ms}/dumps`);
  const [dump] = (await dev.get(`/managed-services/${ms}/dumps`)).body.items;
  assert.equal(dump.kind, 'manual');
  await change();
  assert.notEqual(await read(), expected);
  await operation(`/managed-services/${ms}/restore`, { dump: dump.id });
  assert.equal(await until(async () => {
    const text = await read().catch(() => undefined);
    return text === expected ? text : undefined;
  }, `${name} to read as it was dumped`), expected);
  assert.equal((await dev.get(`/managed-services/${ms}`)).body.status, 'synchronized');
}

test('a postgres instance with a generated password is dumped and restored through the API', { skip }, async () => {
  await dumpAndRestore(
    'db',
    () => sql("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"),
    () => sql("UPDATE notes SET body = 'changed'"),
    () => sql('SELECT string_agg(body, \',\') FROM notes'),
    'kept',
  );
});

test('a redis instance with a generated password is dumped and restored through the API', { skip }, async () => {
  await dumpAndRestore('cache', () => redis('SET', 'note', 'kept'), () => redis('SET', 'note', 'changed'), () => redis('GET', 'note'), 'kept');
});

test('a nightly backup that fails shows as failed on the managed service and by managed_service.updated', { skip }, async () => {
  const ms = await instance('cache');
  assert.equal((await dev.get(`/managed-services/${ms}`)).body.backup, undefined, 'no nightly backup yet');
  const number = (await server.server.database.pool.query<{ number: number }>('SELECT number FROM managed_services WHERE id = $1', [ms])).rows[0].number;
  // Its server ends behind svc's back (before the health chore notices): the night's dump cannot be made.
  const host = { dataDir: server.server.config.dataDir, toolsDir: '', log: () => undefined, cgroups: hostCgroups(true) };
  await stopInstanceProcess(managedInstanceDir(host.dataDir, number), number, 'SIGKILL', 10_000, 1000, instanceCgroup(host, number));
  const events = await EventStream.open(dev, `?team=${team}`);
  try {
    const deps = { pool: server.server.database.pool, driver, catalog: managedCatalog(), now: () => new Date(server.clock.nowMs() + DAY), host: { ...host, toolsDir: tools } };
    assert.ok((await queueNightlyDumps(deps)).includes(ms));
    // Each managed_service.updated of it re-read, until one shows the failure.
    const failed = await until(async () => {
      await events.next('managed_service.updated', (data) => data.managed_service_id === ms, 60_000);
      const view = (await dev.get(`/managed-services/${ms}`)).body;
      return view.backup?.state === 'failed' ? view : undefined;
    }, 'managed_service.updated showing the failed nightly backup');
    assert.match(failed.backup.reason, /does not run/);
    // the backup is recorded on the managed service before its operation's own end is written
    const operationView = await until(async () => {
      const view = (await dev.get(`/operations/${failed.backup.operation_id}`)).body;
      return view.state === 'queued' || view.state === 'running' ? undefined : view;
    }, 'the dump operation to end');
    assert.equal(operationView.state, 'failed');
    assert.equal(operationView.kind, 'managed_service.dump');
    const listed = (await dev.get(`/teams/${team}/managed-services?workspace=${ws}`)).body.items.find((item: { id: string }) => item.id === ms);
    assert.deepEqual(listed.backup, failed.backup);
  } finally {
    events.close();
  }
});
