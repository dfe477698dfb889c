// A user's git credentials as the clone and the workspace use them: sealed at places bound to the user and the host
// (or key), opened only for the one who owns them.
import type { SecretBox } from '../core/secret-box.ts';
import type { Queryable } from '../store/database.ts';
import type { ExecGitIdentity } from '../agent/stream-protocol.ts';
import { findGitCredential, findSealedSshKey, listSealedGitCredentials } from '../store/git-credentials.ts';
import { gitRemoteOf } from './hosts.ts';
import { openSshPrivateKeyFile } from './ssh-key.ts';

export const gitCredentialPlace = (userId: number, host: string) => `git-credential:${userId}:${host}`;
export const sshKeyPlace = (userId: number) => `ssh-key:${userId}`;

/** What a clone authenticates with; `host` names the host in messages. Never logged, stored or shown. */
export type CloneCredential =
  | { kind: 'https'; host: string; username: string; password: string }
  | { kind: 'ssh'; host: string; privateKeyFile: string }
  | { kind: 'none'; host: string; transport: 'https' | 'ssh' };

/**
 * The credential of `userId` for the repository at `url`: their HTTPS credential for its host, or their SSH key for
 * an ssh URL; `none` (with the host) when they have none; undefined for a repository on this machine.
 */
export async function cloneCredentialFor(db: Queryable, secrets: SecretBox, userId: number | null, url: string): Promise<CloneCredential | undefined> {
  const remote = gitRemoteOf(url);
  if (remote.transport !== 'https' && remote.transport !== 'ssh') return undefined;
  const none: CloneCredential = { kind: 'none', host: remote.host, transport: remote.transport };
  if (userId === null) return none;
  if (remote.transport === 'https') {
    const row = await findGitCredential(db, userId, remote.host);
    if (!row) return none;
    return { kind: 'https', host: remote.host, username: row.username, password: secrets.open(row.sealed, gitCredentialPlace(userId, remote.host)) };
  }
  const key = await findSealedSshKey(db, userId);
  if (!key) return none;
  const pem = secrets.open(key.sealed, sshKeyPlace(userId));
  return { kind: 'ssh', host: remote.host, privateKeyFile: openSshPrivateKeyFile(pem, key.public_key.split(' ')[2] ?? '') };
}

/**
 * What a session in a workspace gets of the person who opens it (the agent serves it from memory while the session
 * lasts: src/agent/git-sockets.ts): their name and e-mail for commits, every HTTPS credential and their SSH key.
 */
export async function gitIdentityOf(db: Queryable, secrets: SecretBox, user: { id: number; name: string; email: string }): Promise<ExecGitIdentity> {
  const credentials = (await listSealedGitCredentials(db, user.id)).map((row) => ({
    host: row.host,
    username: row.username,
    password: secrets.open(row.sealed, gitCredentialPlace(user.id, row.host)),
  }));
  const key = await findSealedSshKey(db, user.id);
  return { name: user.name || user.email, email: user.email, credentials, ...(key ? { sshKey: secrets.open(key.sealed, sshKeyPlace(user.id)) } : {}) };
}
