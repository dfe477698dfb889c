// The managed-service chores of a server (run at its start and every minute with the workspace chores): the health
// check that shows an instance `unknown` when its process is gone and `invalid-provider` when the operator disabled
// its version or the catalog no longer accepts its deployed plan, resources or config (statuses.ts decides, this carries it out), and the purge of tombstones 7 days after their deletion.
import { DAY } from '../core/clock.ts';
import { publishEvent } from '../events/publish.ts';
import { findDeployedLandscape, type DeployedLandscapeRow } from '../store/landscapes.ts';
import { allLiveManagedServices, moveManagedServiceStatus, purgeManagedTombstones, type ManagedServiceRow } from '../store/managed-services.ts';
import { isVersionEnabled, type Catalog } from './catalog.ts';
import { storedSettingsRefusal } from './check.ts';
import { instancesOf } from './instances.ts';
import type { ManagedLifecycleDeps } from './lifecycle.ts';
import { movingStatuses, observedStatus } from './statuses.ts';

/** Spec 8: a deleted managed service is retained 7 days (listed under recently deleted), then purged. */
export const TOMBSTONE_RETENTION_MS = 7 * DAY;

type ChoreDeps = Pick<ManagedLifecycleDeps, 'pool' | 'host' | 'catalog' | 'now' | 'driver'>;

async function announce(deps: ChoreDeps, row: ManagedServiceRow, at: Date): Promise<void> {
  await publishEvent(deps.pool, { type: 'managed_service.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
}

/** Looks at every settled live instance; answers those whose status moved, as `id: status`. */
export async function checkManagedHealth(deps: ChoreDeps): Promise<string[]> {
  const moved: string[] = [];
  const deployed = new Map<number, DeployedLandscapeRow | undefined>();
  for (const row of await allLiveManagedServices(deps.pool)) {
    if (movingStatuses.has(row.status)) continue;
    const instances = instancesOf(deps, row.provider);
    const running = instances ? await instances.isRunning(row).catch(() => false) : false;
    if (!deployed.has(row.workspace_id)) deployed.set(row.workspace_id, await findDeployedLandscape(deps.pool, row.workspace_id));
    const settingsRefusal = refusalOf(deps.catalog, row, deployed.get(row.workspace_id));
    const next = observedStatus(row, { versionEnabled: isVersionEnabled(deps.catalog, row.provider, row.version), running, settingsRefusal });
    if (!next) continue;
    const at = deps.now();
    // Only from the status it was read in: a Sync or pause that moved it meanwhile wins.
    const updated = await moveManagedServiceStatus(deps.pool, row.id, row.status, next, at);
    if (!updated) continue;
    await announce(deps, updated, at);
    moved.push(`${row.id}: ${updated.status}`);
  }
  return moved;
}

/** Why the catalog refuses the instance's settings as its workspace's last Sync deployed them (none: accepted). */
function refusalOf(catalog: Catalog, row: ManagedServiceRow, deployed: DeployedLandscapeRow | undefined): string | undefined {
  const service = deployed?.normal.services[row.name];
  const config = service?.type === 'managed' && service.provider === row.provider ? service.config : {};
  return storedSettingsRefusal(catalog, { name: row.name, provider: row.provider, plan: row.plan, resources: row.resources, config });
}

/** Purges the tombstones older than the retention (GET then answers 404); each purge sends managed_service.updated. */
export async function purgeExpiredManagedTombstones(deps: ChoreDeps): Promise<string[]> {
  const at = deps.now();
  const purged = await purgeManagedTombstones(deps.pool, new Date(at.getTime() - TOMBSTONE_RETENTION_MS));
  for (const row of purged) await announce(deps, row, at);
  return purged.map((row) => row.id);
}
