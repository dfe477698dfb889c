// Each workspace's SSH host key (issue 38): an ed25519 key made by svc at its first need, kept sealed in the database
// (the place binds it to the workspace), handed to the agent for each SSH session and shown in svc's known_hosts.
import ssh2 from 'ssh2';
import type { SecretBox } from '../core/secret-box.ts';
import type { Queryable } from '../store/database.ts';
import { findSshHostKey, insertSshHostKey } from '../store/ssh-host-keys.ts';

export const sshHostKeyPlace = (workspaceId: number) => `ssh-host-key:${workspaceId}`;

export interface SshHostKey {
  /** `ssh-ed25519 AAAA...` */
  publicKey: string;
  /** OpenSSH private key format (ssh2 reads it). */
  privateKey: string;
}

export async function workspaceSshHostKey(db: Queryable, secrets: SecretBox, workspaceId: number, now: Date): Promise<SshHostKey> {
  const stored = await findSshHostKey(db, workspaceId);
  if (stored) return { publicKey: stored.public_key, privateKey: secrets.open(stored.sealed, sshHostKeyPlace(workspaceId)) };
  const pair = ssh2.utils.generateKeyPairSync('ed25519');
  const publicKey = pair.public.split(' ').slice(0, 2).join(' ');
  const kept = await insertSshHostKey(db, workspaceId, { public_key: publicKey, sealed: secrets.seal(pair.private, sshHostKeyPlace(workspaceId)) }, now);
  return { publicKey: kept.public_key, privateKey: secrets.open(kept.sealed, sshHostKeyPlace(workspaceId)) };
}

/** Only the public half (known_hosts); makes the key when the workspace has none yet. */
export async function workspaceSshPublicKey(db: Queryable, secrets: SecretBox, workspaceId: number, now: Date): Promise<string> {
  const stored = await findSshHostKey(db, workspaceId);
  return stored ? stored.public_key : (await workspaceSshHostKey(db, secrets, workspaceId, now)).publicKey;
}
