// Managed Redis instances as real redis-server processes (as root: sandboxed, run as an unprivileged UID) with real
// connections: the plan and config applied, pause keeps the data, settings change live or by a restart, the
// append-only file follows the file's choice, a dump restored into a fresh instance keeps its keys, and a start that
// cannot succeed ends in Redis's own reason. Needs Debian's redis-server (scripts/setup.sh installs it).
// Workspace id 900263 (a service network) is this file's own.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { NormalManagedService } from '../landscape/index.ts';
import { freeLoopbackPort } from '../core/loopback.ts';
import { DEFAULT_SERVICE_ADDRESS_RANGE, REPLICA_SLOTS, replicaAddressOf, replicaSwitchLinkOf } from '../runtime/local/addresses.ts';
import { networkOwner, removeNetns } from '../runtime/local/network.ts';
import { pollUntil } from '../runtime/local/processes.ts';
import { attachToServiceNetwork, createReplicaNetns, ensureServiceNetwork, removeRecordedServiceNetwork } from '../runtime/local/service-network.ts';
import type { InstanceRequest, ManagedHost } from './engine.ts';
import { redisCommand, redisCommands } from './redis-client.ts';
import { redisEngine } from './redis-engine.ts';
import {
  checkRedisReady,
  deleteRedisInstance,
  ensureRedisInstance,
  installedRedisMajor,
  dumpRedisInstance,
  isRedisInstanceRunning,
  RedisInstanceFailure,
  restoreRedisInstance,
  startRedisInstance,
  stopRedisInstance,
} from './redis-instance.ts';
import { AOF_DIR, AOF_MANIFEST, instanceDataDir, instanceDir, type RedisInstanceSpec } from './redis-rules.ts';

const major = await installedRedisMajor();
const skip =
  process.getuid?.() !== 0
    ? 'needs root: instances run as an unprivileged UID'
    : major === 7
      ? false
      : `Redis 7 is not installed (found: ${major ?? 'none'}); apt-get install redis-server`;

let host: ManagedHost;
const logged: string[] = [];
const PASSWORD = 'correct horse "battery" staple';

before(async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-redis-'));
  await chmod(dataDir, 0o755); // the instances' UID passes through it to their own directory
  host = { dataDir, toolsDir: '/nonexistent', log: (message) => logged.push(message) };
});

after(async () => {
  await rm(host.dataDir, { recursive: true, force: true });
});

async function specOf(id: number, extra: Partial<RedisInstanceSpec> = {}): Promise<RedisInstanceSpec> {
  return { id, major: 7, password: PASSWORD, uid: 62000 + id, address: '127.0.0.1', port: await freeLoopbackPort(), ...extra };
}

const config = async (spec: RedisInstanceSpec, name: string) => ((await redisCommand(spec, ['CONFIG', 'GET', name])) as string[])[1];
const serverPid = async (spec: RedisInstanceSpec) => String(await redisCommand(spec, ['INFO', 'server'])).match(/process_id:(\d+)/)?.[1];
const exists = (spec: RedisInstanceSpec, ...parts: string[]) => existsSync(path.join(instanceDataDir(host.dataDir, spec.id), ...parts));

test('a Redis instance runs with its plan and config, keeps its keys across a pause, and changes settings live or by a restart', { skip }, async () => {
  const spec = await specOf(1, { maxmemoryMiB: 64, maxclients: 500, maxmemoryPolicy: 'allkeys-lru', databases: 4 });
  assert.deepEqual(await ensureRedisInstance(host, spec), { restarted: [] });
  assert.deepEqual(await checkRedisReady(spec), { ready: true });
  assert.equal(await config(spec, 'maxmemory'), String(64 * 1024 * 1024));
  assert.equal(await config(spec, 'maxclients'), '500');
  assert.equal(await config(spec, 'maxmemory-policy'), 'allkeys-lru');
  assert.equal(await config(spec, 'databases'), '4');
  assert.equal(await redisCommand(spec, ['SET', 'note', 'kept']), 'OK');
  const conf = await stat(path.join(instanceDir(host.dataDir, spec.id), 'redis.conf'));
  assert.deepEqual([conf.uid, conf.mode & 0o777], [spec.uid, 0o600], 'only the instance reads its password');
  const refused = await checkRedisReady({ ...spec, password: 'not the password' });
  assert.deepEqual([refused.ready, refused.refused], [false, true], 'a wrong password is the server refusing it');
  assert.match(String(!refused.ready && refused.reason), /^WRONGPASS/);

  await stopRedisInstance(host, spec.id);
  assert.equal(await isRedisInstanceRunning(host, spec.id), false);
  const paused = await checkRedisReady(spec, 500);
  assert.deepEqual([paused.ready, paused.refused], [false, undefined], 'a paused instance has no process answering');
  assert.ok(exists(spec, 'dump.rdb'), 'the shutdown saved a snapshot');
  assert.match(await readFile(path.join(instanceDir(host.dataDir, spec.id), 'redis.log'), 'utf8'), /Received SIGTERM scheduling shutdown[\s\S]*DB saved on disk/);

  await ensureRedisInstance(host, spec);
  assert.equal(await redisCommand(spec, ['GET', 'note']), 'kept');
  const pid = await serverPid(spec);
  // Memory, connections and the policy change live: the same process.
  assert.deepEqual(await ensureRedisInstance(host, { ...spec, maxmemoryMiB: 128, maxclients: 600, maxmemoryPolicy: 'noeviction' }), { restarted: [] });
  assert.equal(await serverPid(spec), pid);
  assert.deepEqual([await config(spec, 'maxmemory'), await config(spec, 'maxclients'), await config(spec, 'maxmemory-policy')], [String(128 * 1024 * 1024), '600', 'noeviction']);
  // databases waits for a start; so does a password changed in the vault (the old one is not known to CONFIG SET).
  assert.deepEqual(await ensureRedisInstance(host, { ...spec, databases: 8 }), { restarted: ['databases'] });
  assert.equal(await config(spec, 'databases'), '8');
  const changed = { ...spec, databases: 8, password: 'a new password from the vault' };
  assert.deepEqual(await ensureRedisInstance(host, changed), { restarted: ['requirepass'] });
  assert.equal((await checkRedisReady(spec)).ready, false);
  assert.equal(await redisCommand(changed, ['GET', 'note']), 'kept');

  await deleteRedisInstance(host, spec.id);
  assert.equal(existsSync(instanceDir(host.dataDir, spec.id)), false);
  assert.equal((await checkRedisReady(changed, 500)).ready, false);
  await deleteRedisInstance(host, spec.id); // idempotent
  assert.ok(!logged.some((line) => line.includes(PASSWORD) || line.includes(changed.password)), 'the password is never logged');
});

test('appendonly: switched on live it writes the AOF; switched off while paused the snapshot is loaded and the AOF goes', { skip }, async () => {
  const spec = await specOf(2);
  await ensureRedisInstance(host, spec);
  await redisCommand(spec, ['SET', 'before', '1']);
  await ensureRedisInstance(host, { ...spec, appendonly: true });
  assert.equal(await config(spec, 'appendonly'), 'yes');
  assert.ok(await pollUntil(async () => exists(spec, AOF_DIR, AOF_MANIFEST), 10_000), 'the AOF is written in the background');
  await redisCommand(spec, ['SET', 'after', '2']);
  await stopRedisInstance(host, spec.id);
  await ensureRedisInstance(host, { ...spec, appendonly: true });
  assert.deepEqual(await redisCommands(spec, [['GET', 'before'], ['GET', 'after']]), ['1', '2']);
  await stopRedisInstance(host, spec.id);
  await ensureRedisInstance(host, spec);
  assert.equal(await config(spec, 'appendonly'), 'no');
  assert.deepEqual(await redisCommands(spec, [['GET', 'before'], ['GET', 'after']]), ['1', '2']);
  assert.equal(exists(spec, AOF_DIR), false, 'an AOF that no longer follows the data is not kept');
  await deleteRedisInstance(host, spec.id);
});

test('a dump restored into a fresh instance keeps its keys and replaces what it had; a file that is not a snapshot is refused', { skip }, async () => {
  const [source, target] = [await specOf(3, { appendonly: true }), await specOf(4, { appendonly: true })];
  await Promise.all([ensureRedisInstance(host, source), ensureRedisInstance(host, target)]);
  await redisCommands(source, [['SET', 'note', 'kept'], ['RPUSH', 'list', 'a', 'b']]);
  await redisCommand(target, ['SET', 'other', 'replaced by the restore']);
  const file = path.join(host.dataDir, 'cache.rdb');
  await dumpRedisInstance(host, source, file);
  assert.equal((await readFile(file)).subarray(0, 5).toString(), 'REDIS');

  await restoreRedisInstance(host, target, file);
  assert.deepEqual(await redisCommands(target, [['GET', 'note'], ['LRANGE', 'list', '0', '-1'], ['EXISTS', 'other']]), ['kept', ['a', 'b'], 0]);
  assert.equal(await config(target, 'appendonly'), 'yes', 'the AOF is written again from the restored data');
  await stopRedisInstance(host, target.id);
  await startRedisInstance(host, target);
  assert.equal(await redisCommand(target, ['GET', 'note']), 'kept', 'and the next start loads it');

  const notRdb = path.join(host.dataDir, 'not.rdb');
  await writeFile(notRdb, 'PGDMP not redis');
  await assert.rejects(restoreRedisInstance(host, target, notRdb), new RedisInstanceFailure('not.rdb is not a Redis RDB snapshot'));
  // A snapshot that Redis cannot load: the instance gets its own data back and says why.
  await writeFile(notRdb, 'REDIS0010 and then garbage');
  await assert.rejects(restoreRedisInstance(host, target, notRdb), (error: Error) => {
    assert.ok(error instanceof RedisInstanceFailure);
    assert.equal(error.message, 'the snapshot could not be restored: Redis instance 4 did not start: Short read or OOM loading DB. Unrecoverable error, aborting now.');
    return true;
  });
  assert.equal(await redisCommand(target, ['GET', 'note']), 'kept');
  await Promise.all([deleteRedisInstance(host, source.id), deleteRedisInstance(host, target.id)]);
  await assert.rejects(dumpRedisInstance(host, source, file), /Redis instance 3 is not running/);
});

test("a port that is taken ends the start with Redis's reason and leaves no process; another major is refused", { skip }, async () => {
  const spec = await specOf(5);
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(spec.port, '127.0.0.1', resolve));
  try {
    await assert.rejects(ensureRedisInstance(host, spec), (error: Error) => {
      assert.ok(error instanceof RedisInstanceFailure);
      assert.match(error.message, new RegExp(`^Redis instance 5 did not start: .*Could not create server TCP listening socket 127\\.0\\.0\\.1:${spec.port}: bind: Address already in use`));
      return true;
    });
  } finally {
    blocker.close();
  }
  assert.equal(await isRedisInstanceRunning(host, spec.id), false);
  await assert.rejects(ensureRedisInstance(host, { ...spec, major: 6 }), new RedisInstanceFailure('Redis 6 is not installed (installed: Redis 7)'));
  await deleteRedisInstance(host, spec.id);
});

const cache = (password: string): NormalManagedService =>
  ({ type: 'managed', provider: 'redis', config: { maxmemoryPolicy: 'allkeys-lfu' }, secrets: { password }, resources: {} }) as unknown as NormalManagedService;

test('through the engine, on a workspace service network: instances at port 6379 of their own addresses, dumped and restored', { skip }, async () => {
  const network = await ensureServiceNetwork(path.join(host.dataDir, 'workspace'), 900263, DEFAULT_SERVICE_ADDRESS_RANGE, networkOwner(host.dataDir));
  const names = ['svc-ws900263-cache-0', 'svc-ws900263-copy-0'];
  try {
    const requests: InstanceRequest[] = [];
    for (const [index, netns] of names.entries()) {
      await createReplicaNetns(netns);
      const address = replicaAddressOf(network, REPLICA_SLOTS - 1 - index);
      await attachToServiceNetwork(network, netns, replicaSwitchLinkOf(`redis${index}`, 0), address);
      const plan = { id: 'small', title: 'Small', resources: { memory: { value: 100, min: 64, max: 1024 }, connections: { value: 50, min: 10, max: 4000 } } };
      requests.push({ id: 6 + index, name: index === 0 ? 'cache' : 'copy', service: cache(PASSWORD), version: '7', plan, uid: 62006 + index, netns, address });
    }
    const [source, target] = requests;
    assert.deepEqual(await redisEngine.ensure(host, source), { host: 'cache', port: 6379, version: '7' });
    await redisEngine.ensure(host, target);
    const at = (request: InstanceRequest) => ({ address: request.address, port: 6379, password: PASSWORD });
    assert.deepEqual(await redisCommands(at(source), [['SET', 'note', 'kept'], ['CONFIG', 'GET', 'maxmemory-policy'], ['CONFIG', 'GET', 'maxclients']]), ['OK', ['maxmemory-policy', 'allkeys-lfu'], ['maxclients', '50']]);
    assert.equal((await checkRedisReady({ ...at(source), address: '127.0.0.1', port: 6379 }, 500)).ready, false, 'not on the host loopback');
    const file = path.join(host.dataDir, 'engine.rdb');
    assert.deepEqual(await redisEngine.dump!(host, source, file), { format: 'redis RDB', extension: '.rdb', mediaType: 'application/octet-stream' });
    await redisEngine.restore!(host, target, file);
    assert.equal(await redisCommand(at(target), ['GET', 'note']), 'kept');
    assert.equal(await redisEngine.isRunning(host, target.id), true);
    await Promise.all(requests.map((request) => redisEngine.remove(host, request.id)));
  } finally {
    for (const netns of names) await removeNetns(netns);
    await removeRecordedServiceNetwork(path.join(host.dataDir, 'workspace'));
  }
});
