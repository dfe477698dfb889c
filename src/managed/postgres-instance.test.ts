// Managed PostgreSQL instances as real processes (as root: sandboxed, run as an unprivileged UID) with real pg
// connections: pause keeps the data, delete removes it, majors run side by side, and a start that cannot succeed
// ends in PostgreSQL's own reason, not a hang. Needs scripts/setup-postgres.sh's install (npm test runs it).
// Workspace id 900201 (a service network) is this file's own.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, truncate } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { freeLoopbackPort } from '../core/loopback.ts';
import { DEFAULT_SERVICE_ADDRESS_RANGE, REPLICA_SLOTS, replicaAddressOf, replicaSwitchLinkOf } from '../runtime/local/addresses.ts';
import { DEFAULT_TOOLS_DIR } from '../runtime/local/editor-tools.ts';
import { networkOwner, removeNetns } from '../runtime/local/network.ts';
import { pollUntil } from '../runtime/local/processes.ts';
import { attachToServiceNetwork, createReplicaNetns, ensureServiceNetwork, removeRecordedServiceNetwork } from '../runtime/local/service-network.ts';
import {
  checkPostgresReady,
  createPostgresInstance,
  deletePostgresInstance,
  installedPostgresMajors,
  isPostgresInstanceRunning,
  PostgresInstanceFailure,
  startPostgresInstance,
  stopPostgresInstance,
  type PostgresHost,
} from './postgres-instance.ts';
import { instanceDataDir, instanceDir, instanceDsn, type PostgresInstanceSpec } from './postgres-rules.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const majors = await installedPostgresMajors(toolsDir);
const skip =
  process.getuid?.() !== 0
    ? 'needs root: instances run as an unprivileged UID in a network namespace of their own'
    : [15, 16, 17].every((major) => majors.includes(major))
      ? false
      : `PostgreSQL 15, 16 and 17 are not all installed in ${toolsDir} (found: ${majors.join(', ') || 'none'}); run scripts/setup-postgres.sh`;

let host: PostgresHost;
const logged: string[] = [];
const PASSWORD = 'correct horse battery staple';

before(async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-pg-'));
  await chmod(dataDir, 0o755); // the instances' UID passes through it to their own directory
  host = { dataDir, toolsDir, log: (message) => logged.push(message) };
});

after(async () => {
  await rm(host.dataDir, { recursive: true, force: true });
});

async function specOf(id: number, major: number, extra: Partial<PostgresInstanceSpec> = {}): Promise<PostgresInstanceSpec> {
  return { id, major, database: 'app', user: 'app', password: PASSWORD, uid: 61000 + id, address: '127.0.0.1', port: await freeLoopbackPort(), ...extra };
}

async function query(spec: PostgresInstanceSpec, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: instanceDsn(spec) });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

test('a PostgreSQL 16 instance keeps its row across a pause and a resume; delete removes its data', { skip }, async () => {
  const spec = await specOf(1, 16, { settings: { max_connections: '42' }, extensions: ['pg_trgm'] });
  assert.deepEqual(await createPostgresInstance(host, spec), { pendingRestart: [], restarted: false });
  assert.deepEqual(await checkPostgresReady(spec), { ready: true });
  assert.deepEqual((await query(spec, 'SHOW max_connections')).rows, [{ max_connections: '42' }]);
  assert.deepEqual((await query(spec, "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).rows, [{ extname: 'pg_trgm' }]);
  assert.match((await query(spec, 'SELECT version()')).rows[0].version, /^PostgreSQL 16\./);
  await query(spec, 'CREATE TABLE notes (body text); INSERT INTO notes VALUES ($$kept$$)');

  await stopPostgresInstance(host, spec.id);
  assert.equal(await isPostgresInstanceRunning(host, spec.id), false);
  assert.equal((await checkPostgresReady(spec)).ready, false, 'a paused instance has no process answering');
  assert.ok(existsSync(path.join(instanceDataDir(host.dataDir, spec.id), 'PG_VERSION')), 'the data stays while paused');
  const log = await readFile(path.join(instanceDir(host.dataDir, spec.id), 'postgres.log'), 'utf8');
  assert.match(log, /received fast shutdown request[\s\S]*database system is shut down/, 'a pause is a clean shutdown, not a kill');

  // The password changed in the vault since the instance was made: the start gives the instance the new one (a quote
  // included), and the old one stops working.
  const renewed = { ...spec, password: "it's a new one" };
  await startPostgresInstance(host, renewed);
  assert.deepEqual(await checkPostgresReady(renewed), { ready: true });
  assert.equal((await checkPostgresReady(spec)).ready, false, 'the old password no longer works');
  // A running instance takes a changed password at the next create (a Sync), by a restart: the settings were already as asked.
  assert.deepEqual(await createPostgresInstance(host, spec), { pendingRestart: [], restarted: true });
  assert.deepEqual(await checkPostgresReady(spec), { ready: true });
  assert.deepEqual((await query(spec, 'SELECT body FROM notes')).rows, [{ body: 'kept' }]);
  await stopPostgresInstance(host, spec.id);

  await startPostgresInstance(host, spec);
  assert.deepEqual((await query(spec, 'SELECT body FROM notes')).rows, [{ body: 'kept' }]);
  // A second Sync with changed settings: the live one applies, the other waits for a restart and says so.
  const changed = { ...spec, settings: { max_connections: '50', statement_timeout: '5s' } };
  assert.deepEqual(await createPostgresInstance(host, changed), { pendingRestart: ['max_connections'], restarted: false });
  assert.deepEqual((await query(spec, 'SELECT count(*)::int AS n FROM notes')).rows, [{ n: 1 }]);
  assert.ok(await pollUntil(async () => (await query(spec, 'SHOW statement_timeout')).rows[0].statement_timeout === '5s', 10_000));
  assert.deepEqual((await query(spec, 'SHOW max_connections')).rows, [{ max_connections: '42' }]);
  await stopPostgresInstance(host, spec.id);
  await startPostgresInstance(host, changed);
  assert.deepEqual((await query(spec, 'SHOW max_connections')).rows, [{ max_connections: '50' }]);
  // The hook runs once before a change reaches the instance, never when it is as the spec asks.
  let changes = 0;
  const changing = async () => void changes++;
  const zoned = { ...changed, settings: { ...changed.settings, timezone: 'Europe/Berlin' } };
  assert.deepEqual(await createPostgresInstance(host, zoned, { changing }), { pendingRestart: [], restarted: false });
  assert.deepEqual(await createPostgresInstance(host, zoned, { changing }), { pendingRestart: [], restarted: false });
  assert.equal(changes, 1);
  assert.ok(await pollUntil(async () => (await query(spec, 'SHOW timezone')).rows[0].TimeZone === 'Europe/Berlin', 10_000));
  await assert.rejects(createPostgresInstance(host, { ...zoned, settings: { timezone: 'Mars/Olympus' } }), (error: Error) => {
    assert.ok(error instanceof PostgresInstanceFailure);
    assert.match(error.message, /^PostgreSQL instance 1 refused its settings: invalid value for parameter "TimeZone": "Mars\/Olympus"/);
    return true;
  });

  await deletePostgresInstance(host, spec.id);
  assert.equal(existsSync(instanceDir(host.dataDir, spec.id)), false);
  assert.equal((await checkPostgresReady(spec)).ready, false);
  assert.ok(!logged.some((line) => line.includes(PASSWORD)), 'the password is never logged');
});

test('PostgreSQL 15 and 17 instances run side by side; a data directory refuses another major', { skip }, async () => {
  const [v15, v17] = await Promise.all([specOf(2, 15), specOf(3, 17)]);
  await Promise.all([createPostgresInstance(host, v15), createPostgresInstance(host, v17)]);
  assert.match((await query(v15, 'SELECT version()')).rows[0].version, /^PostgreSQL 15\./);
  assert.match((await query(v17, 'SELECT version()')).rows[0].version, /^PostgreSQL 17\./);

  await stopPostgresInstance(host, v17.id);
  await assert.rejects(startPostgresInstance(host, { ...v17, major: 16 }), (error: Error) => {
    assert.ok(error instanceof PostgresInstanceFailure);
    assert.equal(error.message, 'the data directory was created by PostgreSQL 17; it cannot be started with PostgreSQL 16');
    return true;
  });
  assert.equal(await isPostgresInstanceRunning(host, v17.id), false);
  await Promise.all([deletePostgresInstance(host, v15.id), deletePostgresInstance(host, v17.id)]);
});

test('a port that is taken ends the start with PostgreSQL\'s reason and leaves no process', { skip }, async () => {
  const spec = await specOf(4, 16);
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(spec.port, '127.0.0.1', resolve));
  try {
    await assert.rejects(createPostgresInstance(host, spec), (error: Error) => {
      assert.ok(error instanceof PostgresInstanceFailure);
      assert.match(error.message, /^PostgreSQL instance 4 did not start: .*could not bind IPv4 address "127\.0\.0\.1": Address already in use/);
      return true;
    });
  } finally {
    blocker.close();
  }
  assert.equal(await isPostgresInstanceRunning(host, spec.id), false);
  await deletePostgresInstance(host, spec.id);
});

test('a corrupted data directory ends the resume with PostgreSQL\'s reason', { skip }, async () => {
  const spec = await specOf(5, 16);
  await createPostgresInstance(host, spec);
  await stopPostgresInstance(host, spec.id);
  await truncate(path.join(instanceDataDir(host.dataDir, spec.id), 'global', 'pg_control'), 0);
  await assert.rejects(startPostgresInstance(host, spec), (error: Error) => {
    assert.ok(error instanceof PostgresInstanceFailure);
    assert.match(error.message, /^PostgreSQL instance 5 did not start: .*pg_control/);
    return true;
  });
  assert.equal(await isPostgresInstanceRunning(host, spec.id), false);
  await deletePostgresInstance(host, spec.id);
});

test('an instance in a namespace of its own on a workspace\'s service network answers at its address there only', { skip }, async () => {
  // How the lifecycle places it: like a replica, its own namespace linked to the switch at a free address.
  const network = await ensureServiceNetwork(path.join(host.dataDir, 'workspace'), 900201, DEFAULT_SERVICE_ADDRESS_RANGE, networkOwner(host.dataDir));
  const netns = 'svc-ws900201-db-0';
  try {
    await createReplicaNetns(netns);
    const address = replicaAddressOf(network, REPLICA_SLOTS - 1);
    await attachToServiceNetwork(network, netns, replicaSwitchLinkOf('db', 0), address);
    const spec = await specOf(6, 17, { netns, address, port: 5432 });
    await createPostgresInstance(host, spec);
    // From the host's end of the service network (a replica's connections come from the same segment).
    assert.deepEqual((await query(spec, 'SELECT current_user AS "user", current_database() AS db')).rows, [{ user: 'app', db: 'app' }]);
    assert.equal((await checkPostgresReady({ ...spec, address: '127.0.0.1' }, 'app', 1000)).ready, false);
    await deletePostgresInstance(host, spec.id);
  } finally {
    await removeNetns(netns);
    await removeRecordedServiceNetwork(path.join(host.dataDir, 'workspace'));
  }
});
