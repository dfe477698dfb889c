// Sign-in links and sessions of workspace hosts (migration 008).
import type { Queryable } from './database.ts';

export async function insertWorkspaceSignInLink(
  db: Queryable,
  link: { tokenHash: Buffer; workspaceId: number; host: string; userId: number; nextPath: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO workspace_sign_in_links (token_hash, workspace_id, host, user_id, next_path, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [link.tokenHash, link.workspaceId, link.host, link.userId, link.nextPath, link.expiresAt],
  );
}

/** Uses the link once: answers it when it was unused, unexpired and for this host; undefined otherwise. */
export async function consumeWorkspaceSignInLink(
  db: Queryable,
  tokenHash: Buffer,
  host: string,
  now: Date,
): Promise<{ workspace_id: number; user_id: number; next_path: string } | undefined> {
  const result = await db.query<{ workspace_id: number; user_id: number; next_path: string }>(
    `UPDATE workspace_sign_in_links SET used_at = $3 WHERE token_hash = $1 AND host = $2 AND used_at IS NULL AND expires_at > $3
     RETURNING workspace_id, user_id, next_path`,
    [tokenHash, host, now],
  );
  return result.rows[0];
}

export async function insertWorkspaceSession(
  db: Queryable,
  session: { tokenHash: Buffer; workspaceId: number; host: string; userId: number; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    'INSERT INTO workspace_sessions (token_hash, workspace_id, host, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [session.tokenHash, session.workspaceId, session.host, session.userId, session.at, session.expiresAt],
  );
}

export async function findWorkspaceSession(db: Queryable, tokenHash: Buffer, host: string, now: Date): Promise<{ user_id: number; workspace_id: number } | undefined> {
  const result = await db.query<{ user_id: number; workspace_id: number }>(
    'SELECT user_id, workspace_id FROM workspace_sessions WHERE token_hash = $1 AND host = $2 AND expires_at > $3',
    [tokenHash, host, now],
  );
  return result.rows[0];
}

export async function deleteExpiredWorkspaceSignIns(db: Queryable, now: Date): Promise<void> {
  await db.query('DELETE FROM workspace_sign_in_links WHERE expires_at < $1', [now]);
  await db.query('DELETE FROM workspace_sessions WHERE expires_at < $1', [now]);
}
