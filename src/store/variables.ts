import type { SealedSecret } from '../core/secret-box.ts';
import type { Queryable } from './database.ts';

export interface VariableRow {
  name: string;
  value: string;
  created_at: Date;
  updated_at: Date;
}

export interface SecretRow extends SealedSecret {
  name: string;
  created_at: Date;
  updated_at: Date;
}

export async function listVariables(db: Queryable, workspaceId: number): Promise<VariableRow[]> {
  return (
    await db.query<VariableRow>('SELECT name, value, created_at, updated_at FROM workspace_variables WHERE workspace_id = $1 ORDER BY name', [workspaceId])
  ).rows;
}

export async function setVariable(db: Queryable, workspaceId: number, name: string, value: string, at: Date): Promise<VariableRow> {
  return (
    await db.query<VariableRow>(
      `INSERT INTO workspace_variables (workspace_id, name, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (workspace_id, name) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
       RETURNING name, value, created_at, updated_at`,
      [workspaceId, name, value, at],
    )
  ).rows[0];
}

export async function deleteVariable(db: Queryable, workspaceId: number, name: string): Promise<boolean> {
  return ((await db.query('DELETE FROM workspace_variables WHERE workspace_id = $1 AND name = $2', [workspaceId, name])).rowCount ?? 0) > 0;
}

/** The workspace's vault id, creating the vault on first use. */
export async function vaultOf(db: Queryable, workspaceId: number, at: Date): Promise<number> {
  await db.query('INSERT INTO vaults (workspace_id, created_at) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING', [workspaceId, at]);
  return (await db.query<{ id: number }>('SELECT id FROM vaults WHERE workspace_id = $1', [workspaceId])).rows[0].id;
}

export async function findVaultId(db: Queryable, workspaceId: number): Promise<number | undefined> {
  return (await db.query<{ id: number }>('SELECT id FROM vaults WHERE workspace_id = $1', [workspaceId])).rows[0]?.id;
}

const secretColumns = 'name, nonce, ciphertext, tag, key_id AS "keyId", created_at, updated_at';

export async function listSecrets(db: Queryable, vaultId: number): Promise<SecretRow[]> {
  return (await db.query<SecretRow>(`SELECT ${secretColumns} FROM vault_secrets WHERE vault_id = $1 ORDER BY name`, [vaultId])).rows;
}

export async function setSecret(db: Queryable, vaultId: number, name: string, sealed: SealedSecret, at: Date): Promise<SecretRow> {
  return (
    await db.query<SecretRow>(
      `INSERT INTO vault_secrets (vault_id, name, nonce, ciphertext, tag, key_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (vault_id, name) DO UPDATE SET nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, tag = EXCLUDED.tag,
         key_id = EXCLUDED.key_id, updated_at = EXCLUDED.updated_at
       RETURNING ${secretColumns}`,
      [vaultId, name, sealed.nonce, sealed.ciphertext, sealed.tag, sealed.keyId, at],
    )
  ).rows[0];
}

export async function deleteSecret(db: Queryable, vaultId: number, name: string): Promise<boolean> {
  return ((await db.query('DELETE FROM vault_secrets WHERE vault_id = $1 AND name = $2', [vaultId, name])).rowCount ?? 0) > 0;
}
