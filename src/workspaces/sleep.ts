// Putting a workspace to sleep or stopping it, in one place for the API's actions, the idle chore and the
// reconciliation at start: every process ends, then the state is saved. It runs behind the workspace's pod gate
// (pod-gate.ts), so a wake that was asked meanwhile starts the pods only after, from the state saved here.
import { problem } from '../core/problems.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import type { WorkspaceEvent } from './lifecycle.ts';
import { stopWorkspaceProcesses, type WorkspaceOperationDeps } from './operations.ts';
import { transitionWorkspace, type WorkspaceDeps } from './service.ts';

export type SleepDeps = WorkspaceDeps & Pick<WorkspaceOperationDeps, 'driver' | 'stages' | 'gates'>;

export interface SleepOptions {
  /** Refuses the move (throws) for the workspace as it is once the gate is passed. */
  check?: (row: WorkspaceRow) => void | Promise<void>;
  /** Why stage runs were aborted, for their record. */
  reason?: string;
}

/**
 * Stops every process of the workspace and saves `event` (a sleep with its reason, or a stop). 409 `conflict` when
 * an operation (a wake, a delete, ...) is on the workspace or a wake is starting its pods; 404 when it is gone.
 */
export async function sleepWorkspace(
  deps: SleepDeps,
  id: number,
  event: Extract<WorkspaceEvent, { type: 'sleep' | 'stop' }>,
  options: SleepOptions = {},
): Promise<WorkspaceRow> {
  return deps.gates.run(id, 'stop', async () => {
    const row = await findWorkspace(deps.pool, id);
    if (!row) throw problem('not-found', 404, 'The workspace does not exist any more.');
    await options.check?.(row);
    // An operation queued from now on waits at the gate until this has finished.
    const busy = await withTransaction(deps.pool, (db) => activeOperationOn(db, `/workspaces/${id}`));
    if (busy) throw problem('conflict', 409, `The workspace is busy (${busy.kind}); try again when it has finished.`);
    // A sleeping workspace is woken on this machine: its networks stay for the wake (not when the node is drained).
    const sleeping = event.type === 'sleep' && event.reason !== 'node-drained';
    await stopWorkspaceProcesses(deps, row, options.reason, { sleeping });
    // when it went to sleep, for "asleep since 14:02" (workspaces/activity.ts)
    const slept = event.type === 'sleep' ? { slept_at: deps.clock.now() } : {};
    return transitionWorkspace(deps, id, event, { editor_host: null, editor_port: null, ...slept });
  });
}
