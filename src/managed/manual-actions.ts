// Pause and resume by hand (POST /managed-services/{ms}/pause, /resume): checked up front by the API and again by
// the operation (managed_service.pause, managed_service.resume) once it runs, against where the instance, its
// workspace and its landscape stand then (statuses.ts decides). The operation's target is the workspace, so that
// it never runs beside a Sync or Teardown of the same landscape (one operation per workspace at a time).
import type pg from 'pg';
import { problem } from '../core/problems.ts';
import type { SecretBox } from '../core/secret-box.ts';
import type { OperationHandler } from '../operations/worker.ts';
import type { Queryable } from '../store/database.ts';
import { findDeployedLandscape, type DeployedLandscapeRow } from '../store/landscapes.ts';
import { findManagedService, type ManagedServiceRow } from '../store/managed-services.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { openDeployedValues } from '../workspaces/service-runner.ts';
import { isVersionEnabled, type Catalog } from './catalog.ts';
import { pauseInstance, resumeInstance, type ManagedLifecycleDeps } from './lifecycle.ts';
import { manualActionRefusal, type ManualAction } from './statuses.ts';

export const manualActionKinds: Record<ManualAction, string> = { pause: 'managed_service.pause', resume: 'managed_service.resume' };

export interface ActionSubject {
  row: ManagedServiceRow;
  workspace: WorkspaceRow;
  deployed: DeployedLandscapeRow | undefined;
}

/** The instance, its workspace and deployed landscape as they stand; 409 with the reason when `action` cannot start. */
export async function checkManualAction(db: Queryable, catalog: Catalog, row: ManagedServiceRow, action: ManualAction): Promise<ActionSubject> {
  const workspace = await findWorkspace(db, Number(row.workspace_id));
  if (!workspace) throw problem('conflict', 409, `The workspace of managed service ${row.name} is gone.`);
  const deployed = await findDeployedLandscape(db, workspace.id);
  const refusal = manualActionRefusal(row.name, row, action, {
    versionEnabled: isVersionEnabled(catalog, row.provider, row.version),
    tornDown: deployed?.torn_down ?? true,
    workspaceDeleted: workspace.deleted_at !== null,
    workspaceRunning: workspace.state === 'running',
  });
  if (refusal) throw problem(refusal.type, 409, refusal.detail);
  return { row, workspace, deployed };
}

export interface ManualActionDeps {
  pool: pg.Pool;
  secrets: SecretBox;
  managed: ManagedLifecycleDeps;
}

/** The status an interrupted run of `action` left behind: a run again starts from there. */
const ownMovingStatus: Record<ManualAction, ManagedServiceRow['status']> = { pause: 'pausing', resume: 'unpausing' };

export function manualActionHandlers(deps: ManualActionDeps): Record<string, OperationHandler> {
  const subjectOf = async (action: ManualAction, input: Record<string, unknown>, resumed: boolean): Promise<ActionSubject> => {
    const found = await findManagedService(deps.pool, String(input.managed_service_id));
    if (!found) throw problem('not-found', 404, 'The managed service does not exist any more.');
    // A run cut off halfway left the instance moving: it counts as where it came from.
    const row = resumed && found.status === ownMovingStatus[action] ? { ...found, status: action === 'pause' ? ('synchronized' as const) : ('paused' as const) } : found;
    return checkManualAction(deps.pool, deps.managed.catalog, row, action);
  };
  return {
    [manualActionKinds.pause]: async (job) => {
      const { row } = await subjectOf('pause', job.operation.input, job.resumed);
      await pauseInstance(deps.managed, row);
      return { detail: `Paused ${row.name}; its data kept` };
    },
    [manualActionKinds.resume]: async (job) => {
      const { row, workspace, deployed } = await subjectOf('resume', job.operation.input, job.resumed);
      const service = deployed && openDeployedValues(deps.secrets, deployed).managed?.[row.name];
      if (!service || service.provider !== row.provider) throw problem('conflict', 409, `The deployed landscape has no settings for managed service ${row.name}; Sync resumes it.`);
      const resumed = await resumeInstance(deps.managed, workspace, row, service);
      if (resumed.status !== 'synchronized') throw problem('unavailable', 503, `Managed service ${row.name} did not start: ${resumed.details.reason ?? resumed.status}`);
      return { detail: `Resumed ${row.name}` };
    },
  };
}
