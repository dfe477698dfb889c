// The team quota checks against the store: creating a workspace, waking one, and a Sync that adds replicas each ask
// whether what they need fits beside what the team's other awake workspaces hold (quota.ts).
import type { Queryable } from '../store/database.ts';
import { teamQuota } from '../store/teams.ts';
import { awakeTeamWorkspaces, teamStorage } from '../store/workspaces.ts';
import { findDeployedLandscape } from '../store/landscapes.ts';
import { describeLimits, type InstallationPlans, type PlanLimits } from './plans.ts';
import { capacityProblem, shortfallOf, teamUse, workspaceDemand, type Shortfall } from './quota.ts';

export interface CapacityRefusal {
  shortfall: Shortfall;
  heldByDeleted: { workspaces: number; storage_gib: number };
}

/** Whether `needed` fits the team's CPU and memory quotas beside its awake workspaces other than `exceptId`. */
export async function capacityRefusal(db: Queryable, plans: InstallationPlans, teamId: number, needed: PlanLimits, exceptId = 0): Promise<CapacityRefusal | undefined> {
  const quota = await teamQuota(db, teamId);
  if (!quota) return undefined;
  const used = teamUse(plans, await awakeTeamWorkspaces(db, teamId, exceptId));
  const shortfall = shortfallOf({ cpuMillis: quota.cpu_quota_millis, memoryMiB: quota.memory_quota_mib }, used, needed);
  if (!shortfall) return undefined;
  const storage = await teamStorage(db, teamId);
  return { shortfall, heldByDeleted: { workspaces: storage.deletedWorkspaces, storage_gib: storage.deletedGib } };
}

/** 409 `quota-exceeded` saying what `what` needs and what is left, when it does not fit. */
export async function refuseOverCapacity(db: Queryable, plans: InstallationPlans, teamId: number, needed: PlanLimits, what: string, exceptId = 0): Promise<void> {
  const refusal = await capacityRefusal(db, plans, teamId, needed, exceptId);
  if (refusal) throw capacityProblem(what, refusal.shortfall, refusal.heldByDeleted);
}

/** What a workspace holds once awake: its editor pod and the replicas of its synced landscape. */
export async function wakeDemand(db: Queryable, plans: InstallationPlans, row: { id: number; plan: string }): Promise<PlanLimits> {
  const deployed = await findDeployedLandscape(db, row.id);
  return workspaceDemand(plans, { id: row.id, plan: row.plan, ...(deployed && !deployed.torn_down ? { landscape: deployed.normal } : {}) });
}

/** The wake blocker of spec 3.1 for a workspace whose team has no room for it now. */
export async function capacityWakeBlocker(db: Queryable, plans: InstallationPlans, row: { id: number; team_id: number; plan: string }): Promise<{ reason: string; retryAfterSeconds: number } | undefined> {
  const refusal = await capacityRefusal(db, plans, row.team_id, await wakeDemand(db, plans, row), row.id);
  if (!refusal) return undefined;
  const { needed, left } = refusal.shortfall;
  return { reason: `No capacity right now (retried automatically): the workspace needs ${describeLimits(needed)}, the team has ${describeLimits(left)} left.`, retryAfterSeconds: 30 };
}
