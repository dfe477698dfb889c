// Moving a workspace between states: one transaction that locks the row, asks the state machine, saves the
// result and announces it (workspace.updated and friends), so concurrent operations cannot interleave.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { problem } from '../core/problems.ts';
import { publishEvent, type EventType } from '../events/publish.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import { findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { applyWorkspaceEvent, type SleepReason, type WorkspaceEvent, type WorkspaceStateName, type WorkspaceStatus } from './lifecycle.ts';
import { workspaceView, type WorkspaceUrls } from './view.ts';

export interface WorkspaceDeps {
  pool: pg.Pool;
  clock: Clock;
  urls: WorkspaceUrls;
}

export function statusOf(row: WorkspaceRow): WorkspaceStatus {
  return {
    state: row.state as WorkspaceStateName,
    statusDetail: row.status_detail,
    sleepReason: (row.sleep_reason ?? undefined) as SleepReason | undefined,
    fromGit: row.git_repo !== null,
    beforeDelete: (row.before_delete ?? undefined) as WorkspaceStateName | undefined,
    beforeReown: (row.before_reown ?? undefined) as WorkspaceStateName | undefined,
  };
}

export async function announceWorkspace(db: Queryable, type: EventType, row: WorkspaceRow, urls: WorkspaceUrls): Promise<void> {
  await publishEvent(db, {
    type,
    at: row.updated_at.toISOString(),
    team_id: row.team_id,
    workspace_id: row.id,
    workspace: workspaceView(row, urls),
  });
}

/**
 * Applies `event` to the workspace and saves `extra` fields with it. Throws 409 `conflict` with the state machine's
 * reason when the move is not allowed, 404 when the workspace is gone.
 */
export async function transitionWorkspace(
  deps: WorkspaceDeps,
  id: number,
  event: WorkspaceEvent,
  extra: Partial<WorkspaceRow> = {},
  announceAs: EventType = 'workspace.updated',
): Promise<WorkspaceRow> {
  return withTransaction(deps.pool, async (db) => {
    const row = await findWorkspace(db, id, true);
    if (!row) throw problem('not-found', 404, 'The workspace does not exist any more.');
    const next = applyWorkspaceEvent(statusOf(row), event);
    if (!next.ok) throw problem('conflict', 409, next.refusal);
    const saved = (await updateWorkspace(
      db,
      id,
      {
        state: next.status.state,
        status_detail: next.status.statusDetail,
        sleep_reason: next.status.sleepReason ?? null,
        before_delete: next.status.beforeDelete ?? null,
        before_reown: next.status.beforeReown ?? null,
        ...extra,
      },
      deps.clock.now(),
    ))!;
    await announceWorkspace(db, announceAs, saved, deps.urls);
    return saved;
  });
}

/** Checks a move without making it (to refuse a request before queuing an operation). */
export function checkTransition(row: WorkspaceRow, event: WorkspaceEvent): void {
  const next = applyWorkspaceEvent(statusOf(row), event);
  if (!next.ok) throw problem('conflict', 409, next.refusal);
}
