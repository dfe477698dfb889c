// Ownership transfers of workspaces (migration 017).
import type { Queryable } from './database.ts';

export type TransferState = 'open' | 'accepted' | 'declined' | 'cancelled';

export interface TransferRow {
  id: string;
  workspace_id: number;
  team_id: number;
  from_user_id: number | null;
  offered_by: number | null;
  to_user_id: number;
  state: TransferState;
  created_at: Date;
  decided_at: Date | null;
  decided_by: number | null;
}

const columns = 'id, workspace_id, team_id, from_user_id, offered_by, to_user_id, state, created_at, decided_at, decided_by';

export async function insertTransfer(
  db: Queryable,
  transfer: { id: string; workspaceId: number; teamId: number; fromUserId: number | null; offeredBy: number; toUserId: number; at: Date },
): Promise<TransferRow> {
  return (
    await db.query<TransferRow>(
      `INSERT INTO owner_transfers (id, workspace_id, team_id, from_user_id, offered_by, to_user_id, state, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) RETURNING ${columns}`,
      [transfer.id, transfer.workspaceId, transfer.teamId, transfer.fromUserId, transfer.offeredBy, transfer.toUserId, transfer.at],
    )
  ).rows[0];
}

export async function findTransfer(db: Queryable, id: string, lock = false): Promise<TransferRow | undefined> {
  return (await db.query<TransferRow>(`SELECT ${columns} FROM owner_transfers WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id])).rows[0];
}

export async function findOpenTransfer(db: Queryable, workspaceId: number): Promise<TransferRow | undefined> {
  return (await db.query<TransferRow>(`SELECT ${columns} FROM owner_transfers WHERE workspace_id = $1 AND state = 'open'`, [workspaceId])).rows[0];
}

/** Ends an open transfer; undefined when it was not open any more. */
export async function closeTransfer(db: Queryable, id: string, state: Exclude<TransferState, 'open'>, by: number | null, at: Date): Promise<TransferRow | undefined> {
  return (
    await db.query<TransferRow>(
      `UPDATE owner_transfers SET state = $2, decided_by = $3, decided_at = $4 WHERE id = $1 AND state = 'open' RETURNING ${columns}`,
      [id, state, by, at],
    )
  ).rows[0];
}

/**
 * Transfers newest first after `after`: of one workspace, or those offered to or by one user. `state` narrows.
 */
export async function listTransfers(
  db: Queryable,
  filter: { workspaceId?: number; userId?: number; state?: TransferState },
  after: { at: string; id: string } | undefined,
  limit: number,
): Promise<TransferRow[]> {
  const params: unknown[] = [filter.workspaceId ?? null, filter.userId ?? null, filter.state ?? null, limit + 1];
  let position = '';
  if (after) {
    params.push(after.at, after.id);
    position = 'AND (created_at, id) < ($5::timestamptz, $6::uuid)';
  }
  return (
    await db.query<TransferRow>(
      `SELECT ${columns} FROM owner_transfers
       WHERE ($1::bigint IS NULL OR workspace_id = $1) AND ($2::bigint IS NULL OR to_user_id = $2 OR offered_by = $2)
         AND ($3::text IS NULL OR state = $3) ${position}
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      params,
    )
  ).rows;
}

/** Open transfers of the teams' workspaces offered to the user, cancelled (they left); answers them. */
export async function cancelTransfersTo(db: Queryable, userId: number, teamIds: number[], at: Date): Promise<TransferRow[]> {
  return (
    await db.query<TransferRow>(
      `UPDATE owner_transfers SET state = 'cancelled', decided_at = $3 WHERE to_user_id = $1 AND team_id = ANY($2) AND state = 'open' RETURNING ${columns}`,
      [userId, teamIds, at],
    )
  ).rows;
}
