// The lifecycle of a landscape's managed services bound to it (spec 3.4): Sync creates an instance or resumes it
// (creating/unpausing -> synchronized), Teardown pauses it (pausing -> paused, data kept), a service gone from the
// file is deleted with its data (deleting -> deleted, the row kept as a tombstone). Every status change sends
// managed_service.updated. Instances run their provider's engine (engines.ts) at the place the driver gives them on
// the workspace's service network; a failure to start leaves the instance `unknown` with the reason, and the rest
// of the landscape goes on.
import type pg from 'pg';
import { problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import { canonicalJson, type NormalLandscape, type NormalManagedService } from '../landscape/index.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { insertManagedService, liveManagedServices, setManagedServiceStatus, type ManagedServiceRow, type ManagedServiceStatus } from '../store/managed-services.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import { findProvider, isVersionEnabled, type Catalog } from './catalog.ts';
import { ManagedInstanceFailure, type InstanceDetails, type ManagedHost } from './engine.ts';
import { instancesOf, managedUnavailable, type ManagedInstances } from './instances.ts';
import type { ManagedPlanDefinition } from './providers.ts';
import { managedVersion } from './service-values.ts';
import { disabledVersionReason } from './statuses.ts';

export interface ManagedLifecycleDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  host: ManagedHost;
  catalog: Catalog;
  now: () => Date;
}

async function setStatus(
  deps: ManagedLifecycleDeps, row: ManagedServiceRow, status: ManagedServiceStatus, details?: InstanceDetails, applied: Pick<ManagedServiceRow, 'plan' | 'resources'> | object = {},
): Promise<ManagedServiceRow> {
  const at = deps.now();
  const updated = await setManagedServiceStatus(deps.pool, row.id, { status, details, ...applied }, at);
  await publishEvent(deps.pool, { type: 'managed_service.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
  return updated;
}

/** The managed services of `filled` (templates filled in) this installation runs, by name. */
export function managedOf(filled: NormalLandscape): Array<[string, NormalManagedService]> {
  return Object.entries(filled.services).filter((entry): entry is [string, NormalManagedService] => entry[1].type === 'managed');
}

function instances(deps: ManagedLifecycleDeps, provider: string): ManagedInstances {
  const found = instancesOf(deps, provider);
  if (!found) throw problem('not-available', 501, managedUnavailable(deps.driver) ?? `This installation runs no managed ${provider} services.`);
  return found;
}

/** The plan `id` of `provider` with the file's `resources` overrides as its values (check.ts kept them in bounds). */
export function effectivePlan(catalog: Catalog, provider: string, id: string, overrides: Record<string, number>): ManagedPlanDefinition | undefined {
  const plan = findProvider(catalog, provider)?.plans.find((p) => p.id === id);
  if (!plan) return undefined;
  const resources = Object.fromEntries(Object.entries(plan.resources).map(([name, b]) => [name, { ...b, value: overrides[name] ?? b.value }]));
  return { ...plan, resources };
}

/**
 * Sync: creates or resumes every managed service of `filled`, deletes those the file no longer has, and brings
 * running ones to the file (`updating` while a change reaches them). `restart` names the services the plan marks
 * `restarts`: a running instance among them has its server restarted. Answers the instances of `filled` as they
 * ended (one that could not be brought up is `unknown` with the reason: statuses.ts managedSyncFailure says so).
 */
export async function syncManagedServices(
  deps: ManagedLifecycleDeps, workspace: WorkspaceRow, filled: NormalLandscape, restart: ReadonlySet<string> = new Set(),
): Promise<ManagedServiceRow[]> {
  const wanted = managedOf(filled);
  const live = await liveManagedServices(deps.pool, workspace.id);
  for (const row of live) {
    const service = filled.services[row.name];
    // Another provider under the same name is another instance: the old one goes with its data (plan.ts says so).
    if (service?.type !== 'managed' || service.provider !== row.provider) await deleteInstance(deps, workspace, row);
  }
  const unavailable = managedUnavailable(deps.driver);
  if (wanted.length > 0 && unavailable) throw problem('not-available', 501, unavailable);
  const instances: ManagedServiceRow[] = [];
  for (const [name, service] of wanted) {
    const existing = live.find((row) => row.name === name && row.provider === service.provider);
    instances.push(await ensureInstance(deps, workspace, name, service, existing, restart.has(name)));
  }
  return instances;
}

async function ensureInstance(
  deps: ManagedLifecycleDeps, workspace: WorkspaceRow, name: string, service: NormalManagedService, existing: ManagedServiceRow | undefined, restart: boolean,
): Promise<ManagedServiceRow> {
  const version = managedVersion(service, deps.catalog, existing?.version)!;
  const planId = service.plan ?? findProvider(deps.catalog, service.provider)?.defaultPlan ?? existing?.plan ?? 'small';
  let row = existing;
  // An instance whose version the operator disabled keeps its data and is not started (health.ts says the same).
  if (row && !isVersionEnabled(deps.catalog, row.provider, row.version)) {
    if (row.status === 'invalid-provider') return row;
    return setStatus(deps, row, 'invalid-provider', { ...row.details, reason: disabledVersionReason(row.provider, row.version) });
  }
  if (!row) {
    const resources = planValues(effectivePlan(deps.catalog, service.provider, planId, service.resources));
    const fields = { workspace_id: workspace.id, team_id: workspace.team_id, name, provider: service.provider, version, plan: planId, resources, status: 'creating' as const };
    row = await insertManagedService(deps.pool, fields, deps.now());
    await publishEvent(deps.pool, { type: 'managed_service.updated', at: deps.now().toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
  } else if (row.status !== 'synchronized') {
    row = await setStatus(deps, row, row.status === 'paused' ? 'unpausing' : 'creating');
  }
  return runInstance(deps, workspace, row, service, planId, restart);
}

/** The values of a plan's resources (the file's overrides applied), as recorded on the instance. */
const planValues = (plan: ManagedPlanDefinition | undefined) => Object.fromEntries(Object.entries(plan?.resources ?? {}).map(([key, bounds]) => [key, bounds.value]));

/**
 * Places the instance and has its engine create, start or change it: `synchronized` with its details (`updating`
 * while a change reaches a running one; `restart` restarts its server), else `unknown` with the reason.
 */
async function runInstance(
  deps: ManagedLifecycleDeps, workspace: WorkspaceRow, row: ManagedServiceRow, service: NormalManagedService, planId: string, restart = false,
): Promise<ManagedServiceRow> {
  const plan = effectivePlan(deps.catalog, service.provider, planId, service.resources);
  const resources = planValues(plan);
  const running = row.status === 'synchronized';
  try {
    const request = { id: row.number, name: row.name, service, version: row.version, uid: workspace.uid, plan };
    const updating = async () => {
      row = await setStatus(deps, row, 'updating');
    };
    const details = await instances(deps, service.provider).ensure(workspaceRef(workspace), request, { restart: running && restart, ...(running && { updating }) });
    const same = row.status === 'synchronized' && row.plan === planId && sameJson(row.details, details) && sameJson(row.resources, resources);
    return same ? row : await setStatus(deps, row, 'synchronized', details, { plan: planId, resources });
  } catch (error) {
    const reason = error instanceof ManagedInstanceFailure ? error.reason : (error as Error).message;
    deps.host.log(`managed service ${row.name} of workspace ${workspace.id}: ${reason}`);
    return setStatus(deps, row, 'unknown', { ...row.details, reason });
  }
}

/** Equal as JSON whatever the order of keys (jsonb keeps its own). */
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/**
 * Resume by hand: the paused (or unknown) instance starts again as the last Sync deployed it (`service`, its
 * templates and secrets filled then), unpausing -> synchronized, or unknown with the reason.
 */
export async function resumeInstance(deps: ManagedLifecycleDeps, workspace: WorkspaceRow, row: ManagedServiceRow, service: NormalManagedService): Promise<ManagedServiceRow> {
  const unavailable = managedUnavailable(deps.driver);
  if (unavailable) throw problem('not-available', 501, unavailable);
  const unpausing = await setStatus(deps, row, 'unpausing');
  return runInstance(deps, workspace, unpausing, service, row.plan);
}

/**
 * Pauses one instance: its process ends, its data stays (pausing -> paused). An `invalid-provider` one stops and
 * keeps that status: its version stays disabled whether it runs or not.
 */
export async function pauseInstance(deps: ManagedLifecycleDeps, row: ManagedServiceRow): Promise<ManagedServiceRow> {
  if (row.status === 'invalid-provider') {
    await instancesOf(deps, row.provider)?.stop(row);
    return row;
  }
  const pausing = await setStatus(deps, row, 'pausing');
  await instancesOf(deps, row.provider)?.stop(row);
  return setStatus(deps, pausing, 'paused');
}

async function deleteInstance(deps: ManagedLifecycleDeps, workspace: WorkspaceRow, row: ManagedServiceRow): Promise<void> {
  const deleting = await setStatus(deps, row, 'deleting');
  const found = instancesOf(deps, row.provider);
  if (found) await found.remove(workspaceRef(workspace), row);
  else await deps.driver.removeManagedService?.(workspaceRef(workspace), row.name);
  await setStatus(deps, deleting, 'deleted');
}

/** Purge of the workspace: every live instance goes with its data (the rows go with the workspace's). */
export async function deleteManagedServices(deps: ManagedLifecycleDeps, workspace: WorkspaceRow): Promise<void> {
  for (const row of await liveManagedServices(deps.pool, workspace.id)) await deleteInstance(deps, workspace, row);
}

/** Teardown: every live instance of the workspace stops; its data stays for the next Sync. */
export async function pauseManagedServices(deps: ManagedLifecycleDeps, workspace: WorkspaceRow): Promise<void> {
  for (const row of await liveManagedServices(deps.pool, workspace.id)) {
    if (row.status !== 'paused') await pauseInstance(deps, row);
  }
}
