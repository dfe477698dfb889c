import type { Queryable } from './database.ts';

export interface UserRow {
  id: number;
  email: string;
  name: string;
  password_hash: string | null;
  is_admin: boolean;
  created_at: Date;
  updated_at: Date;
  version: number;
}

const columns = 'id, email, name, password_hash, is_admin, created_at, updated_at, version';

export async function insertUser(
  db: Queryable,
  user: { email: string; name: string; passwordHash: string | null; isAdmin: boolean; at: Date },
): Promise<UserRow> {
  const result = await db.query<UserRow>(
    `INSERT INTO users (email, name, password_hash, is_admin, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${columns}`,
    [user.email, user.name, user.passwordHash, user.isAdmin, user.at],
  );
  return result.rows[0];
}

export async function findUserById(db: Queryable, id: number): Promise<UserRow | undefined> {
  return (await db.query<UserRow>(`SELECT ${columns} FROM users WHERE id = $1`, [id])).rows[0];
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  return (await db.query<UserRow>(`SELECT ${columns} FROM users WHERE lower(email) = lower($1)`, [email])).rows[0];
}

export async function countUsers(db: Queryable): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0].n;
}

/** Users in id order after `afterId`, one more than `limit` to tell whether a next page exists. */
export async function listUsers(db: Queryable, afterId: number, limit: number): Promise<UserRow[]> {
  return (
    await db.query<UserRow>(`SELECT ${columns} FROM users WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, limit + 1])
  ).rows;
}

export async function updatePassword(db: Queryable, id: number, passwordHash: string, at: Date): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2, updated_at = $3, version = version + 1 WHERE id = $1', [
    id,
    passwordHash,
    at,
  ]);
  await db.query("SELECT pg_notify('svc_auth', $1)", [`user:${id}`]);
}

/** The person's dotfiles repository (migration 048), or null. */
export async function findDotfilesUrl(db: Queryable, id: number): Promise<string | null> {
  return (await db.query<{ dotfiles_url: string | null }>('SELECT dotfiles_url FROM users WHERE id = $1', [id])).rows[0]?.dotfiles_url ?? null;
}

export async function setDotfilesUrl(db: Queryable, id: number, url: string | null, at: Date): Promise<void> {
  await db.query('UPDATE users SET dotfiles_url = $2, updated_at = $3 WHERE id = $1', [id, url, at]);
}
