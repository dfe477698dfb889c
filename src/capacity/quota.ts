// Team quotas for CPU and memory (spec 7 "team quota exceeded", docs/capacity.md): what the pods of a team's awake
// workspaces hold, counted from their plans — each workspace's editor pod (its workspace plan) and every replica of
// its synced landscape (its service plan) — against what a cluster admin allowed the team. Pure.
import { problem, type Problem } from '../core/problems.ts';
import type { NormalLandscape } from '../landscape/index.ts';
import { describeLimits, servicePlan, workspacePlan, type InstallationPlans, type PlanLimits } from './plans.ts';

export interface AwakeWorkspace {
  id: number;
  plan: string;
  /** The synced landscape, when one is deployed and not torn down. */
  landscape?: NormalLandscape;
}

export interface CapacityQuota extends PlanLimits {
  storageGib: number;
}

const none: PlanLimits = { cpuMillis: 0, memoryMiB: 0 };
const add = (a: PlanLimits, b: PlanLimits): PlanLimits => ({ cpuMillis: a.cpuMillis + b.cpuMillis, memoryMiB: a.memoryMiB + b.memoryMiB });

/** What a landscape's replicas hold: replicas × their service plan, for every steps and container service. */
export function landscapeDemand(plans: InstallationPlans, landscape: NormalLandscape | undefined): PlanLimits {
  let total = none;
  for (const service of Object.values(landscape?.services ?? {})) {
    if (service.type !== 'steps' && service.type !== 'container') continue;
    const plan = servicePlan(plans, service.plan) ?? servicePlan(plans, undefined)!;
    total = add(total, { cpuMillis: plan.cpuMillis * service.replicas, memoryMiB: plan.memoryMiB * service.replicas });
  }
  return total;
}

/** What an awake workspace holds: its editor pod and its landscape's replicas. */
export function workspaceDemand(plans: InstallationPlans, workspace: AwakeWorkspace): PlanLimits {
  const plan = workspacePlan(plans, workspace.plan) ?? workspacePlan(plans, plans.workspace.default)!;
  return add({ cpuMillis: plan.cpuMillis, memoryMiB: plan.memoryMiB }, landscapeDemand(plans, workspace.landscape));
}

export function teamUse(plans: InstallationPlans, awake: AwakeWorkspace[]): PlanLimits {
  return awake.reduce((total, workspace) => add(total, workspaceDemand(plans, workspace)), none);
}

export interface Shortfall {
  needed: PlanLimits;
  left: PlanLimits;
  quota: PlanLimits;
}

/** Whether `needed` more fits the team's quota beside `used`; the numbers when it does not. */
export function shortfallOf(quota: PlanLimits, used: PlanLimits, needed: PlanLimits): Shortfall | undefined {
  const left = { cpuMillis: Math.max(0, quota.cpuMillis - used.cpuMillis), memoryMiB: Math.max(0, quota.memoryMiB - used.memoryMiB) };
  if (needed.cpuMillis <= left.cpuMillis && needed.memoryMiB <= left.memoryMiB) return undefined;
  return { needed, left, quota };
}

/**
 * 409 `quota-exceeded`: `what` ("The workspace", "The Sync") needs this, the team has that left of its quota.
 * `held_by_deleted` says what soft-deleted workspaces hold (storage only: they run no pods).
 */
export function capacityProblem(what: string, shortfall: Shortfall, heldByDeleted: { workspaces: number; storage_gib: number }): Problem {
  const { needed, left, quota } = shortfall;
  return problem('quota-exceeded', 409, `${what} needs ${describeLimits(needed)}; the team has ${describeLimits(left)} left of its quota of ${describeLimits(quota)}.`, {
    extra: {
      needed: { cpu_millis: needed.cpuMillis, memory_mib: needed.memoryMiB },
      left: { cpu_millis: left.cpuMillis, memory_mib: left.memoryMiB },
      held_by_deleted: heldByDeleted,
    },
  });
}
