// Periodic workspace chores: idle workspaces go to sleep ("nobody used it"); deleted ones are purged after 7 days.
import { enqueueOperation } from '../operations/queue.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import { findWorkspace, idleWorkspaces, workspacesToPurge } from '../store/workspaces.ts';
import { stopWorkspaceProcesses, type WorkspaceOperationDeps } from './operations.ts';
import { transitionWorkspace } from './service.ts';

export async function sleepIdleWorkspaces(deps: WorkspaceOperationDeps): Promise<number[]> {
  const slept: number[] = [];
  for (const id of await idleWorkspaces(deps.pool, deps.clock.now())) {
    const busy = await withTransaction(deps.pool, (db) => activeOperationOn(db, `/workspaces/${id}`));
    const row = await findWorkspace(deps.pool, id);
    if (busy || !row || row.state !== 'running') continue;
    await stopWorkspaceProcesses(deps, row, 'The workspace went to sleep: nobody used it');
    await transitionWorkspace(deps, id, { type: 'sleep', reason: 'idle' }, { editor_host: null, editor_port: null });
    slept.push(id);
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
