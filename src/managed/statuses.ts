// The moves of managed-service statuses (spec 3.4) that the lifecycle's Sync, Teardown and removal do not make:
// what the health check concludes from what it observes, and whether a pause or resume by hand may start. Pure, so
// the rules are tested without a database or a process; lifecycle.ts and health.ts carry them out.
import { problem, type Problem } from '../core/problems.ts';
import type { ManagedServiceStatus } from '../store/managed-services.ts';
import type { InstanceDetails } from './engine.ts';

/** An operation is moving the instance: nothing else touches it meanwhile. */
export const movingStatuses: ReadonlySet<ManagedServiceStatus> = new Set(['creating', 'updating', 'pausing', 'unpausing', 'deleting']);

export interface Observation {
  /** Whether the operator left the instance's provider version enabled (--managed-disable). */
  versionEnabled: boolean;
  /** Whether its server process runs (the engine's isRunning). */
  running: boolean;
  /** Why the catalog of now refuses its deployed plan, resources or config (check.ts storedSettingsRefusal); none: accepted. */
  settingsRefusal?: string;
}

export interface InstanceState {
  status: ManagedServiceStatus;
  details: InstanceDetails;
  provider: string;
  version: string;
}

export const notRunningReason = 'its server process does not run';
export const disabledVersionReason = (provider: string, version: string) =>
  `${provider} ${version} is disabled on this installation (--managed-disable); the instance keeps its data but is not started`;
export const refusedSettingsReason = (refusal: string) =>
  `its settings are no longer accepted by this installation: ${refusal}; its data is kept, and a Sync with settings this installation accepts brings it back`;

/**
 * The status and details the health check gives an instance it observed, or undefined when it stays as it is: a
 * disabled version, or deployed settings the catalog no longer accepts, make it `invalid-provider` (nothing is
 * stopped: it runs or rests as it did); accepted again, it is `synchronized` when it runs and `paused` (data
 * kept, no server) when not. A `synchronized` one whose process is gone is `unknown` with its last known details and
 * the reason; an `unknown` one that runs again is `synchronized`. Moving and deleted instances are left alone.
 */
export function observedStatus(state: InstanceState, observation: Observation): { status: ManagedServiceStatus; details: InstanceDetails } | undefined {
  const { status, details } = state;
  if (status === 'deleted' || movingStatuses.has(status)) return undefined;
  const { reason: _reason, ...known } = details;
  if (!observation.versionEnabled) {
    if (status === 'invalid-provider') return undefined;
    return { status: 'invalid-provider', details: { ...known, reason: disabledVersionReason(state.provider, state.version) } };
  }
  if (observation.settingsRefusal !== undefined) {
    const reason = refusedSettingsReason(observation.settingsRefusal);
    if (status === 'invalid-provider' && details.reason === reason) return undefined;
    return { status: 'invalid-provider', details: { ...known, reason } };
  }
  if (status === 'invalid-provider') return { status: observation.running ? 'synchronized' : 'paused', details: known };
  if (status === 'synchronized' && !observation.running) return { status: 'unknown', details: { ...known, reason: notRunningReason } };
  if (status === 'unknown' && observation.running) return { status: 'synchronized', details: known };
  return undefined;
}

export type ManualAction = 'pause' | 'resume';

export interface ActionContext {
  versionEnabled: boolean;
  /** The workspace's landscape was torn down (its instances are paused until the next Sync). */
  tornDown: boolean;
  /** The workspace is soft-deleted. */
  workspaceDeleted: boolean;
  /** The workspace runs (its service network is up). */
  workspaceRunning: boolean;
}

/** Why a problem refuses the action: its type and what the user reads. */
export interface Refusal {
  type: 'conflict' | 'workspace-not-running';
  detail: string;
}

/**
 * Why `action` cannot start on the instance now, or undefined when it can. A pause stops a `synchronized`,
 * `unknown` or `invalid-provider` instance; a resume starts a `paused` or `unknown` one again, in a running
 * workspace whose landscape is not torn down (Sync resumes those) and while its version is enabled.
 */
export function manualActionRefusal(name: string, state: InstanceState, action: ManualAction, context: ActionContext): Refusal | undefined {
  const conflict = (detail: string): Refusal => ({ type: 'conflict', detail });
  if (state.status === 'deleted') return conflict(`Managed service ${name} is deleted; only its tombstone is left.`);
  if (context.workspaceDeleted) return conflict(`The workspace of managed service ${name} is deleted; restore it first.`);
  if (movingStatuses.has(state.status)) return conflict(`Managed service ${name} is ${state.status}; try again when that has finished.`);
  if (action === 'pause') {
    return state.status === 'paused' ? conflict(`Managed service ${name} is paused already.`) : undefined;
  }
  if (state.status === 'synchronized') return conflict(`Managed service ${name} runs already.`);
  if (!context.versionEnabled) return conflict(`Managed service ${name} cannot resume: ${disabledVersionReason(state.provider, state.version)}.`);
  if (state.status === 'invalid-provider') return conflict(`Managed service ${name} cannot resume: ${state.details.reason ?? 'its provider does not accept it'}.`);
  if (context.tornDown) return conflict(`The landscape of managed service ${name} is torn down: Sync brings it back.`);
  if (!context.workspaceRunning) {
    return { type: 'workspace-not-running', detail: `Managed service ${name} resumes on its workspace's service network: start or wake the workspace first.` };
  }
  return undefined;
}

/**
 * How the landscape's service list (3.2) shows a managed service: its instance's status as a service status with
 * the provider's words; `undefined` instance: none was created yet (or it was deleted).
 */
export function landscapeStatusOf(instance: InstanceState | undefined, tornDown: boolean): { status: string; detail: string; ready: number } {
  if (!instance) return tornDown ? { status: 'stopped', detail: 'Torn down: Sync creates it', ready: 0 } : { status: 'pending', detail: 'The next Sync creates it', ready: 0 };
  const what = `${instance.provider} ${instance.version}`;
  const reason = typeof instance.details.reason === 'string' ? instance.details.reason : undefined;
  const shown: Record<ManagedServiceStatus, [string, string]> = {
    creating: ['starting', `${what} being created`],
    updating: ['starting', `${what} being updated`],
    unpausing: ['starting', `${what} resuming`],
    synchronized: ['running', `${what} synchronized`],
    pausing: ['stopped', `${what} pausing; its data stays`],
    paused: ['stopped', `${what} paused; its data is kept`],
    deleting: ['stopped', `${what} being deleted with its data`],
    deleted: ['stopped', `${what} deleted`],
    unknown: ['failure', `${what} does not answer${reason ? `: ${reason}` : ''}; details are last known`],
    'invalid-provider': ['failure', reason ?? `${what} is not offered by this installation any more`],
  };
  const [status, detail] = shown[instance.status];
  return { status, detail, ready: instance.status === 'synchronized' ? 1 : 0 };
}

/**
 * Why a Sync that brought its managed services up did not succeed: those that did not end `synchronized` (a Sync
 * never succeeds over an instance that does not serve), each with its status and reason; undefined when all did.
 */
export function managedSyncFailure(instances: ReadonlyArray<{ name: string; status: ManagedServiceStatus; details: InstanceDetails }>): Problem | undefined {
  const failed = instances.filter((instance) => instance.status !== 'synchronized');
  if (failed.length === 0) return undefined;
  const listed = failed.map((instance) => ({ name: instance.name, status: instance.status, reason: String(instance.details.reason ?? `it is ${instance.status}`) }));
  const detail = listed.map((instance) => `${instance.name} is ${instance.status}: ${instance.reason}`).join('; ');
  return problem('managed-service-failed', 503, `The landscape was deployed, but not every managed service serves: ${detail}. Sync again once the cause is fixed.`, {
    extra: { managed_services: listed },
  });
}
