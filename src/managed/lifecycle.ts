// The lifecycle of a landscape's managed services bound to it (spec 3.4): Sync creates an instance or resumes it
// (creating/unpausing -> synchronized), Teardown pauses it (pausing -> paused, data kept), a service gone from the
// file is deleted with its data (deleting -> deleted, the row kept as a tombstone). Every status change sends
// managed_service.updated. Instances run postgres-instance.ts's processes at the place the driver gives them on
// the workspace's service network; a failure to start leaves the instance `unknown` with the reason, and the rest
// of the landscape goes on.
import type pg from 'pg';
import { problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import type { NormalLandscape, NormalManagedService } from '../landscape/index.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { insertManagedService, liveManagedServices, setManagedServiceStatus, type ManagedServiceRow, type ManagedServiceStatus } from '../store/managed-services.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import type { Catalog } from './catalog.ts';
import { createPostgresInstance, deletePostgresInstance, PostgresInstanceFailure, stopPostgresInstance, type PostgresHost } from './postgres-instance.ts';
import { managedVersion, postgresParameters } from './service-values.ts';

export interface ManagedLifecycleDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  postgres: PostgresHost;
  catalog: Catalog;
  now: () => Date;
}

type Details = ManagedServiceRow['details'];

async function setStatus(deps: ManagedLifecycleDeps, row: ManagedServiceRow, status: ManagedServiceStatus, details?: Details): Promise<ManagedServiceRow> {
  const at = deps.now();
  const updated = await setManagedServiceStatus(deps.pool, row.id, { status, details }, at);
  await publishEvent(deps.pool, { type: 'managed_service.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
  return updated;
}

/** The managed services of `filled` (templates filled in) this installation runs, by name. */
function managedOf(filled: NormalLandscape): Array<[string, NormalManagedService]> {
  return Object.entries(filled.services).filter((entry): entry is [string, NormalManagedService] => entry[1].type === 'managed');
}

/** Sync: creates or resumes every managed service of `filled`, deletes those the file no longer has. */
export async function syncManagedServices(deps: ManagedLifecycleDeps, workspace: WorkspaceRow, filled: NormalLandscape): Promise<void> {
  const wanted = managedOf(filled);
  const live = await liveManagedServices(deps.pool, workspace.id);
  for (const row of live) {
    const service = filled.services[row.name];
    // Another provider under the same name is another instance: the old one goes with its data (plan.ts says so).
    if (service?.type !== 'managed' || service.provider !== row.provider) await deleteInstance(deps, workspace, row);
  }
  if (wanted.length > 0 && !deps.driver.placeManagedService) {
    throw problem('not-available', 501, `The runtime driver ${deps.driver.name} runs no managed services.`);
  }
  for (const [name, service] of wanted) {
    const existing = live.find((row) => row.name === name && row.provider === service.provider);
    await ensureInstance(deps, workspace, name, service, existing);
  }
}

async function ensureInstance(deps: ManagedLifecycleDeps, workspace: WorkspaceRow, name: string, service: NormalManagedService, existing: ManagedServiceRow | undefined): Promise<void> {
  const version = managedVersion(service, deps.catalog, existing?.version)!;
  let row = existing;
  if (!row) {
    const plan = service.plan ?? deps.catalog.providers.find((p) => p.name === service.provider)?.defaultPlan ?? 'small';
    const fields = { workspace_id: workspace.id, team_id: workspace.team_id, name, provider: service.provider, version, plan, status: 'creating' as const };
    row = await insertManagedService(deps.pool, fields, deps.now());
    await publishEvent(deps.pool, { type: 'managed_service.updated', at: deps.now().toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
  } else if (row.status !== 'synchronized') {
    row = await setStatus(deps, row, row.status === 'paused' ? 'unpausing' : 'creating');
  }
  const p = postgresParameters(name, service, version);
  const details: Details = { host: p.host, port: p.port, database: p.database, user: p.user, version };
  try {
    const place = await deps.driver.placeManagedService!(workspaceRef(workspace), name);
    const extensions = Array.isArray(service.config.extensions) ? service.config.extensions.map(String) : undefined;
    const locale = typeof service.config.locale === 'string' ? service.config.locale : undefined;
    await createPostgresInstance(deps.postgres, {
      id: row.number, major: Number(version), database: p.database, user: p.user, password: p.password, uid: workspace.uid,
      netns: place.netns, address: place.address, port: p.port, ...(extensions && { extensions }), ...(locale && { locale }),
    });
    if (row.status !== 'synchronized' || JSON.stringify(row.details) !== JSON.stringify(details)) await setStatus(deps, row, 'synchronized', details);
  } catch (error) {
    const reason = error instanceof PostgresInstanceFailure ? error.reason : (error as Error).message;
    deps.postgres.log(`managed service ${name} of workspace ${workspace.id}: ${reason}`);
    await setStatus(deps, row, 'unknown', { ...details, reason });
  }
}

async function deleteInstance(deps: ManagedLifecycleDeps, workspace: WorkspaceRow, row: ManagedServiceRow): Promise<void> {
  const deleting = await setStatus(deps, row, 'deleting');
  await deletePostgresInstance(deps.postgres, row.number);
  await deps.driver.removeManagedService?.(workspaceRef(workspace), row.name);
  await setStatus(deps, deleting, 'deleted');
}

/** Purge of the workspace: every live instance goes with its data (the rows go with the workspace's). */
export async function deleteManagedServices(deps: ManagedLifecycleDeps, workspace: WorkspaceRow): Promise<void> {
  for (const row of await liveManagedServices(deps.pool, workspace.id)) await deleteInstance(deps, workspace, row);
}

/** Teardown: every live instance of the workspace stops; its data stays for the next Sync. */
export async function pauseManagedServices(deps: ManagedLifecycleDeps, workspace: WorkspaceRow): Promise<void> {
  for (const row of await liveManagedServices(deps.pool, workspace.id)) {
    if (row.status === 'paused') continue;
    const pausing = await setStatus(deps, row, 'pausing');
    await stopPostgresInstance(deps.postgres, row.number);
    await setStatus(deps, pausing, 'paused');
  }
}
