// Periodic workspace chores: idle workspaces go to sleep ("nobody used it"); deleted ones are purged after 7 days.
import { enqueueOperation } from '../operations/queue.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import { findWorkspace, idleWorkspaces, workspacesToPurge, type WorkspaceRow } from '../store/workspaces.ts';
import { Problem, problem } from '../core/problems.ts';
import type { WorkspaceOperationDeps } from './operations.ts';
import { sleepWorkspace } from './sleep.ts';

export async function sleepIdleWorkspaces(deps: WorkspaceOperationDeps): Promise<number[]> {
  const slept: number[] = [];
  const running = (row: WorkspaceRow) => {
    if (row.state !== 'running') throw problem('conflict', 409, 'The workspace is not running.');
  };
  for (const id of await idleWorkspaces(deps.pool, deps.clock.now())) {
    const options = { check: running, reason: 'The workspace went to sleep: nobody used it' };
    // a workspace that is busy, not running or gone is left as it is
    const asleep = await sleepWorkspace(deps, id, { type: 'sleep', reason: 'idle' }, options).catch((error: unknown) => {
      if (error instanceof Problem) return undefined;
      throw error;
    });
    if (asleep) slept.push(id);
  }
  return slept;
}

export async function purgeExpiredWorkspaces(deps: WorkspaceOperationDeps): Promise<number[]> {
  const queued: number[] = [];
  for (const id of await workspacesToPurge(deps.pool, deps.clock.now())) {
    await withTransaction(deps.pool, async (db) => {
      const target = `/workspaces/${id}`;
      if (await activeOperationOn(db, target)) return;
      const row = await findWorkspace(db, id);
      await enqueueOperation(db, { kind: 'workspace.purge', target, teamId: row?.team_id ?? null, createdBy: null, input: { workspace_id: id }, at: deps.clock.now() });
      queued.push(id);
    });
  }
  return queued;
}
