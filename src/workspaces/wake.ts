// What blocks a wake (spec 3.1), in one place for the API's wake action and the router's wake on request, and
// the wake itself as an operation.
import type pg from 'pg';
import { enqueueOperation } from '../operations/queue.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { sleepReasonTexts, type SleepReason } from './lifecycle.ts';
import type { InstallationPlans } from '../capacity/plans.ts';
import { capacityWakeBlocker } from '../capacity/team-capacity.ts';

export interface WakeBlocker {
  reason: string;
  retryAfterSeconds: number;
}

export function wakeBlocker(row: WorkspaceRow): WakeBlocker | undefined {
  if (row.before_reown) return { reason: 'The workspace is busy with its volume (changing its owner).', retryAfterSeconds: 5 };
  if (row.state === 'stopped') return { reason: 'The workspace is stopped; start it from the console.', retryAfterSeconds: 60 };
  if (row.sleep_reason === 'archive-restore') return { reason: 'The workspace is busy with its volume (restoring an archive).', retryAfterSeconds: 5 };
  if (row.archive_sha256) return { reason: 'The workspace is archived; restore its archive before waking it.', retryAfterSeconds: 60 };
  return undefined;
}

/** Why a sleeping (or waking) workspace slept, as clients are told (3.1 "Wake reasons shown to clients"). */
export function wakeReason(row: WorkspaceRow): string | undefined {
  return row.sleep_reason ? sleepReasonTexts[row.sleep_reason as SleepReason] : undefined;
}

/** What the waiting page says happens now: a workspace still `sleeping` has just been asked to wake up. */
export function wakingStatusText(row: WorkspaceRow): string {
  return row.state === 'sleeping' || !row.status_detail ? 'Waking up' : row.status_detail;
}

export const busyBlocker = (kind: string): WakeBlocker => ({ reason: `The workspace is busy (${kind}); waking follows when it has finished.`, retryAfterSeconds: 5 });

/** What a wake is for: `servicesFirst`, a request to one of its services (its editor runs in the background meanwhile). */
export interface WakeRequest {
  servicesFirst?: boolean;
}

/**
 * Queues a wake of a sleeping workspace unless one runs already; a blocker when something else holds the
 * workspace. Answers nothing when the wake is under way.
 */
export async function requestWake(pool: pg.Pool, row: WorkspaceRow, userId: number, at: Date, plans: InstallationPlans, wake: WakeRequest = {}): Promise<WakeBlocker | undefined> {
  const blocked = wakeBlocker(row) ?? (await capacityWakeBlocker(pool, plans, row));
  if (blocked) return blocked;
  const target = `/workspaces/${row.id}`;
  return withTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`wake:${row.id}`]);
    const busy = await activeOperationOn(db, target);
    if (busy) return busy.kind === 'workspace.wake' ? undefined : busyBlocker(busy.kind);
    await enqueueOperation(db, { kind: 'workspace.wake', target, teamId: row.team_id, createdBy: userId, input: { workspace_id: row.id, ...(wake.servicesFirst ? { services_first: true } : {}) }, at });
    return undefined;
  });
}

export type WakeWait =
  | { kind: 'running'; row: WorkspaceRow }
  | { kind: 'blocked'; blocker: WakeBlocker }
  | { kind: 'not-running'; row: WorkspaceRow }
  | { kind: 'still-waking'; row: WorkspaceRow };

/**
 * Wakes a sleeping workspace (as the router does for a request) and waits until it runs, polling its row until
 * `timeoutMs` passed: for what needs the pod itself, such as a shell. Stopped, failed or deleting ones are not woken.
 */
export async function wakeAndWait(
  pool: pg.Pool,
  row: WorkspaceRow,
  userId: number,
  now: () => Date,
  read: (id: number) => Promise<WorkspaceRow | undefined>,
  timeoutMs: number,
  plans: InstallationPlans,
): Promise<WakeWait> {
  const deadline = performance.now() + timeoutMs;
  let current = row;
  for (;;) {
    if (current.state === 'running') return { kind: 'running', row: current };
    if (current.state === 'sleeping') {
      const blocker = await requestWake(pool, current, userId, now(), plans);
      if (blocker) return { kind: 'blocked', blocker };
    } else if (current.state !== 'waking_up') return { kind: 'not-running', row: current };
    if (performance.now() > deadline) return { kind: 'still-waking', row: current };
    await new Promise((resolve) => setTimeout(resolve, 250));
    current = (await read(current.id)) ?? current;
  }
}
