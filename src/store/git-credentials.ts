// Git credentials of users (migration 046): HTTPS secrets per host and one SSH key pair, sealed, never listed.
import type { SealedSecret } from '../core/secret-box.ts';
import type { Queryable } from './database.ts';

export interface GitCredentialRow {
  host: string;
  username: string;
  created_at: Date;
  updated_at: Date;
}

export interface SshKeyRow {
  public_key: string;
  fingerprint: string;
  created_at: Date;
}

type SealedColumns = { nonce: Buffer; ciphertext: Buffer; tag: Buffer; key_id: string };

const sealedOf = ({ nonce, ciphertext, tag, key_id }: SealedColumns): SealedSecret => ({ nonce, ciphertext, tag, keyId: key_id });
const listed = 'host, username, created_at, updated_at';

export async function listGitCredentials(db: Queryable, userId: number): Promise<GitCredentialRow[]> {
  return (await db.query<GitCredentialRow>(`SELECT ${listed} FROM user_git_credentials WHERE user_id = $1 ORDER BY host`, [userId])).rows;
}

/** Adds or replaces the credential for a host; `created` tells which. */
export async function setGitCredential(
  db: Queryable,
  row: { userId: number; host: string; username: string; sealed: SealedSecret; at: Date },
): Promise<GitCredentialRow & { created: boolean }> {
  const result = await db.query<GitCredentialRow & { created: boolean }>(
    `INSERT INTO user_git_credentials (user_id, host, username, nonce, ciphertext, tag, key_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (user_id, host) DO UPDATE SET username = EXCLUDED.username, nonce = EXCLUDED.nonce,
       ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, key_id = EXCLUDED.key_id, updated_at = EXCLUDED.updated_at
     RETURNING ${listed}, (xmax = 0) AS created`,
    [row.userId, row.host, row.username, row.sealed.nonce, row.sealed.ciphertext, row.sealed.tag, row.sealed.keyId, row.at],
  );
  return result.rows[0];
}

export async function deleteGitCredential(db: Queryable, userId: number, host: string): Promise<boolean> {
  return ((await db.query('DELETE FROM user_git_credentials WHERE user_id = $1 AND host = $2', [userId, host])).rowCount ?? 0) > 0;
}

export async function findGitCredential(db: Queryable, userId: number, host: string): Promise<(GitCredentialRow & { sealed: SealedSecret }) | undefined> {
  const row = (
    await db.query<GitCredentialRow & SealedColumns>(`SELECT ${listed}, nonce, ciphertext, tag, key_id FROM user_git_credentials WHERE user_id = $1 AND host = $2`, [userId, host])
  ).rows[0];
  if (!row) return undefined;
  const { nonce, ciphertext, tag, key_id, ...rest } = row;
  return { ...rest, sealed: sealedOf({ nonce, ciphertext, tag, key_id }) };
}

/** Every credential of the user with its sealed secret: for the sessions they open in a workspace. */
export async function listSealedGitCredentials(db: Queryable, userId: number): Promise<Array<GitCredentialRow & { sealed: SealedSecret }>> {
  const rows = (await db.query<GitCredentialRow & SealedColumns>(`SELECT ${listed}, nonce, ciphertext, tag, key_id FROM user_git_credentials WHERE user_id = $1 ORDER BY host`, [userId])).rows;
  return rows.map(({ nonce, ciphertext, tag, key_id, ...rest }) => ({ ...rest, sealed: sealedOf({ nonce, ciphertext, tag, key_id }) }));
}

export async function findSshKey(db: Queryable, userId: number): Promise<SshKeyRow | undefined> {
  return (await db.query<SshKeyRow>('SELECT public_key, fingerprint, created_at FROM user_ssh_keys WHERE user_id = $1', [userId])).rows[0];
}

export async function findSealedSshKey(db: Queryable, userId: number): Promise<(SshKeyRow & { sealed: SealedSecret }) | undefined> {
  const row = (
    await db.query<SshKeyRow & SealedColumns>('SELECT public_key, fingerprint, created_at, nonce, ciphertext, tag, key_id FROM user_ssh_keys WHERE user_id = $1', [userId])
  ).rows[0];
  if (!row) return undefined;
  return { public_key: row.public_key, fingerprint: row.fingerprint, created_at: row.created_at, sealed: sealedOf(row) };
}

/** Stores the user's key pair, replacing the one before (a rotation); `created` is true for the first. */
export async function setSshKey(
  db: Queryable,
  row: { userId: number; publicKey: string; fingerprint: string; sealed: SealedSecret; at: Date },
): Promise<SshKeyRow & { created: boolean }> {
  const result = await db.query<SshKeyRow & { created: boolean }>(
    `INSERT INTO user_ssh_keys (user_id, public_key, fingerprint, nonce, ciphertext, tag, key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (user_id) DO UPDATE SET public_key = EXCLUDED.public_key, fingerprint = EXCLUDED.fingerprint, nonce = EXCLUDED.nonce,
       ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, key_id = EXCLUDED.key_id, created_at = EXCLUDED.created_at
     RETURNING public_key, fingerprint, created_at, (xmax = 0) AS created`,
    [row.userId, row.publicKey, row.fingerprint, row.sealed.nonce, row.sealed.ciphertext, row.sealed.tag, row.sealed.keyId, row.at],
  );
  return result.rows[0];
}
