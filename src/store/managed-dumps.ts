// Dumps of managed services: a row per finished dump file (migration 012). The file lives under the data directory
// (src/managed/dumps.ts says where); the row says what it is and who may see it (its team).
import type { Queryable } from './database.ts';
import type { LastBackup, ManagedServiceStatus } from './managed-services.ts';

export type DumpKind = 'manual' | 'nightly';

export interface ManagedDumpRow {
  id: string;
  managed_service_id: string;
  team_id: number;
  provider: string;
  version: string;
  kind: DumpKind;
  format: string;
  extension: string;
  media_type: string;
  size_bytes: number;
  operation_id: string | null;
  created_by: number | null;
  created_at: Date;
}

/** Records a finished dump; a job run again after its server died records the same id once. */
export async function insertManagedDump(db: Queryable, row: ManagedDumpRow): Promise<ManagedDumpRow> {
  const result = await db.query<ManagedDumpRow>(
    `INSERT INTO managed_dumps (id, managed_service_id, team_id, provider, version, kind, format, extension, media_type, size_bytes,
       operation_id, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (id) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, created_at = EXCLUDED.created_at RETURNING *`,
    [row.id, row.managed_service_id, row.team_id, row.provider, row.version, row.kind, row.format, row.extension, row.media_type,
      row.size_bytes, row.operation_id, row.created_by, row.created_at],
  );
  return result.rows[0];
}

export async function findManagedDump(db: Queryable, id: string): Promise<ManagedDumpRow | undefined> {
  return (await db.query<ManagedDumpRow>('SELECT * FROM managed_dumps WHERE id = $1', [id])).rows[0];
}

/** The dumps of a managed service, newest first, after the position `after` of the previous page. */
export async function listManagedDumps(
  db: Queryable,
  managedServiceId: string,
  after: { at: Date; id: string } | undefined,
  limit: number,
): Promise<ManagedDumpRow[]> {
  const result = await db.query<ManagedDumpRow>(
    `SELECT * FROM managed_dumps WHERE managed_service_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [managedServiceId, after?.at ?? null, after?.id ?? null, limit],
  );
  return result.rows;
}

export async function deleteManagedDump(db: Queryable, id: string): Promise<ManagedDumpRow | undefined> {
  return (await db.query<ManagedDumpRow>('DELETE FROM managed_dumps WHERE id = $1 RETURNING *', [id])).rows[0];
}

/** Deletes the nightly dumps of a managed service beyond the newest `keep`; answers the deleted rows. */
export async function pruneNightlyDumps(db: Queryable, managedServiceId: string, keep: number): Promise<ManagedDumpRow[]> {
  const result = await db.query<ManagedDumpRow>(
    `DELETE FROM managed_dumps WHERE id IN (
       SELECT id FROM managed_dumps WHERE managed_service_id = $1 AND kind = 'nightly' ORDER BY created_at DESC, id DESC OFFSET $2)
     RETURNING *`,
    [managedServiceId, keep],
  );
  return result.rows;
}

/** Every dump id with its managed service (the chore compares them with the files). */
export async function allManagedDumpIds(db: Queryable): Promise<Set<string>> {
  return new Set((await db.query<{ id: string }>('SELECT id FROM managed_dumps')).rows.map((r) => r.id));
}

/** A live instance of a deployed landscape that is not paused: its nightly backup may be due. */
export interface BackupCandidate {
  id: string;
  provider: string;
  status: ManagedServiceStatus;
  backups: boolean;
  created_at: Date;
  last_nightly: Date | null;
  last_backup: LastBackup | null;
}

/**
 * The live managed services that are not paused of landscapes that are deployed and not torn down (whatever else
 * their status: one that cannot be dumped has its backup recorded as failed), with the `backups` setting of their
 * entry in the deployed landscape (absent: true), when their newest nightly dump was made and their last backup.
 */
export async function backupCandidates(db: Queryable): Promise<BackupCandidate[]> {
  const result = await db.query<Omit<BackupCandidate, 'backups'> & { backups: boolean | null }>(
    `SELECT m.id, m.provider, m.status, m.created_at, m.last_backup, (l.normal -> 'services' -> m.name ->> 'backups')::boolean AS backups,
       (SELECT max(d.created_at) FROM managed_dumps d WHERE d.managed_service_id = m.id AND d.kind = 'nightly') AS last_nightly
     FROM managed_services m JOIN landscapes l ON l.workspace_id = m.workspace_id
     WHERE m.deleted_at IS NULL AND m.status NOT IN ('paused', 'pausing', 'deleting', 'deleted') AND NOT l.torn_down
     ORDER BY m.created_at`,
  );
  return result.rows.map((row) => ({ ...row, backups: row.backups ?? true }));
}
