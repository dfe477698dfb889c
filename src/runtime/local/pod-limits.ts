// Which limits each pod of the local driver gets (its plan's CPU and memory, src/capacity/plans.ts) and its cgroup
// (cgroups.ts): an editor pod and a stage step take the workspace's plan, a replica its service's plan. A plan id the
// installation no longer has (the operator removed it from the plans file) gets the default plan's limits.
import { open, type FileHandle } from 'node:fs/promises';
import { servicePlan, workspacePlan, type InstallationPlans, type ServicePlan, type WorkspacePlan } from '../../capacity/plans.ts';
import { RuntimeFailure, type ReplicaSpec, type WorkspaceRef } from '../driver.ts';
import { cgroupNames, type Cgroups, type Command } from './cgroups.ts';

/** What the pods of a local driver need to be limited: the host's cgroups (none without root) and the plans. */
export interface LimitsHost {
  cgroups?: Cgroups;
  cgroupNames: ReturnType<typeof cgroupNames>;
  plans: InstallationPlans;
}

/** Where a pod sees its cgroup's memory events (the `oom_kill N` line), bound read-only. */
export const POD_MEMORY_EVENTS_FILE = '/.svc-limits/memory.events';

export function editorPlan(host: LimitsHost, workspace: WorkspaceRef): WorkspacePlan {
  return workspacePlan(host.plans, workspace.plan ?? host.plans.workspace.default) ?? workspacePlan(host.plans, host.plans.workspace.default)!;
}

export function replicaPlan(host: LimitsHost, spec: ReplicaSpec): ServicePlan {
  return servicePlan(host.plans, spec.plan) ?? servicePlan(host.plans, undefined)!;
}

/** Creates the pod's cgroup `name` with the plan's limits (nothing when the host has no cgroups). */
export async function createPodCgroup(host: LimitsHost, name: string, plan: { cpuMillis: number; memoryMiB: number }): Promise<void> {
  await host.cgroups?.create(name, plan).catch((error: Error) => {
    throw new RuntimeFailure('agent', `the pod's cgroup could not be set up: ${error.message}`);
  });
}

/**
 * The pod's cgroup `name` (created, its processes not started yet) at the background CPU share until `until`
 * settles, then at the normal one. Nothing without cgroups; a pod gone meanwhile (a sleep raced the wake) leaves
 * nothing to set back.
 */
export async function backgroundUntil(host: LimitsHost & { log: (message: string) => void }, name: string, until: Promise<unknown>): Promise<void> {
  const cgroups = host.cgroups;
  if (!cgroups) return;
  // a pod that cannot be put in the background starts at its normal share: slower for the service, not a failure
  const set = await cgroups.setCpuShare(name, 'background').then(() => true, (error: Error) => (host.log(`the editor pod's CPU share: ${error.message}`), false));
  if (!set) return;
  void until.catch(() => undefined).then(() =>
    cgroups.setCpuShare(name, 'normal').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') host.log(`the editor pod's CPU share could not be set back: ${error.message}`);
    }),
  );
}

/** `command` starting inside the cgroup `name` (created before); as it is when the host has no cgroups. */
export function inPodCgroup(host: LimitsHost, name: string, command: Command): Command {
  return host.cgroups ? host.cgroups.wrap(name, command) : command;
}

/** Removes the pod's cgroup once its processes ended (a failure to is logged: it holds no process any more). */
export async function removePodCgroup(host: LimitsHost & { log: (message: string) => void }, name: string): Promise<void> {
  await host.cgroups?.remove(name).catch((error: Error) => host.log(error.message));
}

/** The pod's cgroup's memory events, open for the pod to bind (undefined when the host has no cgroups). */
export async function openMemoryEvents(host: LimitsHost, name: string): Promise<FileHandle | undefined> {
  return host.cgroups ? open(host.cgroups.memoryEventsFile(name), 'r') : undefined;
}
