// A dead editor is noticed (issue 35): the driver says at once when an editor pod this server started ends without
// being stopped (its processes died). The workspace then shows Error, "The IDE does not start: <reason>" (spec 3.1),
// and its editor is started again with backoff (a wake operation marked `editor_restart`, which keeps that status
// until the editor answers) until it runs, or someone puts it to sleep, stops or deletes it.
import { restartDelayMs, type BackoffPolicy } from '../agent/backoff.ts';
import { enqueueOperation } from '../operations/queue.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import { findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { applyWorkspaceEvent } from './lifecycle.ts';
import { announceWorkspace, statusOf, type WorkspaceDeps } from './service.ts';

/** The editor's restarts: 1 s after its death, doubling up to a minute while it keeps failing. */
export const editorRestartBackoff: BackoffPolicy = { baseMs: 1000, maxMs: 60_000 };
/** A death this soon after the last one counts as the same failure: the backoff goes on growing. */
const SAME_FAILURE_MS = 120_000;

/** The statuses an editor restart retries from: the editor's own failure, or its pod's agent's. */
export const restartsFrom = (row: Pick<WorkspaceRow, 'state' | 'status_detail' | 'deleted_at'>): boolean =>
  row.state === 'error' && !row.deleted_at && /^(The IDE does not start|Installing the agent failed): /.test(row.status_detail);

/** Whether an operation on the workspace stands in the way of marking its editor dead: any but a landscape's. */
const holdsTheEditor = (kind: string | undefined) => kind !== undefined && !kind.startsWith('landscape.');

export interface EditorWatchDeps extends WorkspaceDeps {
  driver: Pick<RuntimeDriver, 'onEditorExit'>;
  log: (message: string) => void;
  /** Puts a running workspace whose node was drained to sleep ("Asleep since its pod was evicted"). */
  sleepDrained?: (workspaceId: number) => Promise<void>;
}

export class EditorWatch {
  private readonly failures = new Map<number, { count: number; lastAt: number }>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private unsubscribe?: () => void;
  private closed = false;

  constructor(private readonly deps: EditorWatchDeps) {}

  /** Listens to the driver; workspaces an earlier server left with a dead editor are retried too. */
  async start(): Promise<void> {
    this.unsubscribe = this.deps.driver.onEditorExit?.((id, how, loss) => {
      const moved = loss === 'node-drained' && this.deps.sleepDrained
        ? this.deps.sleepDrained(id).then(() => this.deps.log(`workspace ${id}: its node was drained (${how}); it sleeps`))
        : this.editorDied(id, `its processes ended (${how}); it is started again`);
      moved.catch((error: Error) => this.deps.log(`editor of workspace ${id}: ${error.message}`));
    });
    const left = await this.deps.pool.query<{ id: number }>(
      "SELECT id FROM workspaces WHERE state = 'error' AND status_detail LIKE 'The IDE does not start:%' AND deleted_at IS NULL",
    );
    for (const { id } of left.rows) this.schedule(id);
  }

  /**
   * The editor of a running workspace died: Error with the reason (workspace.updated), and a restart after the
   * backoff. Nothing when the workspace no longer runs or an operation of its own holds it (a sleep, a stop).
   */
  async editorDied(id: number, reason: string): Promise<boolean> {
    const moved = await withTransaction(this.deps.pool, async (db) => {
      const busy = await activeOperationOn(db, `/workspaces/${id}`);
      const row = await findWorkspace(db, id, true);
      if (!row || row.deleted_at || row.state !== 'running' || holdsTheEditor(busy?.kind)) return undefined;
      const next = applyWorkspaceEvent(statusOf(row), { type: 'failed', stage: 'ide', reason });
      if (!next.ok) return undefined;
      const fields = { state: next.status.state, status_detail: next.status.statusDetail, sleep_reason: null, editor_host: null, editor_port: null };
      const saved = (await updateWorkspace(db, id, fields, this.deps.clock.now()))!;
      await announceWorkspace(db, 'workspace.updated', saved, this.deps.urls);
      return saved;
    });
    if (!moved) return false;
    this.deps.log(`workspace ${id}: ${moved.status_detail}`);
    const now = this.deps.clock.nowMs();
    const last = this.failures.get(id);
    this.failures.set(id, { count: last && now - last.lastAt < SAME_FAILURE_MS ? last.count : 0, lastAt: now });
    this.schedule(id);
    return true;
  }

  /** Looks again after the next delay of the backoff. */
  private schedule(id: number): void {
    if (this.closed || this.timers.has(id)) return;
    const failure = this.failures.get(id) ?? { count: 0, lastAt: this.deps.clock.nowMs() };
    failure.count += 1;
    this.failures.set(id, failure);
    const timer = setTimeout(() => {
      this.timers.delete(id);
      this.restart(id).catch((error: Error) => {
        this.deps.log(`restarting the editor of workspace ${id}: ${error.message}`);
        this.schedule(id);
      });
    }, restartDelayMs(failure.count, editorRestartBackoff));
    timer.unref();
    this.timers.set(id, timer);
  }

  /** Queues the restart unless the workspace moved on (it runs, sleeps, stopped) or an operation holds it. */
  private async restart(id: number): Promise<void> {
    const row = await findWorkspace(this.deps.pool, id);
    if (!row || !restartsFrom(row)) return;
    const target = `/workspaces/${id}`;
    await withTransaction(this.deps.pool, async (db) => {
      if (await activeOperationOn(db, target)) return;
      const input = { workspace_id: id, editor_restart: true };
      await enqueueOperation(db, { kind: 'workspace.wake', target, teamId: row.team_id, createdBy: null, input, at: this.deps.clock.now() });
    });
    this.schedule(id); // it runs by then, or its restart failed with the reason (then again, later)
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
