// Moving a team's workspace volumes to the UID `security.defaultUid` gives them (spec 4.7), as the durable operation
// `workspace.volume_owner`. Each workspace that needs it, soft-deleted ones included, in turn: it shows Stopped
// "Changing the owner of the volume" and its processes end; the driver re-owns its files as root; then it goes back
// to what it was (a running one starts again) under the new UID, or under its old one when its files could not all
// be changed. Run again after its server died, it goes on from what the rows say (before_reown, uid).
import { Problem, problem } from '../core/problems.ts';
import { enqueueOperation } from '../operations/queue.ts';
import type { JobContext, OperationHandler } from '../operations/worker.ts';
import type { VolumeOwnerResult } from '../runtime/driver.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn } from '../store/operations.ts';
import { findWorkspace, updateWorkspace, workspacesNeedingOwner, type WorkspaceRow } from '../store/workspaces.ts';
import { applyWorkspaceEvent } from './lifecycle.ts';
import { stopWorkspaceProcesses, workspaceRef, type WorkspaceOperationDeps } from './operations.ts';
import { announceWorkspace, statusOf, transitionWorkspace } from './service.ts';

export const VOLUME_OWNER_KIND = 'workspace.volume_owner';

/** The operation's target: one change of a team's volume owners runs at a time. */
export const volumeOwnerTarget = (teamId: number) => `/teams/${teamId}/volume-owner`;

export interface UnchangedWorkspace {
  id: number;
  name: string;
  reason: string;
}

const STOP_REASON = 'The owner of the volume is being changed';

const volumeOwnerHandler = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const teamId = Number(job.operation.input.team_id);
  const firstUid = Number(job.operation.input.default_uid);
  // A server that takes the job over may run another runtime than the one that accepted it.
  if (!deps.driver.reownVolume) throw problem('not-available', 501, `The ${deps.driver.name} runtime of this server cannot change the owner of volumes.`);
  const rows = await workspacesNeedingOwner(deps.pool, teamId, firstUid);
  const unchanged: UnchangedWorkspace[] = [];
  for (const [i, row] of rows.entries()) {
    await job.progress(`Changing the owner of the volume of ${row.name} (${i + 1} of ${rows.length})`);
    const failure = await reownWorkspace(deps, job, row, firstUid + row.uid_index);
    if (failure) unchanged.push({ id: row.id, name: row.name, reason: failure });
  }
  const changed = rows.length - unchanged.length;
  if (unchanged.length > 0) {
    const names = unchanged.map((w) => `${w.name}: ${w.reason}`).join('; ');
    throw problem('volume-owner-failed', 409, `${changed} of ${rows.length} volumes now belong to their new UID; these keep their old UID: ${names}.`, {
      extra: { workspaces: unchanged },
    });
  }
  return { detail: `${changed} of ${rows.length} volumes now belong to their new UID` };
};

/**
 * One workspace: stop (its managed-service instances paused too), re-own its volume and then its instances' data, go
 * back. Answers why its files could not all be changed (nothing when they were); then its instances' data goes back
 * to the old UID, which the workspace keeps.
 */
async function reownWorkspace(deps: WorkspaceOperationDeps, job: JobContext, row: WorkspaceRow, uid: number): Promise<string | undefined> {
  if (!row.before_reown) {
    const held = await holdForReown(deps, row);
    if (held) return held;
  } else {
    await stopWorkspaceProcesses(deps, row, STOP_REASON); // resumed: whatever ran meanwhile ends
  }
  let failure: string | undefined;
  try {
    await deps.managedOwner?.pause(row);
    failure = unchangedText(await deps.driver.reownVolume!(workspaceRef(row), uid, job.signal));
    if (!failure && deps.managedOwner) failure = unchangedText(await deps.managedOwner.reown(row, uid, job.signal));
  } catch (error) {
    if (job.signal.aborted) throw error; // the server stops: the job runs again from here
    failure = (error as Error).message;
  }
  if (failure && deps.managedOwner) {
    // Their modes are the provider's (user only): data left half on the new UID would be closed to the old one.
    const back = await deps.managedOwner.reown(row, row.uid, job.signal).catch((error: Error) => ({ unchanged: [{ path: '', reason: error.message }], moreUnchanged: 0 }));
    if (back.unchanged.length > 0) deps.log?.(`workspace ${row.id}: the data of its managed services did not all go back to UID ${row.uid}: ${unchangedText(back)}`);
  }
  await finishReown(deps, row.id, failure ? undefined : uid, job);
  return failure;
}

/** "could not change /data/app/x (reason), ... and 3 more", or nothing when everything changed. */
function unchangedText(result: VolumeOwnerResult): string | undefined {
  if (result.unchanged.length === 0) return undefined;
  const first = result.unchanged.map((entry) => `${entry.path} (${entry.reason})`).join(', ');
  const more = result.moreUnchanged > 0 ? ` and ${result.moreUnchanged} more` : '';
  return `could not change ${first}${more}`;
}

/** Stopped "Changing the owner of the volume", then its processes end; a reason when it is busy with an operation. */
async function holdForReown(deps: WorkspaceOperationDeps, row: WorkspaceRow): Promise<string | undefined> {
  try {
    await deps.gates.run(row.id, 'stop', async () => {
      const busy = await withTransaction(deps.pool, (db) => activeOperationOn(db, `/workspaces/${row.id}`));
      if (busy) throw problem('conflict', 409, `the workspace is busy (${busy.kind}); change the owner again when it has finished`);
      // Saved first: from now on nothing wakes or starts it, then what runs ends.
      const held = await transitionWorkspace(deps, row.id, { type: 'reown' }, { editor_host: null, editor_port: null });
      await stopWorkspaceProcesses(deps, held, STOP_REASON);
    });
    return undefined;
  } catch (error) {
    if (error instanceof Problem && error.status === 409) return error.detail ?? error.message;
    throw error;
  }
}

/**
 * Back to the state it had (one transaction): under `uid` when given, else its old UID. A workspace that goes back to
 * running gets its start queued in the same transaction, as a wake does.
 */
async function finishReown(deps: WorkspaceOperationDeps, id: number, uid: number | undefined, job: JobContext): Promise<void> {
  await withTransaction(deps.pool, async (db) => {
    const row = await findWorkspace(db, id, true);
    if (!row) return;
    const next = applyWorkspaceEvent(statusOf(row), { type: 'reowned' });
    if (!next.ok) throw problem('conflict', 409, next.refusal);
    const saved = (await updateWorkspace(
      db,
      id,
      {
        state: next.status.state,
        status_detail: next.status.statusDetail,
        sleep_reason: next.status.sleepReason ?? null,
        before_delete: next.status.beforeDelete ?? null,
        before_reown: null,
        ...(uid === undefined ? {} : { uid }),
      },
      deps.clock.now(),
    ))!;
    await announceWorkspace(db, 'workspace.updated', saved, deps.urls);
    if (saved.state === 'waking_up') {
      const target = `/workspaces/${id}`;
      await enqueueOperation(db, {
        kind: 'workspace.wake',
        target,
        teamId: saved.team_id,
        createdBy: job.operation.created_by,
        input: { workspace_id: id, start: true },
        at: deps.clock.now(),
      });
    }
  });
}

export function volumeOwnerHandlers(deps: WorkspaceOperationDeps): Record<string, OperationHandler> {
  return { [VOLUME_OWNER_KIND]: volumeOwnerHandler(deps) };
}
