// Periodic chores (idle sleep, purge, health checks, housekeeping) run once per interval for the whole
// installation, not once per server: every server looks each interval, and runs a chore only when it is the one that
// moves the chore's `next_run_at` forward (one UPDATE decides), holding an advisory lock on it meanwhile so that a
// run longer than the interval is never joined by a second one. A dead server's turn simply falls to another.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';

/** The first key of the chores' advisory locks ('svcc'); the second is hashtext of the chore's name. */
const CHORE_LOCK_CLASS = 0x73766363;

export interface Chore {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/**
 * Claims this interval's run of `name`: its run number, or undefined when another server has it or it is not due.
 * A run is due nine tenths of an interval after the last one began, so that a server looking every interval (its
 * timer a few milliseconds early against the time its last claim recorded) does not skip a turn.
 */
export async function claimChoreRun(db: pg.PoolClient | pg.Pool, claim: { name: string; serverId: string; now: Date; intervalMs: number }): Promise<number | undefined> {
  const result = await db.query<{ runs: number }>(
    `INSERT INTO chore_runs (name, next_run_at, last_server, last_started_at, runs) VALUES ($1, $2, $3, $4, 1)
     ON CONFLICT (name) DO UPDATE SET next_run_at = EXCLUDED.next_run_at, last_server = EXCLUDED.last_server,
       last_started_at = EXCLUDED.last_started_at, runs = chore_runs.runs + 1
     WHERE chore_runs.next_run_at <= EXCLUDED.last_started_at
     RETURNING runs`,
    [claim.name, new Date(claim.now.getTime() + Math.round(claim.intervalMs * 0.9)), claim.serverId, claim.now],
  );
  return result.rows[0]?.runs;
}

export class ChoreScheduler {
  private timer?: NodeJS.Timeout;
  private readonly busy = new Set<string>();

  constructor(
    private readonly deps: { pool: pg.Pool; clock: Clock; serverId: string; log: (message: string) => void; debug?: (message: string) => void },
    private readonly chores: Chore[],
  ) {}

  /** Looks once per shortest interval, as one server did alone; the first look is one interval after the start. */
  start(): void {
    const every = Math.max(100, Math.min(...this.chores.map((c) => c.intervalMs)));
    this.timer = setInterval(() => {
      for (const chore of this.chores) void this.tick(chore);
    }, every).unref();
  }

  /** Runs `chore` if it is due and no other server runs it; answers its run number if this server ran it. */
  async tick(chore: Chore): Promise<number | undefined> {
    if (this.busy.has(chore.name)) return undefined;
    this.busy.add(chore.name);
    const client = await this.deps.pool.connect().catch((error: Error) => {
      this.deps.log(`chore ${chore.name}: ${error.message}`);
      return undefined;
    });
    if (!client) {
      this.busy.delete(chore.name);
      return undefined;
    }
    let locked = false;
    try {
      locked = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [CHORE_LOCK_CLASS, chore.name])).rows[0].locked;
      if (!locked) return undefined;
      const run = await claimChoreRun(client, { name: chore.name, serverId: this.deps.serverId, now: this.deps.clock.now(), intervalMs: chore.intervalMs });
      if (run === undefined) return undefined;
      this.deps.debug?.(`chore ${chore.name}: run ${run} by ${this.deps.serverId}`);
      await chore.run().catch((error: Error) => this.deps.log(`chore ${chore.name}: ${error.message}`));
      return run;
    } catch (error) {
      this.deps.log(`chore ${chore.name}: ${(error as Error).message}`);
      return undefined;
    } finally {
      if (locked) await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [CHORE_LOCK_CLASS, chore.name]).catch(() => undefined);
      client.release();
      this.busy.delete(chore.name);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
