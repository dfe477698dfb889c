// A workspace's activity as the API shows it, read from its row and the store (workspaces/activity.ts says it).
import type { Clock } from '../core/clock.ts';
import type { Queryable } from '../store/database.ts';
import { keepAwakeOf, lastUse } from '../store/workspace-uses.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { activityView, keepAwakeView, type ActivityFacts } from './activity.ts';

/** What the activity sentence needs of a workspace: its row, its last use and its keep-awake. */
export async function activityFactsOf(deps: { pool: Queryable }, row: WorkspaceRow): Promise<ActivityFacts> {
  return {
    state: row.state,
    sleepReason: row.sleep_reason,
    sleptAt: row.slept_at,
    idleTimeoutMinutes: row.idle_timeout_minutes,
    lastActivityAt: row.last_activity_at,
    lastUse: await lastUse(deps.pool, row.id),
    keepAwake: await keepAwakeOf(deps.pool, row.id),
  };
}

/** `activity` and `keep_awake` of GET /workspaces/{ws}. */
export async function workspaceActivity(deps: { pool: Queryable; clock: Clock }, row: WorkspaceRow) {
  const facts = await activityFactsOf(deps, row);
  const now = deps.clock.now();
  return { activity: activityView(facts, now), keep_awake: keepAwakeView(facts.keepAwake, now) };
}
