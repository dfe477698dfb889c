// Managed NATS instances as real processes (as root: sandboxed, run as an unprivileged UID): the user and password
// from the configuration file only, JetStream limits and max_connections from the plan, a stream's message kept
// across a pause and a resume, a changed limit applied by a restart, delete removing the store, and a start that
// cannot succeed ending in nats-server's own reason. Needs Debian's nats-server (scripts/apt-packages.sh).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freeLoopbackPort } from '../core/loopback.ts';
import type { ManagedHost } from './engine.ts';
import { managedInstanceDir, readInstanceProcess } from './instance-process.ts';
import { checkNatsClient } from './nats-client-check.ts';
import { checkNatsReady, deleteNatsInstance, ensureNatsInstance, installedNatsMajor, isNatsInstanceRunning, NatsInstanceFailure, stopNatsInstance } from './nats-instance.ts';
import { CONFIG_FILE, natsLimits, type NatsInstanceSpec } from './nats-rules.ts';

const major = await installedNatsMajor();
const skip =
  process.getuid?.() !== 0
    ? 'needs root: instances run as an unprivileged UID'
    : major === undefined
      ? 'nats-server is not installed (scripts/apt-packages.sh)'
      : false;

let host: ManagedHost;
const logged: string[] = [];
const PASSWORD = 'p@ss "word" $HOME \\ x';

before(async () => {
  host = { dataDir: await mkdtemp(path.join(os.tmpdir(), 'svc-managed-nats-')), toolsDir: '/nonexistent', log: (message) => logged.push(message) };
  await chmod(host.dataDir, 0o755); // the instances' UID passes through it to their own directory
});

after(async () => {
  await rm(host.dataDir, { recursive: true, force: true });
});

async function specOf(id: number, extra: Partial<NatsInstanceSpec> = {}): Promise<NatsInstanceSpec> {
  return {
    id, user: 'app', password: PASSWORD, uid: 62000 + id, address: '127.0.0.1', port: await freeLoopbackPort(), monitoringPort: await freeLoopbackPort(),
    jetstream: true, maxPayload: 1048576, ...natsLimits({ storage: 300, memory: 128, connections: 25 }), ...extra,
  };
}

const clientOf = (spec: NatsInstanceSpec) => connect({ servers: `${spec.address}:${spec.port}`, user: spec.user, pass: spec.password, reconnect: false });
const varz = async (spec: NatsInstanceSpec) => (await fetch(`http://127.0.0.1:${spec.monitoringPort}/varz`)).json() as Promise<Record<string, any>>;

test('a NATS instance admits its user only, takes its limits from the plan and keeps a stream across a pause; delete removes it', { skip }, async () => {
  const spec = await specOf(1);
  assert.deepEqual(await ensureNatsInstance(host, spec, major!), { restarted: false });
  assert.equal((await checkNatsReady(spec)).ready, true);
  const shown = await varz(spec);
  assert.equal(shown.server_name, 'ms-1');
  assert.equal(shown.max_connections, 25);
  assert.equal(shown.auth_required, true);
  assert.deepEqual([shown.jetstream.config.max_storage, shown.jetstream.config.max_memory], [300 * 1048576, 64 * 1048576]);
  assert.equal(shown.jetstream.config.store_dir, '/data/app/store/jetstream');

  const refused = await checkNatsClient({ ...spec, password: 'not the password' });
  assert.deepEqual(refused, { ready: false, reason: 'Authorization Violation', refused: true });

  // The password is in the configuration file only: the instance's UID reads it, nobody sees it on a command line.
  const config = path.join(managedInstanceDir(host.dataDir, spec.id), CONFIG_FILE);
  const mode = await stat(config);
  assert.deepEqual([mode.uid, mode.mode & 0o777], [spec.uid, 0o600]);
  const record = await readInstanceProcess(managedInstanceDir(host.dataDir, spec.id));
  const children = (await readFile(`/proc/${record!.initPid}/task/${record!.initPid}/children`, 'utf8')).trim();
  const cmdline = (await readFile(`/proc/${children}/cmdline`, 'utf8')).split('\0').join(' ');
  assert.match(cmdline, /nats-server -c \/data\/app\/nats\.conf/);
  assert.ok(!cmdline.includes('word'), cmdline);

  const client = await clientOf(spec);
  const created = await (await jetstreamManager(client)).streams.add({ name: 'EVENTS', subjects: ['events.>'], storage: StorageType.File });
  assert.equal(created.config.name, 'EVENTS');
  const ack = await jetstream(client).publish('events.hello', 'kept');
  assert.deepEqual([ack.stream, ack.seq], ['EVENTS', 1]);
  await client.close();

  await stopNatsInstance(host, spec.id);
  assert.equal(await isNatsInstanceRunning(host, spec.id), false);
  assert.equal((await checkNatsReady(spec, 500)).ready, false);
  const log = await readFile(path.join(managedInstanceDir(host.dataDir, spec.id), 'nats.log'), 'utf8');
  assert.match(log, /Server Exiting/, 'a pause is a clean shutdown, not a kill');

  assert.deepEqual(await ensureNatsInstance(host, spec, major!), { restarted: false });
  const again = await clientOf(spec);
  const message = await (await jetstreamManager(again)).streams.getMessage('EVENTS', { seq: 1 });
  assert.equal(message?.string(), 'kept');
  await again.close();

  await deleteNatsInstance(host, spec.id);
  assert.equal(existsSync(managedInstanceDir(host.dataDir, spec.id)), false);
  assert.ok(!logged.some((line) => line.includes(PASSWORD)), 'the password is never logged');
});

test('an unchanged instance is left running; a changed limit restarts it to apply', { skip }, async () => {
  const spec = await specOf(2);
  await ensureNatsInstance(host, spec, major!);
  const before = (await readInstanceProcess(managedInstanceDir(host.dataDir, spec.id)))!.pid;
  assert.deepEqual(await ensureNatsInstance(host, spec, major!), { restarted: false });
  assert.equal((await readInstanceProcess(managedInstanceDir(host.dataDir, spec.id)))!.pid, before);
  assert.deepEqual(await ensureNatsInstance(host, { ...spec, maxConnections: 40, maxPayload: 4096 }, major!), { restarted: true });
  const shown = await varz(spec);
  assert.deepEqual([shown.max_connections, shown.max_payload], [40, 4096]);
  await deleteNatsInstance(host, spec.id);
});

test('a port that is taken ends the start with nats-server\'s reason and leaves no process', { skip }, async () => {
  const spec = await specOf(3);
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(spec.port, '127.0.0.1', resolve));
  try {
    await assert.rejects(ensureNatsInstance(host, spec, major!), (error: Error) => {
      assert.ok(error instanceof NatsInstanceFailure);
      assert.match(error.message, /^NATS instance 3 did not start: .*address already in use/);
      return true;
    });
  } finally {
    blocker.close();
  }
  assert.equal(await isNatsInstanceRunning(host, spec.id), false);
  await deleteNatsInstance(host, spec.id);
});

test('a version other than the installed server\'s and a bad spec are refused before anything starts', { skip }, async () => {
  const spec = await specOf(4);
  await assert.rejects(ensureNatsInstance(host, spec, '3'), { message: `NATS 3 is not installed (nats-server ${major} is)` });
  await assert.rejects(ensureNatsInstance(host, { ...spec, password: 'short', user: 'a b' }, major!), {
    message: 'the user name "a b" is not a name of letters, digits, _ and - (at most 63); the password must have at least 8 characters and no control characters',
  });
  assert.equal(existsSync(managedInstanceDir(host.dataDir, spec.id)), false);
});
