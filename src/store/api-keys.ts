import type { Queryable } from './database.ts';

export interface ApiKeyRow {
  id: string;
  user_id: number;
  name: string;
  source: 'console' | 'cli';
  secret_hash: Buffer;
  created_at: Date;
  regenerated_at: Date | null;
  last_used_at: Date | null;
  expires_at: Date | null;
  version: number;
}

const columns = 'id, user_id, name, source, secret_hash, created_at, regenerated_at, last_used_at, expires_at, version';

/** Every change to a key tells all servers to drop what they cached about it. */
async function notifyKeyChanged(db: Queryable, id: string): Promise<void> {
  await db.query("SELECT pg_notify('svc_auth', $1)", [`key:${id}`]);
}

export async function insertApiKey(
  db: Queryable,
  key: { id: string; userId: number; name: string; source: string; secretHash: Buffer; at: Date; expiresAt: Date | null },
): Promise<ApiKeyRow> {
  const result = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, user_id, name, source, secret_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${columns}`,
    [key.id, key.userId, key.name, key.source, key.secretHash, key.at, key.expiresAt],
  );
  return result.rows[0];
}

export async function findApiKey(db: Queryable, id: string): Promise<ApiKeyRow | undefined> {
  return (await db.query<ApiKeyRow>(`SELECT ${columns} FROM api_keys WHERE id = $1`, [id])).rows[0];
}

/** A user's keys, newest first, after the (created_at, id) position, one more than `limit`. */
export async function listApiKeys(
  db: Queryable,
  userId: number,
  after: { at: Date; id: string } | undefined,
  limit: number,
): Promise<ApiKeyRow[]> {
  const result = after
    ? await db.query<ApiKeyRow>(
        `SELECT ${columns} FROM api_keys WHERE user_id = $1 AND (created_at, id) < ($2, $3)
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [userId, after.at, after.id, limit + 1],
      )
    : await db.query<ApiKeyRow>(
        `SELECT ${columns} FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
        [userId, limit + 1],
      );
  return result.rows;
}

export async function deleteApiKey(db: Queryable, userId: number, id: string): Promise<boolean> {
  const result = await db.query('DELETE FROM api_keys WHERE id = $1 AND user_id = $2', [id, userId]);
  if ((result.rowCount ?? 0) > 0) await notifyKeyChanged(db, id);
  return (result.rowCount ?? 0) > 0;
}

export async function regenerateApiKey(
  db: Queryable,
  userId: number,
  id: string,
  secretHash: Buffer,
  at: Date,
): Promise<ApiKeyRow | undefined> {
  const result = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET secret_hash = $3, regenerated_at = $4, version = version + 1
     WHERE id = $1 AND user_id = $2 RETURNING ${columns}`,
    [id, userId, secretHash, at],
  );
  if (result.rows[0]) await notifyKeyChanged(db, id);
  return result.rows[0];
}

/** Writes last_used_at unless it was written less than an hour ago (at most once an hour). */
export async function markApiKeyUsed(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = $2
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 hour')`,
    [id, at],
  );
}
