// The durable job queue against real PostgreSQL: claim, progress, success, failure, a server that dies, shutdown,
// fairness between teams.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ManualClock } from '../src/core/clock.ts';
import { problem } from '../src/core/problems.ts';
import { NotificationHub } from '../src/events/hub.ts';
import { LEASE_MS, MAX_ATTEMPTS } from '../src/operations/lifecycle.ts';
import { OperationWorker, type OperationHandler } from '../src/operations/worker.ts';
import { openDatabase, withTransaction, type Database } from '../src/store/database.ts';
import { findOperation, insertOperation, type OperationRow } from '../src/store/operations.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { until } from './helpers/wait.ts';

let testDatabase: TestDatabase;
let database: Database;
let hub: NotificationHub;
const clock = new ManualClock();
const workers: OperationWorker[] = [];

before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: '/nonexistent', log: () => undefined });
  hub = new NotificationHub(testDatabase.url, () => undefined);
  await hub.start();
});
after(async () => {
  for (const worker of workers) await worker.close();
  await hub?.close();
  await database?.close();
  await testDatabase?.drop();
});

function worker(handlers: Record<string, OperationHandler>, serverId: string = randomUUID()): OperationWorker {
  const created = new OperationWorker({ serverId, pool: database.pool, clock, hub, handlers, log: () => undefined, pollMs: 60_000 });
  workers.push(created);
  return created;
}

async function enqueue(kind: string, input: object = {}, teamId: number | null = null): Promise<OperationRow> {
  return insertOperation(database.pool, { id: randomUUID(), kind, target: '/workspaces/1', teamId, createdBy: null, input, at: clock.now() });
}

async function waitForState(id: string, state: string): Promise<OperationRow> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const row = (await findOperation(database.pool, id))!;
    if (row.state === state) return row;
    if (Date.now() > deadline) throw new Error(`operation ${id} stayed ${row.state}, wanted ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('a job is claimed when NOTIFY announces it, reports progress and succeeds', async () => {
  const seen: string[] = [];
  const w = worker({
    'test.ok': async (job) => {
      await job.progress('halfway');
      seen.push((await findOperation(database.pool, job.operation.id))!.detail!);
      return { detail: 'all done' };
    },
  });
  w.start();
  const op = await enqueue('test.ok');
  const done = await waitForState(op.id, 'succeeded');
  assert.deepEqual(seen, ['halfway']);
  assert.equal(done.detail, 'all done');
  assert.ok(done.finished_at);
  assert.equal(done.lease_owner, null);
  await w.close();
});

test('a failing job ends failed with its problem in error', async () => {
  const w = worker({ 'test.fail': async () => { throw problem('conflict', 409, 'The name is taken.'); } });
  w.start();
  const op = await enqueue('test.fail');
  const failed = await waitForState(op.id, 'failed');
  assert.equal(failed.error!.type, 'urn:svc:problem:conflict');
  assert.equal(failed.error!.detail, 'The name is taken.');
  await w.close();
});

test('an unexpected exception fails the job as internal, with its message', async () => {
  const w = worker({ 'test.crash': async () => { throw new Error('disk on fire'); } });
  w.start();
  const op = await enqueue('test.crash');
  const failed = await waitForState(op.id, 'failed');
  assert.equal(failed.error!.type, 'urn:svc:problem:internal');
  assert.match(String(failed.error!.detail), /disk on fire/);
  await w.close();
});

test('a job of a server that died is claimed again once its lease runs out, as resumed', async () => {
  let firstStarted!: () => void;
  const started = new Promise<void>((resolve) => (firstStarted = resolve));
  const dead = worker({ 'test.resume': () => { firstStarted(); return new Promise(() => undefined); } });
  dead.start();
  const op = await enqueue('test.resume');
  await started;
  assert.equal((await findOperation(database.pool, op.id))!.state, 'running');
  // The first server stops renewing (it "died"); a second one takes over after the lease.
  (dead as unknown as { closed: boolean }).closed = true;
  const resumedFlags: boolean[] = [];
  const second = worker({ 'test.resume': async (job) => { resumedFlags.push(job.resumed); } });
  second.start();
  second.poll();
  await second.idle();
  assert.equal((await findOperation(database.pool, op.id))!.state, 'running', 'not before the lease ran out');
  clock.advance(LEASE_MS + 1);
  second.poll();
  const done = await waitForState(op.id, 'succeeded');
  assert.deepEqual(resumedFlags, [true]);
  assert.equal(done.attempts, 2);
  await second.close();
});

test('a restarted server resumes its own running jobs at once, without waiting for the lease', async () => {
  let firstStarted!: () => void;
  const started = new Promise<void>((resolve) => (firstStarted = resolve));
  const before = worker({ 'test.restart': () => { firstStarted(); return new Promise(() => undefined); } }, 'server-a');
  before.start();
  const op = await enqueue('test.restart');
  await started;
  (before as unknown as { closed: boolean }).closed = true; // killed: no shutdown, no renewals
  const other = worker({ 'test.restart': async () => undefined }, 'server-b');
  other.start();
  other.poll();
  await other.idle();
  assert.equal((await findOperation(database.pool, op.id))!.state, 'running', 'another server waits for the lease');
  await other.close();
  const after = worker({ 'test.restart': async (job) => { assert.ok(job.resumed); } }, 'server-a');
  after.start();
  await waitForState(op.id, 'succeeded');
  await after.close();
});

test(`a job that keeps killing its server fails after ${MAX_ATTEMPTS} attempts`, async () => {
  const op = await enqueue('test.doomed');
  await database.pool.query(`UPDATE operations SET state = 'running', attempts = $2, lease_owner = 'gone', lease_until = $3 WHERE id = $1`, [
    op.id,
    MAX_ATTEMPTS,
    new Date(clock.nowMs() - 1),
  ]);
  const w = worker({ 'test.doomed': async () => { throw new Error('must not run'); } });
  w.start();
  const failed = await waitForState(op.id, 'failed');
  assert.match(String(failed.error!.detail), /Gave up after 3 attempts/);
  await w.close();
});

test('shutdown aborts running jobs and hands them back as pending, not counting the attempt', async () => {
  let running!: () => void;
  const started = new Promise<void>((resolve) => (running = resolve));
  const w = worker({
    'test.long': (job) =>
      new Promise((_, reject) => {
        running();
        job.signal.addEventListener('abort', () => reject(new Error('aborted')));
      }),
  });
  w.start();
  const op = await enqueue('test.long');
  await started;
  await w.close();
  const row = (await findOperation(database.pool, op.id))!;
  assert.equal(row.state, 'pending');
  assert.equal(row.attempts, 0);
  const next = worker({ 'test.long': async () => undefined });
  next.start();
  await waitForState(op.id, 'succeeded');
  await next.close();
});

test("one team's long jobs never take every worker: another team's job runs while they hold all but one", async () => {
  const release: (() => void)[] = [];
  const w = worker({
    'test.slow': () => new Promise<void>((resolve) => release.push(resolve)),
    'test.quick': async () => ({ detail: 'quick' }),
  });
  w.start();
  const slow: OperationRow[] = [];
  for (let i = 0; i < 6; i++) slow.push(await enqueue('test.slow', { i }, 7001));
  await until(async () => (release.length === 3 ? true : undefined), 'three slow jobs to run');
  const quick = await enqueue('test.quick', {}, 7002);
  assert.equal((await waitForState(quick.id, 'succeeded')).detail, 'quick');
  const states = await Promise.all(slow.map(async (op) => (await findOperation(database.pool, op.id))!.state));
  assert.deepEqual([...states].sort(), ['pending', 'pending', 'pending', 'running', 'running', 'running'], 'team 7001 holds 3 of the 4 workers, its other jobs wait');
  // each slow job that ends lets the next of its team run at once (the worker looks again, no wait for its poll)
  for (let ended = 0; ended < 6; ended++) {
    await until(async () => (release.length > 0 ? true : undefined), 'a slow job to run');
    release.shift()!();
  }
  for (const op of slow) await waitForState(op.id, 'succeeded');
  await w.close();
});

test('teams that hold fewer jobs go first: a waiting team is claimed before the older jobs of a busy one', async () => {
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const w = new OperationWorker({
    serverId: randomUUID(), pool: database.pool, clock, hub, log: () => undefined, pollMs: 60_000, concurrency: 2, teamShare: 2,
    handlers: {
      'test.hold': () => (holding(), gate),
      'test.order': async (job) => void order.push(String(job.operation.input.name)),
    },
  });
  workers.push(w);
  w.start();
  const hold = await enqueue('test.hold', {}, 8001);
  await held;
  // all three are announced at once (one transaction): one worker is free, team 8001 holds the other
  const queued = await withTransaction(database.pool, async (db) => {
    const add = (name: string, teamId: number) => insertOperation(db, { id: randomUUID(), kind: 'test.order', target: null, teamId, createdBy: null, input: { name }, at: clock.now() });
    return [await add('busy team, older', 8001), await add('busy team, newer', 8001), await add('waiting team', 8002)];
  });
  for (const op of queued) await waitForState(op.id, 'succeeded');
  assert.deepEqual(order, ['waiting team', 'busy team, older', 'busy team, newer']);
  release();
  await waitForState(hold.id, 'succeeded');
  await w.close();
});
