// Runs durable jobs: claims them from PostgreSQL (FOR UPDATE SKIP LOCKED), renews their leases while working,
// records progress, and ends each in succeeded or failed. Jobs of a server that died are claimed again once
// their lease runs out, so none stays `running` forever; handlers must therefore be safe to run again.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { Problem } from '../core/problems.ts';
import type { NotificationHub } from '../events/hub.ts';
import { publishEvent } from '../events/publish.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import {
  OPERATIONS_CHANNEL,
  claimOperations,
  earliestForeignLease,
  finishOperation,
  releaseOperation,
  renewLeases,
  updateOperationDetail,
  type OperationRow,
} from '../store/operations.ts';
import { LEASE_MS, decideClaim, renewEveryMs, teamShareOf } from './lifecycle.ts';

const CLOSE_WAIT_MS = 10_000;
/** The longest wait in the queue a timeline shows (an older moment of queuing is taken as a clock's mistake). */
const QUEUE_SHOWN_MS = 24 * 60 * 60_000;
/** Looked for this long after a lease's end: the claim's `lease_until < now` then holds on the database's side too. */
const LEASE_SLACK_MS = 50;
import { operationView } from './view.ts';
import { queuedTimeline, type PhaseTimeline } from '../core/phases.ts';
import { recordTimeline } from './timeline-recorder.ts';

export interface JobContext {
  operation: OperationRow;
  /** True when an earlier run of this job was cut off (its server stopped or died). */
  resumed: boolean;
  /** Aborted when the server shuts down; the job is handed back and runs again later. */
  signal: AbortSignal;
  progress(detail: string): Promise<void>;
  /**
   * The job's phases from the moment it was queued (its first phase `queue and claim`), saved with the operation
   * from the handler's first mark on (GET /operations/{id}/timeline).
   */
  timeline: PhaseTimeline;
}

export type OperationHandler = (job: JobContext) => Promise<{ detail?: string } | void>;

export interface WorkerDeps {
  /** Stable across restarts of this server (kept in its data directory): its jobs are resumed at once. */
  serverId: string;
  pool: pg.Pool;
  clock: Clock;
  hub: NotificationHub;
  handlers: Record<string, OperationHandler>;
  log: (message: string) => void;
  concurrency?: number;
  /** Jobs of one team this worker runs at once at most (default: all but one of `concurrency`, teamShareOf). */
  teamShare?: number;
  /** How often to look for work, besides being woken by NOTIFY and by the end of another server's lease. */
  pollMs?: number;
  /** How long a claim holds without renewal (default LEASE_MS); renewed every third of it. */
  leaseMs?: number;
  /** Told of every operation this worker ended, with the seconds its run took (metrics, src/metrics). */
  ended?: (kind: string, outcome: 'succeeded' | 'failed', seconds: number) => void;
}

/** Saves a change of an operation and announces it (operation.updated) in one transaction. */
export async function saveOperationChange(
  pool: pg.Pool,
  change: (db: Queryable) => Promise<OperationRow | undefined>,
): Promise<OperationRow | undefined> {
  return withTransaction(pool, async (db) => {
    const row = await change(db);
    if (row) {
      await publishEvent(db, { type: 'operation.updated', at: row.updated_at.toISOString(), team_id: row.team_id ?? undefined, operation: operationView(row) });
    }
    return row;
  });
}

export function failureOf(error: unknown): Record<string, unknown> {
  if (error instanceof Problem) return error.toBody();
  return { type: 'urn:svc:problem:internal', title: 'Internal error', status: 500, detail: (error as Error)?.message ?? String(error) };
}

export class OperationWorker {
  readonly owner: string;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  private polling?: Promise<void>;
  private pollAgain = false;
  /** Wakes the worker when the earliest lease of another server's job runs out (its server may have died). */
  private leaseTimer?: NodeJS.Timeout;
  private readonly leaseMs: number;

  constructor(private readonly deps: WorkerDeps) {
    this.owner = `${deps.serverId}/${randomUUID()}`;
    this.leaseMs = deps.leaseMs ?? LEASE_MS;
  }

  start(): void {
    this.deps.hub.subscribe(OPERATIONS_CHANNEL, { notify: () => this.poll(), reset: () => this.poll() });
    this.timers.push(setInterval(() => this.poll(), this.deps.pollMs ?? 5000).unref());
    this.timers.push(setInterval(() => this.renew(), renewEveryMs(this.leaseMs)).unref());
    this.poll();
  }

  /** Looks for work now; calls while a look is under way make it look once more afterwards. */
  poll(): void {
    if (this.closed) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = this.claim()
      .catch((error: Error) => this.deps.log(`operations: claiming failed: ${error.message}`))
      .finally(() => {
        this.polling = undefined;
        if (this.pollAgain) {
          this.pollAgain = false;
          this.poll();
        }
      });
  }

  private async claim(): Promise<void> {
    const concurrency = this.deps.concurrency ?? 4;
    const free = concurrency - this.running.size;
    if (free <= 0) return this.watchLeases();
    const now = this.deps.clock.nowMs();
    const jobs = await claimOperations(this.deps.pool, {
      owner: this.owner,
      serverId: this.deps.serverId,
      kinds: Object.keys(this.deps.handlers),
      now: new Date(now),
      leaseUntil: new Date(now + this.leaseMs),
      limit: free,
      teamShare: this.deps.teamShare ?? teamShareOf(concurrency),
    });
    await this.watchLeases();
    for (const job of jobs) {
      const abort = new AbortController();
      const done = this.run(job, abort.signal).finally(() => {
        this.running.delete(job.id);
        this.poll(); // a worker is free: a job this claim skipped (its team held its share) may run now
      });
      this.running.set(job.id, { abort, done });
    }
  }

  /** Looks again just after the earliest lease held by another owner ends, so a dead server's job is taken over then. */
  private async watchLeases(): Promise<void> {
    const until = await earliestForeignLease(this.deps.pool, this.owner, Object.keys(this.deps.handlers));
    clearTimeout(this.leaseTimer);
    if (!until || this.closed) return;
    const delay = Math.max(0, until.getTime() - this.deps.clock.nowMs()) + LEASE_SLACK_MS;
    this.leaseTimer = setTimeout(() => this.poll(), Math.min(delay, 2 ** 31 - 1)).unref();
  }

  private async run(job: OperationRow, signal: AbortSignal): Promise<void> {
    const startedAt = performance.now();
    const decision = decideClaim({ attempts: job.attempts, resumed: job.attempts > 1 });
    if (!decision.run) {
      await this.finish(job, startedAt, 'failed', undefined, { type: 'urn:svc:problem:internal', title: 'Operation abandoned', status: 500, detail: decision.reason });
      return;
    }
    await this.announce(job);
    // the database's moment of queuing is on the wall clock (created_at is the server's clock, a test's own)
    const timeline = job.queued_wall_at ? queuedTimeline(job.queued_wall_at, QUEUE_SHOWN_MS) : queuedTimeline(job.created_at);
    const recorder = recordTimeline(this.deps, job.id, timeline);
    const ended = async (failed: boolean) => {
      timeline.finish(failed);
      await recorder.flush();
    };
    const context: JobContext = {
      timeline,
      operation: job,
      resumed: job.attempts > 1,
      signal,
      progress: async (detail) => {
        await saveOperationChange(this.deps.pool, (db) => updateOperationDetail(db, job.id, this.owner, detail, this.deps.clock.now()));
      },
    };
    try {
      const result = await this.deps.handlers[job.kind](context);
      await ended(false);
      await this.finish(job, startedAt, 'succeeded', result?.detail);
    } catch (error) {
      if (signal.aborted) {
        await saveOperationChange(this.deps.pool, (db) => releaseOperation(db, job.id, this.owner, this.deps.clock.now()));
        return;
      }
      if (!(error instanceof Problem)) this.deps.log(`operation ${job.kind} ${job.id} failed: ${(error as Error)?.stack ?? error}`);
      await ended(true);
      await this.finish(job, startedAt, 'failed', undefined, failureOf(error));
    }
  }

  private async announce(job: OperationRow): Promise<void> {
    await withTransaction(this.deps.pool, (db) =>
      publishEvent(db, { type: 'operation.updated', at: job.updated_at.toISOString(), team_id: job.team_id ?? undefined, operation: operationView(job) }),
    );
  }

  private async finish(job: OperationRow, startedAt: number, state: 'succeeded' | 'failed', detail?: string, error?: object): Promise<void> {
    await saveOperationChange(this.deps.pool, (db) =>
      finishOperation(db, { id: job.id, owner: this.owner, state, detail, error: error ?? null, at: this.deps.clock.now() }),
    );
    this.deps.ended?.(job.kind, state, (performance.now() - startedAt) / 1000);
  }

  private renew(): void {
    const now = this.deps.clock.nowMs();
    renewLeases(this.deps.pool, this.owner, [...this.running.keys()], new Date(now + this.leaseMs)).catch((error: Error) =>
      this.deps.log(`operations: renewing leases failed: ${error.message}`),
    );
  }

  /** Jobs still running get their signal aborted and are handed back to be run again by the next server. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.leaseTimer);
    await this.polling;
    for (const { abort } of this.running.values()) abort.abort();
    const stopped = Promise.all([...this.running.values()].map((job) => job.done));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS)));
    if ((await Promise.race([stopped, late])) === 'late') {
      // Handlers that ignore their signal: hand their jobs back now; the process is about to end anyway.
      for (const id of this.running.keys()) await releaseOperation(this.deps.pool, id, this.owner, this.deps.clock.now());
    }
    clearTimeout(timer);
  }

  /** Resolves when no job of this worker runs (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.polling) {
      await Promise.all([this.polling, ...[...this.running.values()].map((job) => job.done)]);
    }
  }
}
