// Registry credentials of teams (migration 014): the password sealed, never listed.
import type { SealedSecret } from '../core/secret-box.ts';
import type { Queryable } from './database.ts';

export interface RegistryCredentialRow {
  registry: string;
  username: string;
  created_at: Date;
  updated_at: Date;
}

export interface SealedRegistryCredentialRow extends RegistryCredentialRow {
  sealed: SealedSecret;
}

const listed = 'registry, username, created_at, updated_at';

export async function listRegistryCredentials(db: Queryable, teamId: number): Promise<RegistryCredentialRow[]> {
  return (await db.query<RegistryCredentialRow>(`SELECT ${listed} FROM team_registry_credentials WHERE team_id = $1 ORDER BY registry`, [teamId])).rows;
}

/** Adds or replaces the credentials for a registry; `created` tells which. */
export async function setRegistryCredential(
  db: Queryable,
  row: { teamId: number; registry: string; username: string; sealed: SealedSecret; at: Date },
): Promise<RegistryCredentialRow & { created: boolean }> {
  const result = await db.query<RegistryCredentialRow & { created: boolean }>(
    `INSERT INTO team_registry_credentials (team_id, registry, username, nonce, ciphertext, tag, key_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (team_id, registry) DO UPDATE SET username = EXCLUDED.username, nonce = EXCLUDED.nonce,
       ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag, key_id = EXCLUDED.key_id, updated_at = EXCLUDED.updated_at
     RETURNING ${listed}, (xmax = 0) AS created`,
    [row.teamId, row.registry, row.username, row.sealed.nonce, row.sealed.ciphertext, row.sealed.tag, row.sealed.keyId, row.at],
  );
  return result.rows[0];
}

export async function deleteRegistryCredential(db: Queryable, teamId: number, registry: string): Promise<boolean> {
  return ((await db.query('DELETE FROM team_registry_credentials WHERE team_id = $1 AND registry = $2', [teamId, registry])).rowCount ?? 0) > 0;
}

export async function findRegistryCredential(db: Queryable, teamId: number, registry: string): Promise<SealedRegistryCredentialRow | undefined> {
  const row = (
    await db.query<RegistryCredentialRow & { nonce: Buffer; ciphertext: Buffer; tag: Buffer; key_id: string }>(
      `SELECT ${listed}, nonce, ciphertext, tag, key_id FROM team_registry_credentials WHERE team_id = $1 AND registry = $2`,
      [teamId, registry],
    )
  ).rows[0];
  if (!row) return undefined;
  const { nonce, ciphertext, tag, key_id, ...rest } = row;
  return { ...rest, sealed: { nonce, ciphertext, tag, keyId: key_id } };
}
