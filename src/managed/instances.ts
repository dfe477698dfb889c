// Managed instances wherever the runtime driver runs them, so the lifecycle, the health check, dumps and owner
// changes never ask which driver that is. Two forms behind one interface:
// - placed (the local driver): the driver gives the instance a place on the workspace's service network
//   (`placeManagedService`: a network namespace and an address) and the provider's engine (engine.ts) runs its
//   processes there itself;
// - described (the Kubernetes driver): the provider's described engine (described-engine.ts) writes what its server
//   process is (src/runtime/managed-process.ts) and the driver runs that (a StatefulSet with its claim and a Service).
import type { ManagedServiceRow } from '../store/managed-services.ts';
import type { RuntimeDriver, WorkspaceRef } from '../runtime/driver.ts';
import { managedProcessRef, type ManagedProcessRef } from '../runtime/managed-process.ts';
import { describedEngineOf, describedEngines } from './described-engines.ts';
import { ManagedInstanceFailure, type DumpInfo, type EnsureOptions, type InstanceDetails, type InstanceRequest, type ManagedHost } from './engine.ts';
import { engineOf, providerEngines } from './engines.ts';

/** What of a managed service's row names its instance. */
export type InstanceRow = Pick<ManagedServiceRow, 'number' | 'name' | 'provider' | 'team_id' | 'workspace_id'>;

/** A request before the driver placed the instance (the place is the driver's to give). */
export type UnplacedRequest = Omit<InstanceRequest, 'netns' | 'address'>;

export interface ManagedInstances {
  /** Creates or resumes the instance and brings it to the request (engine.ts `ensure`); answers its details. */
  ensure(workspace: WorkspaceRef, request: UnplacedRequest, options?: EnsureOptions): Promise<InstanceDetails>;
  /** Pauses: its process ends, its data stays. Idempotent. */
  stop(row: InstanceRow): Promise<void>;
  /** Deletes its process, its data and its place. Idempotent. */
  remove(workspace: WorkspaceRef, row: InstanceRow): Promise<void>;
  isRunning(row: InstanceRow): Promise<boolean>;
  /** The request of a running instance at its place, for a dump or a restore. */
  placed(workspace: WorkspaceRef, request: UnplacedRequest): Promise<InstanceRequest>;
  dump?(request: InstanceRequest, file: string): Promise<DumpInfo>;
  restore?(request: InstanceRequest, file: string): Promise<void>;
  /** What this installation lacks to dump and restore, in words for a 501 (engine.ts). */
  missingDumpTools?(): Promise<string | undefined>;
}

export interface InstancesDeps {
  driver: Pick<RuntimeDriver, 'name' | 'placeManagedService' | 'removeManagedService' | 'managedProcesses' | 'managedUnavailable'>;
  host: ManagedHost;
}

/** Why `driver` runs no managed services at all (for a 501), or undefined when it runs some. */
export function managedUnavailable(driver: InstancesDeps['driver']): string | undefined {
  if (driver.managedUnavailable) return driver.managedUnavailable;
  if (driver.placeManagedService || driver.managedProcesses) return undefined;
  return `The runtime driver ${driver.name} runs no managed services.`;
}

/** The providers whose instances `driver` runs (none when it runs no managed services). */
export function runnableProvidersOn(driver: InstancesDeps['driver']): ReadonlySet<string> {
  if (managedUnavailable(driver)) return new Set();
  return new Set(Object.keys(driver.managedProcesses ? describedEngines : providerEngines));
}

const refOf = (row: InstanceRow): ManagedProcessRef => ({ teamId: Number(row.team_id), workspaceId: Number(row.workspace_id), name: row.name });

/**
 * The request of an instance at the place it runs (for a dump or a restore): where the driver placed it, or where the
 * driver's runner reaches it (ManagedInstanceFailure when it does not run). 501 problems are the caller's.
 */
export async function placedRequest(driver: InstancesDeps['driver'], workspace: WorkspaceRef, request: UnplacedRequest): Promise<InstanceRequest> {
  if (driver.managedProcesses) {
    const address = await driver.managedProcesses.address(managedProcessRef(workspace, request.name));
    if (!address) throw new ManagedInstanceFailure(`the managed service ${request.name} does not run`);
    return { ...request, address };
  }
  if (!driver.placeManagedService) throw new ManagedInstanceFailure(`the runtime driver ${driver.name} runs no managed services`);
  const { netns, address } = await driver.placeManagedService(workspace, request.name);
  return { ...request, netns, address };
}

/** The instances of `provider` as `deps.driver` runs them; undefined when it runs none of that provider. */
export function instancesOf(deps: InstancesDeps, provider: string): ManagedInstances | undefined {
  const { driver, host } = deps;
  if (managedUnavailable(driver)) return undefined;
  const runner = driver.managedProcesses;
  if (runner) {
    const engine = describedEngineOf(provider);
    if (!engine) return undefined;
    const placed = (workspace: WorkspaceRef, request: UnplacedRequest) => placedRequest(driver, workspace, request);
    return {
      ensure: async (workspace, request, options = {}) => {
        const ref = managedProcessRef(workspace, request.name);
        const wasRunning = (await runner.address(ref)) !== undefined;
        let announced = false;
        const changing = async () => {
          if (announced || !wasRunning) return;
          announced = true;
          await options.updating?.();
        };
        const process = engine.describe(request);
        const run = await runner.run(workspace, request.name, process, { changing }).catch((error: Error) => {
          throw error instanceof ManagedInstanceFailure ? error : new ManagedInstanceFailure(error.message);
        });
        let placedRequest: InstanceRequest = { ...request, address: run.address };
        const pending = (await engine.configure?.(host, placedRequest, { changing })) ?? [];
        if (pending.length > 0 || (wasRunning && options.restart)) {
          host.log(`managed ${provider} service ${request.name} of workspace ${workspace.id} restarts to apply ${pending.join(', ') || 'its plan'}`);
          placedRequest = { ...request, address: (await runner.restart(ref)).address };
          await engine.configure?.(host, placedRequest, {});
        }
        return engine.details(placedRequest);
      },
      stop: (row) => runner.pause(refOf(row)),
      remove: (_workspace, row) => runner.remove(refOf(row)),
      isRunning: async (row) => (await runner.address(refOf(row))) !== undefined,
      placed,
      ...(engine.dump && { dump: (request: InstanceRequest, file: string) => engine.dump!(host, request, file) }),
      ...(engine.restore && { restore: (request: InstanceRequest, file: string) => engine.restore!(host, request, file) }),
      ...(engine.missingDumpTools && { missingDumpTools: () => engine.missingDumpTools!(host) }),
    };
  }
  const engine = engineOf(provider);
  const place = driver.placeManagedService;
  if (!engine || !place) return undefined;
  const placed = (workspace: WorkspaceRef, request: UnplacedRequest) => placedRequest(driver, workspace, request);
  return {
    ensure: async (workspace, request, options) => engine.ensure(host, await placed(workspace, request), options),
    stop: (row) => engine.stop(host, row.number),
    remove: async (workspace, row) => {
      await engine.remove(host, row.number);
      await driver.removeManagedService?.(workspace, row.name);
    },
    isRunning: (row) => engine.isRunning(host, row.number),
    placed,
    ...(engine.dump && { dump: (request: InstanceRequest, file: string) => engine.dump!(host, request, file) }),
    ...(engine.restore && { restore: (request: InstanceRequest, file: string) => engine.restore!(host, request, file) }),
    ...(engine.missingDumpTools && { missingDumpTools: () => engine.missingDumpTools!(host) }),
  };
}
