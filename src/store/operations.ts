import type { Queryable } from './database.ts';

export interface OperationRow {
  id: string;
  kind: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed';
  target: string | null;
  team_id: number | null;
  created_by: number | null;
  detail: string | null;
  error: Record<string, unknown> | null;
  input: Record<string, unknown>;
  attempts: number;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  /** When it was queued by the database's clock (a timeline's start); null for operations from before. */
  queued_wall_at: Date | null;
}

const columns = `id, kind, state, target, team_id, created_by, detail, error, input, attempts, lease_owner, lease_until,
  created_at, updated_at, finished_at, queued_wall_at`;

export const OPERATIONS_CHANNEL = 'svc_operations';

export async function insertOperation(
  db: Queryable,
  operation: { id: string; kind: string; target: string | null; teamId: number | null; createdBy: number | null; input: object; detail?: string; at: Date },
): Promise<OperationRow> {
  const row = (
    await db.query<OperationRow>(
      `INSERT INTO operations (id, kind, state, target, team_id, created_by, detail, input, created_at, updated_at)
       VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $8) RETURNING ${columns}`,
      [operation.id, operation.kind, operation.target, operation.teamId, operation.createdBy, operation.detail ?? null, operation.input, operation.at],
    )
  ).rows[0];
  await db.query('SELECT pg_notify($1, $2)', [OPERATIONS_CHANNEL, row.id]);
  return row;
}

export async function findOperation(db: Queryable, id: string): Promise<OperationRow | undefined> {
  return (await db.query<OperationRow>(`SELECT ${columns} FROM operations WHERE id = $1`, [id])).rows[0];
}

/** What a worker may claim: pending jobs, running ones whose lease ran out, and those of an earlier life of its server. */
const claimable = `o.kind = ANY($2) AND (o.state = 'pending' OR (o.state = 'running' AND
  (o.lease_until < $3 OR (starts_with(o.lease_owner, $6 || '/') AND o.lease_owner <> $1))))`;

/**
 * Claims up to `limit` pending jobs, running ones whose lease ran out, and running ones left by an earlier life
 * of this same server (`serverId`; it restarted, so they cannot be running any more). Fair between teams: a team
 * (jobs without a team count as one) holds at most `teamShare` of this owner's jobs, and teams holding fewer go
 * first (round robin, oldest first within a team), so one team's long jobs never take every worker.
 */
export async function claimOperations(
  db: Queryable,
  claim: { owner: string; serverId: string; kinds: string[]; now: Date; leaseUntil: Date; limit: number; teamShare: number },
): Promise<OperationRow[]> {
  return (
    await db.query<OperationRow>(
      `WITH held AS (
         SELECT team_id, count(*) AS n FROM operations WHERE state = 'running' AND lease_owner = $1 GROUP BY team_id
       ), places AS (
         SELECT o.id, o.created_at, COALESCE(h.n, 0) + row_number() OVER (PARTITION BY o.team_id ORDER BY o.created_at) AS place
         FROM operations o LEFT JOIN held h ON h.team_id IS NOT DISTINCT FROM o.team_id
         WHERE ${claimable}
       ), chosen AS (
         SELECT id FROM places WHERE place <= $7 ORDER BY place, created_at LIMIT $5
       )
       UPDATE operations SET state = 'running', attempts = attempts + 1, lease_owner = $1, lease_until = $4, updated_at = $3
       WHERE id IN (SELECT o.id FROM operations o WHERE o.id IN (SELECT id FROM chosen) AND ${claimable} FOR UPDATE OF o SKIP LOCKED)
       RETURNING ${columns}`,
      [claim.owner, claim.kinds, claim.now, claim.leaseUntil, claim.limit, claim.serverId, claim.teamShare],
    )
  ).rows;
}

/** When the first lease of a running job held by another owner ends (a dead server's job can be taken over then). */
export async function earliestForeignLease(db: Queryable, owner: string, kinds: string[]): Promise<Date | undefined> {
  const result = await db.query<{ until: Date | null }>(
    `SELECT min(lease_until) AS until FROM operations WHERE state = 'running' AND lease_owner <> $1 AND kind = ANY($2)`,
    [owner, kinds],
  );
  return result.rows[0]?.until ?? undefined;
}

export async function renewLeases(db: Queryable, owner: string, ids: string[], until: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query(`UPDATE operations SET lease_until = $3 WHERE id = ANY($2) AND lease_owner = $1 AND state = 'running'`, [
    owner,
    ids,
    until,
  ]);
}

/** Changes the progress text of a job this owner holds; undefined when it no longer holds it. */
export async function updateOperationDetail(
  db: Queryable,
  id: string,
  owner: string,
  detail: string,
  at: Date,
): Promise<OperationRow | undefined> {
  return (
    await db.query<OperationRow>(
      `UPDATE operations SET detail = $3, updated_at = $4 WHERE id = $1 AND lease_owner = $2 AND state = 'running'
       RETURNING ${columns}`,
      [id, owner, detail, at],
    )
  ).rows[0];
}

export async function finishOperation(
  db: Queryable,
  finish: { id: string; owner: string | null; state: 'succeeded' | 'failed'; detail?: string | null; error?: object | null; at: Date },
): Promise<OperationRow | undefined> {
  return (
    await db.query<OperationRow>(
      `UPDATE operations SET state = $3, detail = COALESCE($4, detail), error = $5, finished_at = $6, updated_at = $6,
         lease_owner = NULL, lease_until = NULL
       WHERE id = $1 AND state IN ('pending', 'running') AND ($2::text IS NULL OR lease_owner = $2)
       RETURNING ${columns}`,
      [finish.id, finish.owner, finish.state, finish.detail ?? null, finish.error ?? null, finish.at],
    )
  ).rows[0];
}

/** Hands a job back (graceful shutdown): pending again, and this claim does not count as an attempt. */
export async function releaseOperation(db: Queryable, id: string, owner: string, at: Date): Promise<OperationRow | undefined> {
  return (
    await db.query<OperationRow>(
      `UPDATE operations SET state = 'pending', attempts = attempts - 1, lease_owner = NULL, lease_until = NULL, updated_at = $3
       WHERE id = $1 AND lease_owner = $2 AND state = 'running' RETURNING ${columns}`,
      [id, owner, at],
    )
  ).rows[0];
}

export async function deleteFinishedOperations(db: Queryable, finishedBefore: Date): Promise<number> {
  return (await db.query('DELETE FROM operations WHERE finished_at < $1', [finishedBefore])).rowCount ?? 0;
}

/** Seconds the newest succeeded operation of `kind` on `target` took from being queued to finishing, if any. */
export async function lastSucceededSeconds(db: Queryable, target: string, kind: string): Promise<number | undefined> {
  const row = (
    await db.query<{ seconds: string }>(
      `SELECT extract(epoch FROM finished_at - created_at) AS seconds FROM operations
       WHERE target = $1 AND kind = $2 AND state = 'succeeded' ORDER BY created_at DESC LIMIT 1`,
      [target, kind],
    )
  ).rows[0];
  return row ? Number(row.seconds) : undefined;
}

/** The unfinished operation on a target, if any; the caller holds the target's advisory lock. */
export async function activeOperationOn(db: Queryable, target: string): Promise<OperationRow | undefined> {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [target]);
  return (
    await db.query<OperationRow>(`SELECT ${columns} FROM operations WHERE target = $1 AND state IN ('pending', 'running') LIMIT 1`, [target])
  ).rows[0];
}

/**
 * Operations newest first, after the position `after` of the previous page: those `userId` started and those of
 * `teamIds` (null: every team, for administrators), only `team`'s when set; `active` keeps pending and running.
 */
export interface OperationFilter {
  userId: number;
  teamIds: number[] | null;
  team?: number;
  active: boolean;
  kind?: string;
  state?: string;
  target?: string;
}

export async function listOperations(
  db: Queryable,
  filter: OperationFilter,
  after: { us: string; id: string } | undefined,
  limit: number,
): Promise<Array<OperationRow & { created_us: string }>> {
  const result = await db.query<OperationRow & { created_us: string }>(
    `SELECT ${columns}, floor(extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us FROM operations
     WHERE ($2::bigint[] IS NULL OR team_id = ANY($2::bigint[]) OR created_by = $1)
       AND ($3::bigint IS NULL OR team_id = $3)
       AND (NOT $4 OR state IN ('pending', 'running'))
       AND ($5::bigint IS NULL OR (floor(extract(epoch FROM created_at) * 1000000)::bigint, id) < ($5::bigint, $6::uuid))
       AND ($8::text IS NULL OR kind = $8)
       AND ($9::text IS NULL OR state = $9)
       AND ($10::text IS NULL OR target = $10)
     ORDER BY created_at DESC, id DESC LIMIT $7`,
    [filter.userId, filter.teamIds, filter.team ?? null, filter.active, after?.us ?? null, after?.id ?? null, limit + 1, filter.kind ?? null, filter.state ?? null, filter.target ?? null],
  );
  return result.rows;
}
