// What kept each workspace awake (migration 062): its uses by kind and address, and its keep-awake.
import type { KeepAwake, RecordedUse, Use, UseKind } from '../workspaces/activity.ts';
import type { Queryable } from './database.ts';

/**
 * Records a use at `at`: the workspace's `last_activity_at` (what the idle timeout counts from) and the use's own
 * row, each written at most once a minute, so that busy traffic does not turn into a write per request.
 */
export async function recordUse(db: Queryable, workspaceId: number, use: Use, at: Date): Promise<void> {
  await db.query(
    `WITH touched AS (
       UPDATE workspaces SET last_activity_at = $2
       WHERE id = $1 AND (last_activity_at IS NULL OR last_activity_at < $2::timestamptz - interval '1 minute') RETURNING id)
     INSERT INTO workspace_uses (workspace_id, kind, address, first_at, last_at)
     SELECT id, $3, $4, $2, $2 FROM workspaces WHERE id = $1
     ON CONFLICT (workspace_id, kind, address) DO UPDATE SET last_at = EXCLUDED.last_at
     WHERE workspace_uses.last_at < EXCLUDED.last_at - interval '1 minute'`,
    [workspaceId, at, use.kind, use.address],
  );
}

interface UseRow {
  kind: UseKind;
  address: string;
  first_at: Date;
  last_at: Date;
}

const recorded = (row: UseRow): RecordedUse => ({ kind: row.kind, address: row.address, firstAt: row.first_at, lastAt: row.last_at });

/** The workspace's uses, the latest first. */
export async function workspaceUses(db: Queryable, workspaceId: number, limit = 100): Promise<RecordedUse[]> {
  const rows = await db.query<UseRow>('SELECT kind, address, first_at, last_at FROM workspace_uses WHERE workspace_id = $1 ORDER BY last_at DESC, kind, address LIMIT $2', [workspaceId, limit]);
  return rows.rows.map(recorded);
}

/** The workspace's latest use at or before `before` (the last one before it slept); undefined when none. */
export async function lastUse(db: Queryable, workspaceId: number): Promise<RecordedUse | undefined> {
  const rows = await db.query<UseRow>('SELECT kind, address, first_at, last_at FROM workspace_uses WHERE workspace_id = $1 ORDER BY last_at DESC, kind, address LIMIT 1', [workspaceId]);
  return rows.rows[0] && recorded(rows.rows[0]);
}

/** The workspace's keep-awake as last asked (ended or not); undefined when never asked or ended by hand. */
export async function keepAwakeOf(db: Queryable, workspaceId: number): Promise<KeepAwake | undefined> {
  const row = (
    await db.query<{ keep_awake_until: Date | null; keep_awake_by: number | null; keep_awake_asked_at: Date | null; email: string | null }>(
      `SELECT w.keep_awake_until, w.keep_awake_by, w.keep_awake_asked_at, u.email FROM workspaces w LEFT JOIN users u ON u.id = w.keep_awake_by WHERE w.id = $1`,
      [workspaceId],
    )
  ).rows[0];
  if (!row?.keep_awake_until || !row.keep_awake_asked_at) return undefined;
  return { until: row.keep_awake_until, askedBy: row.keep_awake_by === null ? null : Number(row.keep_awake_by), askedByEmail: row.email, askedAt: row.keep_awake_asked_at };
}
