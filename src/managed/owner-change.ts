// A workspace's managed-service instances through a volume owner change (spec 4.7): their servers run as the
// workspace's UID on data that UID owns, so the change pauses them, hands their data to the new UID, and they start
// again (as the new UID) when the workspace next starts or wakes. The workspace side (workspaces/volume-owner.ts)
// calls these in that order; each is safe to run again after a server died in the middle.
import type { SecretBox } from '../core/secret-box.ts';
import { reownTree } from '../runtime/local/volume-owner.ts';
import type { VolumeOwnerResult } from '../runtime/driver.ts';
import { findDeployedLandscape } from '../store/landscapes.ts';
import { liveManagedServices, setResumeWithWorkspace, type ManagedServiceRow } from '../store/managed-services.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { openDeployedValues } from '../workspaces/service-runner.ts';
import { instancesOf } from './instances.ts';
import { managedInstanceDir } from './instance-process.ts';
import { pauseInstance, resumeInstance, type ManagedLifecycleDeps } from './lifecycle.ts';

/** Statuses whose instance is left as it is by the change (no server runs, nothing to resume). */
const restingStatuses: ReadonlySet<ManagedServiceRow['status']> = new Set(['paused', 'deleted']);

/**
 * Ends the server of every live instance of the workspace. Those that ran (or were meant to) are marked to resume
 * with the workspace first, then paused (pausing -> paused); an `invalid-provider` one stops and keeps its status (its
 * version stays disabled); a paused one stays paused and unmarked.
 */
export async function pauseForOwnerChange(deps: ManagedLifecycleDeps, workspace: WorkspaceRow): Promise<ManagedServiceRow[]> {
  const rows = await liveManagedServices(deps.pool, workspace.id);
  for (const row of rows) {
    if (restingStatuses.has(row.status) && !row.resume_with_workspace) {
      await instancesOf(deps, row.provider)?.stop(row); // nothing should run; a leftover would hold old-UID files
      continue;
    }
    const marked = row.status !== 'invalid-provider' && workspace.deleted_at === null;
    if (marked && !row.resume_with_workspace) await setResumeWithWorkspace(deps.pool, row.id, true);
    if (row.status === 'paused') await instancesOf(deps, row.provider)?.stop(row); // a run cut short after the pause
    else await pauseInstance(deps, { ...row, resume_with_workspace: marked || row.resume_with_workspace });
  }
  return rows;
}

/**
 * Hands the data of every live instance of the workspace to `uid` (group 0), keeping its modes (PostgreSQL refuses a
 * group-writable data directory) and leaving the server's own files (logs, process records) to root. Symbolic links
 * are re-owned themselves, never followed. Answers what could not be changed, shown as `/managed/<name>/...`.
 */
export async function reownManagedData(deps: Pick<ManagedLifecycleDeps, 'pool' | 'host'>, workspace: WorkspaceRow, uid: number, signal?: AbortSignal): Promise<VolumeOwnerResult> {
  const result: VolumeOwnerResult = { unchanged: [], moreUnchanged: 0 };
  for (const row of await liveManagedServices(deps.pool, workspace.id)) {
    const dir = managedInstanceDir(deps.host.dataDir, row.number);
    const tree = await reownTree(dir, `/managed/${row.name}`, uid, signal, { keepModes: true, skipRootOwned: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined; // never created (its first start failed): nothing to hand over
      throw error;
    });
    if (!tree) continue;
    result.unchanged.push(...tree.unchanged);
    result.moreUnchanged += tree.moreUnchanged;
  }
  return result;
}

/**
 * When the workspace starts or wakes: every instance the change paused starts again as the last Sync deployed it,
 * under the workspace's UID now (unpausing -> synchronized, or unknown with the reason; a failure does not stop the
 * workspace). One that something else started or deleted meanwhile is only unmarked.
 */
export async function resumeWithWorkspace(deps: ManagedLifecycleDeps, secrets: SecretBox, workspace: WorkspaceRow): Promise<void> {
  const marked = (await liveManagedServices(deps.pool, workspace.id)).filter((row) => row.resume_with_workspace);
  if (marked.length === 0) return;
  const deployed = await findDeployedLandscape(deps.pool, workspace.id);
  const values = deployed && !deployed.torn_down ? openDeployedValues(secrets, deployed).managed ?? {} : {};
  for (const row of marked) {
    const service = values[row.name];
    if (row.status !== 'paused' || !service || service.provider !== row.provider || workspace.deleted_at !== null) {
      await setResumeWithWorkspace(deps.pool, row.id, false); // a Teardown or Sync decided since; nothing to resume
      continue;
    }
    const resumed = await resumeInstance(deps, workspace, row, service);
    if (resumed.status !== 'synchronized') deps.host.log(`managed service ${row.name} of workspace ${workspace.id} did not resume after the owner change: ${resumed.details.reason ?? resumed.status}`);
  }
}
