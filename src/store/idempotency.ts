import type { Queryable } from './database.ts';

export interface IdempotencyRow {
  method: string;
  path: string;
  body_hash: Buffer;
  state: 'running' | 'done';
  status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  created_at: Date;
}

/**
 * Claims `key` for a first run. Returns undefined when claimed, else the record already held
 * (expired records and abandoned runs are taken over).
 */
export async function claimIdempotencyKey(
  db: Queryable,
  claim: { userId: number; key: string; method: string; path: string; bodyHash: Buffer; at: Date; expiresAt: Date; abandonedBefore: Date },
): Promise<IdempotencyRow | undefined> {
  const inserted = await db.query(
    `INSERT INTO idempotency_keys (user_id, key, method, path, body_hash, state, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'running', $6, $7)
     ON CONFLICT (user_id, key) DO UPDATE
       SET method = EXCLUDED.method, path = EXCLUDED.path, body_hash = EXCLUDED.body_hash, state = 'running',
           status = NULL, response_headers = NULL, response_body = NULL,
           created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= $6
          OR (idempotency_keys.state = 'running' AND idempotency_keys.created_at < $8)
     RETURNING 1`,
    [claim.userId, claim.key, claim.method, claim.path, claim.bodyHash, claim.at, claim.expiresAt, claim.abandonedBefore],
  );
  if ((inserted.rowCount ?? 0) > 0) return undefined;
  const held = await db.query<IdempotencyRow>(
    `SELECT method, path, body_hash, state, status, response_headers, response_body, created_at
     FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
    [claim.userId, claim.key],
  );
  // Gone between the two statements (its run failed and released it): report it as still running.
  return held.rows[0] ?? ({ state: 'running', method: claim.method, path: claim.path, body_hash: claim.bodyHash } as IdempotencyRow);
}

export async function completeIdempotencyKey(
  db: Queryable,
  done: { userId: number; key: string; status: number; headers: Record<string, string>; body: string },
): Promise<void> {
  await db.query(
    `UPDATE idempotency_keys SET state = 'done', status = $3, response_headers = $4, response_body = $5
     WHERE user_id = $1 AND key = $2`,
    [done.userId, done.key, done.status, JSON.stringify(done.headers), done.body],
  );
}

/** A failed attempt is not kept: the key is free for a retry. */
export async function releaseIdempotencyKey(db: Queryable, userId: number, key: string): Promise<void> {
  await db.query("DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND state = 'running'", [userId, key]);
}

export async function deleteExpiredIdempotencyKeys(db: Queryable, now: Date): Promise<number> {
  return (await db.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now])).rowCount ?? 0;
}
