// The workspaces' SSH host keys (migration 058): the public key as known_hosts shows it, the private key sealed.
import type { SealedSecret } from '../core/secret-box.ts';
import type { Queryable } from './database.ts';

export interface SshHostKeyRow {
  public_key: string;
  sealed: SealedSecret;
}

type Columns = { public_key: string; nonce: Buffer; ciphertext: Buffer; tag: Buffer; key_id: string };

export async function findSshHostKey(db: Queryable, workspaceId: number): Promise<SshHostKeyRow | undefined> {
  const row = (await db.query<Columns>('SELECT public_key, nonce, ciphertext, tag, key_id FROM workspace_ssh_host_keys WHERE workspace_id = $1', [workspaceId])).rows[0];
  return row && { public_key: row.public_key, sealed: { nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag, keyId: row.key_id } };
}

/** Stores the key unless the workspace has one already (two first uses at once keep the first); answers the stored one. */
export async function insertSshHostKey(db: Queryable, workspaceId: number, key: SshHostKeyRow, at: Date): Promise<SshHostKeyRow> {
  await db.query(
    `INSERT INTO workspace_ssh_host_keys (workspace_id, public_key, nonce, ciphertext, tag, key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (workspace_id) DO NOTHING`,
    [workspaceId, key.public_key, key.sealed.nonce, key.sealed.ciphertext, key.sealed.tag, key.sealed.keyId, at],
  );
  return (await findSshHostKey(db, workspaceId))!;
}
