// Each server notes the uses it sees (requests the router admits, streams the API relays, actions) and writes one
// per workspace and use at most once a minute; the statement itself skips a write another server made within the
// minute. Long-lived streams note a use on every tick while open (`holdOpen`), so an open terminal keeps its
// workspace awake, not only its start.
import type { Clock } from '../core/clock.ts';
import type { Queryable } from '../store/database.ts';
import { recordUse } from '../store/workspace-uses.ts';
import { USE_WRITE_INTERVAL_MS, type Use } from './activity.ts';

/** How often an open stream counts as use again (well within the shortest idle timeout, a minute). */
const OPEN_STREAM_TICK_MS = 20_000;

export class UseRecorder {
  /** When each (workspace, kind, address) was last written by this server, by the clock. */
  private readonly written = new Map<string, number>();

  constructor(private readonly deps: { pool: Queryable; clock: Clock; log: (message: string) => void }) {}

  /** Counts `use` of the workspace now (written when the last write of the same use is a minute old). */
  note(workspaceId: number, use: Use): void {
    const now = this.deps.clock.nowMs();
    const key = `${workspaceId} ${use.kind} ${use.address}`;
    const last = this.written.get(key);
    if (last !== undefined && last > now - USE_WRITE_INTERVAL_MS && last <= now) return;
    this.written.set(key, now);
    if (this.written.size > 10_000) this.forgetOld(now);
    void recordUse(this.deps.pool, workspaceId, use, new Date(now)).catch((error: Error) => this.deps.log(`activity of workspace ${workspaceId}: ${error.message}`));
  }

  /** Counts `use` now and again every tick until the answer is called (the stream closed). */
  holdOpen(workspaceId: number, use: Use): () => void {
    this.note(workspaceId, use);
    const timer = setInterval(() => this.note(workspaceId, use), OPEN_STREAM_TICK_MS).unref();
    return () => clearInterval(timer);
  }

  private forgetOld(now: number): void {
    for (const [key, at] of this.written) if (at <= now - USE_WRITE_INTERVAL_MS) this.written.delete(key);
  }
}
