// Managed-service instances (spec 2.8, 3.4): created by Sync, paused by Teardown, deleted (a tombstone kept) when
// their service leaves the file.
import type { Queryable } from './database.ts';

/** The statuses of spec 3.4 as the API shows them. */
export type ManagedServiceStatus =
  | 'creating' | 'updating' | 'pausing' | 'unpausing' | 'deleting' | 'synchronized' | 'paused' | 'deleted' | 'unknown' | 'invalid-provider';

/** The last nightly backup of an instance: made (its dump) or failed (why); `at` is when it ended, ISO 8601. */
export interface LastBackup {
  state: 'succeeded' | 'failed';
  at: string;
  operation_id?: string;
  dump_id?: string;
  reason?: string;
}

export interface ManagedServiceRow {
  id: string;
  /** Names its directory on the runtime and its host (ms-<number>). */
  number: number;
  workspace_id: number;
  team_id: number;
  name: string;
  provider: string;
  version: string;
  plan: string;
  /** The plan's values with the file's overrides, as last applied by Sync. */
  resources: Record<string, number>;
  status: ManagedServiceStatus;
  details: Record<string, string | number | boolean>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** Paused by a volume owner change: it starts again with its workspace (cleared by anything that starts it). */
  resume_with_workspace: boolean;
  /** Its last nightly backup; null before its first night (migration 043). */
  last_backup: LastBackup | null;
}

export async function findManagedService(db: Queryable, id: string): Promise<ManagedServiceRow | undefined> {
  return (await db.query<ManagedServiceRow>('SELECT * FROM managed_services WHERE id = $1', [id])).rows[0];
}

/** The live (not deleted) instances of a workspace, by name. */
export async function liveManagedServices(db: Queryable, workspaceId: number): Promise<ManagedServiceRow[]> {
  return (await db.query<ManagedServiceRow>('SELECT * FROM managed_services WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY name', [workspaceId])).rows;
}

export async function insertManagedService(
  db: Queryable,
  row: Pick<ManagedServiceRow, 'workspace_id' | 'team_id' | 'name' | 'provider' | 'version' | 'plan' | 'status'> & Partial<Pick<ManagedServiceRow, 'resources'>>,
  at: Date,
): Promise<ManagedServiceRow> {
  const result = await db.query<ManagedServiceRow>(
    `INSERT INTO managed_services (workspace_id, team_id, name, provider, version, plan, resources, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
    [row.workspace_id, row.team_id, row.name, row.provider, row.version, row.plan, JSON.stringify(row.resources ?? {}), row.status, at],
  );
  return result.rows[0];
}

/**
 * Sets the status (and details, plan and resources when given); `deleted` also marks the row a tombstone. A status
 * that starts or deletes the instance clears `resume_with_workspace`.
 */
export async function setManagedServiceStatus(
  db: Queryable,
  id: string,
  change: { status: ManagedServiceStatus; details?: ManagedServiceRow['details']; plan?: string; resources?: ManagedServiceRow['resources'] },
  at: Date,
): Promise<ManagedServiceRow> {
  const result = await db.query<ManagedServiceRow>(
    `UPDATE managed_services SET status = $2, details = COALESCE($3, details), plan = COALESCE($4, plan), updated_at = $5,
       resources = COALESCE($6, resources), deleted_at = CASE WHEN $2 = 'deleted' THEN $5 ELSE deleted_at END,
       resume_with_workspace = resume_with_workspace AND $2 NOT IN ('creating', 'unpausing', 'synchronized', 'deleting', 'deleted')
     WHERE id = $1 RETURNING *`,
    [id, change.status, change.details === undefined ? null : JSON.stringify(change.details), change.plan ?? null, at, change.resources === undefined ? null : JSON.stringify(change.resources)],
  );
  return result.rows[0];
}

/** Records the instance's last nightly backup; answers the row (undefined when it is gone). */
export async function setLastBackup(db: Queryable, id: string, backup: LastBackup): Promise<ManagedServiceRow | undefined> {
  return (await db.query<ManagedServiceRow>('UPDATE managed_services SET last_backup = $2 WHERE id = $1 RETURNING *', [id, JSON.stringify(backup)])).rows[0];
}

/** Marks (or unmarks) the instance to start again with its workspace (a volume owner change paused it). */
export async function setResumeWithWorkspace(db: Queryable, id: string, resume: boolean): Promise<void> {
  await db.query('UPDATE managed_services SET resume_with_workspace = $2 WHERE id = $1', [id, resume]);
}

/** The instance of managed-service host ms-<number>, tombstones included. */
export async function findManagedServiceByNumber(db: Queryable, number: number): Promise<ManagedServiceRow | undefined> {
  return (await db.query<ManagedServiceRow>('SELECT * FROM managed_services WHERE number = $1', [number])).rows[0];
}

/** A team's instances in creation order after `afterNumber`: live ones, or with `deleted` the tombstones only. */
export async function listManagedServices(
  db: Queryable,
  filter: { teamId: number; workspaceId?: number; status?: ManagedServiceStatus; deleted: boolean },
  afterNumber: number,
  limit: number,
): Promise<ManagedServiceRow[]> {
  const result = await db.query<ManagedServiceRow>(
    `SELECT * FROM managed_services WHERE team_id = $1 AND ($2::bigint IS NULL OR workspace_id = $2) AND ($3::text IS NULL OR status = $3)
       AND (deleted_at IS NOT NULL) = $4 AND number > $5 ORDER BY number LIMIT $6`,
    [filter.teamId, filter.workspaceId ?? null, filter.status ?? null, filter.deleted, afterNumber, limit + 1],
  );
  return result.rows;
}

/**
 * Moves the instance from status `from` to `change.status` (details replaced when given); undefined when its status
 * is no longer `from` (an operation moved it meanwhile), so a health check never undoes a Sync or a pause.
 */
export async function moveManagedServiceStatus(
  db: Queryable,
  id: string,
  from: ManagedServiceStatus,
  change: { status: ManagedServiceStatus; details?: ManagedServiceRow['details'] },
  at: Date,
): Promise<ManagedServiceRow | undefined> {
  const result = await db.query<ManagedServiceRow>(
    `UPDATE managed_services SET status = $3, details = COALESCE($4, details), updated_at = $5 WHERE id = $1 AND status = $2 AND deleted_at IS NULL RETURNING *`,
    [id, from, change.status, change.details === undefined ? null : JSON.stringify(change.details), at],
  );
  return result.rows[0];
}

/** Every live instance of the installation (the health check looks at each). */
export async function allLiveManagedServices(db: Queryable): Promise<ManagedServiceRow[]> {
  return (await db.query<ManagedServiceRow>('SELECT * FROM managed_services WHERE deleted_at IS NULL ORDER BY number')).rows;
}

/** Removes the tombstones deleted before `before` and answers them (their events go out after). */
export async function purgeManagedTombstones(db: Queryable, before: Date): Promise<ManagedServiceRow[]> {
  return (await db.query<ManagedServiceRow>('DELETE FROM managed_services WHERE deleted_at < $1 RETURNING *', [before])).rows;
}
