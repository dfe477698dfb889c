// A managed Redis bound to a real landscape: Sync creates it on the workspace's service network with its plan and
// config, a `steps` service reaches it by `${{ services.cache.dsn }}` (the password from the vault, URL-encoded)
// with no hand configuration, Teardown pauses it with its data, the next Sync resumes it with its keys, and removing
// it from the file deletes it with its data (a tombstone left). Needs root and Debian's redis-server.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { managedInstanceDir, readInstanceProcess } from '../src/managed/instance-process.ts';
import { installedRedisMajor } from '../src/managed/redis-instance.ts';
import { instanceDir } from '../src/managed/redis-rules.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { cgroupNames, hostCgroups } from '../src/runtime/local/cgroups.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { removeManagedInstances } from './helpers/managed-landscape.ts';

const cgroups = hostCgroups(process.getuid?.() === 0);
const skip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : (await installedRedisMajor()) === 7
      ? false
      : 'Redis 7 is not installed; apt-get install redis-server';

const webService = `  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      CACHE: \${{ services.cache.dsn }}
`;
const svcYml = `schema: svc/v1
services:
  cache:
    type: managed
    provider: redis
    resources: {memory: 128Mi}
    config: {maxmemoryPolicy: allkeys-lru}
    secrets:
      password: \${{ secrets.REDIS_PW }}
${webService}`;

// redis-cli from the host's /usr (bound read-only in pods), pointed at the DSN's host and port with the DSN's
// password (decoded: redis-cli 7.0's -u does not decode percent escapes) in REDISCLI_AUTH, never on its command line.
const webJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
const dsn = new URL(process.env.CACHE);
const commands = { '/write': ['SET', 'note', 'kept'], '/': ['GET', 'note'], '/settings': ['CONFIG', 'GET', 'max*'], '/dsn': null };
http.createServer((req, res) => {
  const command = commands[req.url];
  if (command === null) return res.end([dsn.protocol, dsn.hostname, dsn.port, dsn.pathname].join(' '));
  const args = ['-h', dsn.hostname, '-p', dsn.port, '-n', dsn.pathname.slice(1), ...(command ?? ['PING'])];
  execFile('redis-cli', args, { env: { ...process.env, REDISCLI_AUTH: decodeURIComponent(dsn.password) } }, (error, stdout, stderr) => {
    res.statusCode = error || /^(ERR|WRONGPASS|NOAUTH)/.test(stdout) ? 500 : 200;
    res.end(error ? stderr || error.message : stdout.trim());
  });
}).listen(8080, '0.0.0.0');
`;

let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let ws: number;
const finished = (operationId: string) => operationFinished(dev, operationId);

before(async () => {
  if (skip) return;
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'redis-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Redis' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Redis' })).body.id;
  dev = owner.key;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': webJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'redis', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  assert.equal((await dev.put(`/workspaces/${ws}/secrets/REDIS_PW`, { value: 'p@ss word:/%x' })).status < 300, true);
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [ws]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
});

async function sync(): Promise<void> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

/** web's answer for `urlPath`, once it answers (it starts after the Sync). */
async function ask(urlPath: string): Promise<string> {
  return until(async () => {
    const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const answer = await fetch(`http://${web.address.host}:8080${urlPath}`).catch(() => undefined);
    if (!answer) return undefined;
    const text = await answer.text();
    assert.equal(answer.status, 200, text);
    return text;
  }, `web to answer ${urlPath}`);
}

const instances = async () =>
  (await server.server.database.pool.query<{ id: string; number: number }>('SELECT id, number FROM managed_services WHERE workspace_id = $1 ORDER BY created_at', [ws])).rows;

test('Sync creates the redis instance with its plan and config; web writes and reads a key through the DSN', { skip }, async () => {
  await sync();
  const [instance] = await instances();
  const shown = await dev.get(`/managed-services/${instance.id}`);
  assert.equal(shown.status, 200, shown.text);
  assert.deepEqual(
    [shown.body.name, shown.body.provider, shown.body.version, shown.body.plan, shown.body.status, shown.body.details],
    ['cache', 'redis', '7', 'small', 'synchronized', { host: 'cache', port: 6379, version: '7' }],
  );
  assert.equal(await ask('/dsn'), 'redis: cache 6379 /0');
  assert.equal(await ask('/write'), 'OK');
  assert.equal(await ask('/'), 'kept');
  const settings = (await ask('/settings')).split('\n');
  const setting = (name: string) => settings[settings.indexOf(name) + 1];
  assert.deepEqual([setting('maxmemory'), setting('maxmemory-policy'), setting('maxclients')], [String(128 * 1024 * 1024), 'allkeys-lru', '1000']);
  if (cgroups) {
    // its server runs in a cgroup of its own: the plan's CPU, twice maxmemory (a snapshot's fork may copy every page)
    const name = cgroupNames(server.server.config.dataDir).managed(String(instance.number));
    const v1 = cgroups.version === 1;
    const read = (controller: string, file: string) => readFile(path.join('/sys/fs/cgroup', v1 ? controller : '', name, file), 'utf8');
    assert.equal(Number(await read('memory', v1 ? 'memory.limit_in_bytes' : 'memory.max')), 256 * 2 ** 20);
    assert.equal((await read('cpu', v1 ? 'cpu.cfs_quota_us' : 'cpu.max')).split(' ')[0].trim(), '25000');
    const record = await readInstanceProcess(managedInstanceDir(server.server.config.dataDir, instance.number));
    assert.match(await readFile(`/proc/${record!.pid}/cgroup`, 'utf8'), new RegExp(`${name}\n`));
  }
});

test('Teardown pauses the redis instance with its data; the next Sync resumes it and the key is still there', { skip }, async () => {
  const [instance] = await instances();
  const teardown = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'paused');
  assert.ok(existsSync(path.join(instanceDir(server.server.config.dataDir, instance.number), 'data', 'dump.rdb')), 'the pause saved a snapshot');
  if (cgroups) assert.equal(existsSync(path.join('/sys/fs/cgroup', cgroups.version === 1 ? 'memory' : '', cgroupNames(server.server.config.dataDir).managed(String(instance.number)))), false, 'no cgroup while paused');
  await sync();
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'synchronized');
  assert.equal(await ask('/'), 'kept');
});

test('a dump through the API is an operation ending in an RDB snapshot that downloads; restoring it is an operation too and the key is there', { skip }, async () => {
  const [instance] = await instances();
  const started = await dev.post(`/managed-services/${instance.id}/dumps`);
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.kind, 'managed_service.dump');
  assert.equal((await finished(started.body.id)).state, 'succeeded');
  const [dump] = (await dev.get(`/managed-services/${instance.id}/dumps`)).body.items;
  assert.deepEqual([dump.provider, dump.version, dump.format, dump.kind], ['redis', '7', 'redis RDB', 'manual']);
  const download = await fetch(`${server.url}/api/v1/managed-services/${instance.id}/dumps/${dump.id}`, { headers: { authorization: `Bearer ${dev.auth.token}` } });
  assert.equal(download.status, 200);
  assert.match(download.headers.get('content-disposition') ?? '', /^attachment; filename="cache-[\dT:-]+Z\.rdb"$/);
  const bytes = Buffer.from(await download.arrayBuffer());
  assert.deepEqual([bytes.length, bytes.subarray(0, 5).toString()], [dump.size_bytes, 'REDIS']);
  const restore = await dev.post(`/managed-services/${instance.id}/restore`, { dump: dump.id });
  assert.equal(restore.status, 202, restore.text);
  assert.equal((await finished(restore.body.id)).state, 'succeeded');
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'synchronized');
  assert.equal(await ask('/'), 'kept');
});

test('removing cache from the file deletes the instance and its data; its row stays as a tombstone', { skip }, async () => {
  const [instance] = await instances();
  const volume = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app');
  await writeFile(path.join(volume, 'svc.yml'), `schema: svc/v1\nservices:\n${webService.replace(/ {4}env:\n.*\n/, '')}`);
  await sync();
  const shown = (await dev.get(`/managed-services/${instance.id}`)).body;
  assert.equal(shown.status, 'deleted');
  assert.equal(typeof shown.deleted_at, 'string');
  assert.equal(existsSync(instanceDir(server.server.config.dataDir, instance.number)), false);
});
