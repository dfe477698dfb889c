// What the metrics count in the database at each scrape (src/metrics): workspaces by state, managed instances by
// status. Installation-wide: every server of the installation reports the same numbers.
import type { Queryable } from './database.ts';

export interface CountBy {
  key: string;
  count: number;
}

/** Workspaces not deleted, by state (each running one has its editor pod). */
export async function countWorkspacesByState(db: Queryable): Promise<CountBy[]> {
  const result = await db.query<CountBy>('SELECT state AS key, count(*)::int AS count FROM workspaces WHERE deleted_at IS NULL GROUP BY state');
  return result.rows;
}

/** Managed-service instances not deleted, by status. */
export async function countManagedInstancesByStatus(db: Queryable): Promise<CountBy[]> {
  const result = await db.query<CountBy>('SELECT status AS key, count(*)::int AS count FROM managed_services WHERE deleted_at IS NULL GROUP BY status');
  return result.rows;
}

/**
 * The services of running workspaces' landscapes by the status the status watch last recorded (`status` or
 * `status: detail`; src/workspaces/service-runner.ts).
 */
export async function countServicesByStatus(db: Queryable): Promise<CountBy[]> {
  const result = await db.query<CountBy>(
    `SELECT split_part(s.value, ':', 1) AS key, count(*)::int AS count
       FROM landscapes l JOIN workspaces w ON w.id = l.workspace_id, json_each_text(l.statuses) s
      WHERE w.state = 'running' AND w.deleted_at IS NULL AND NOT l.torn_down
      GROUP BY 1`,
  );
  return result.rows;
}
