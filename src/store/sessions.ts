import type { Queryable } from './database.ts';

export interface SessionRow {
  user_id: number;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

export async function insertSession(
  db: Queryable,
  session: { tokenHash: Buffer; userId: number; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $3, $4)',
    [session.tokenHash, session.userId, session.at, session.expiresAt],
  );
}

export async function findSession(db: Queryable, tokenHash: Buffer): Promise<SessionRow | undefined> {
  return (
    await db.query<SessionRow>(
      'SELECT user_id, created_at, last_seen_at, expires_at FROM sessions WHERE token_hash = $1',
      [tokenHash],
    )
  ).rows[0];
}

export async function touchSession(db: Queryable, tokenHash: Buffer, at: Date): Promise<void> {
  await db.query('UPDATE sessions SET last_seen_at = $2 WHERE token_hash = $1 AND last_seen_at < $2', [tokenHash, at]);
}

export async function deleteSession(db: Queryable, tokenHash: Buffer): Promise<void> {
  await db.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash]);
}

export async function deleteExpiredSessions(db: Queryable, idleBefore: Date, now: Date): Promise<number> {
  const result = await db.query('DELETE FROM sessions WHERE last_seen_at < $1 OR expires_at < $2', [idleBefore, now]);
  return result.rowCount ?? 0;
}

export async function insertSignInLink(
  db: Queryable,
  link: { tokenHash: Buffer; userId: number; createdBy: number | null; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO sign_in_links (token_hash, user_id, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [link.tokenHash, link.userId, link.createdBy, link.at, link.expiresAt],
  );
}

/** Marks a sign-in link used; returns its user only when it was unused and not expired (single use, race-free). */
export async function consumeSignInLink(db: Queryable, tokenHash: Buffer, at: Date): Promise<number | undefined> {
  const result = await db.query<{ user_id: number }>(
    `UPDATE sign_in_links SET used_at = $2
     WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`,
    [tokenHash, at],
  );
  return result.rows[0]?.user_id;
}
