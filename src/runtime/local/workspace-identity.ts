// The files and settings that make a workspace's pods know their user (pod-identity.ts): its passwd and group,
// written beside the pod from the pod's base system (the machine's /etc, or the image's), and what the pod's
// environment, host name and volume bind say of it.
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceRef } from '../driver.ts';
import { podHostName, podUserOf } from '../workspace-user.ts';
import { freeLogin, groupWithUser, identityEnv, passwdWithUser, POD_HOME_DIR, POD_VOLUME_DIR, type IdentityEntry } from './pod-identity.ts';
import { createRuntimeDirs, workspaceRuntimeDir } from './replica-files.ts';
import type { Bind } from './sandbox.ts';
import { volumeDir, type VolumeHost } from './volumes.ts';

export interface WorkspaceIdentity {
  passwdFile: string;
  groupFile: string;
  /** The two files bound over the base system's. */
  binds: Bind[];
  /** HOME, USER, LOGNAME, SHELL. */
  env: Record<string, string>;
  hostname: string;
}

/**
 * Writes `<filesBase>.passwd` and `<filesBase>.group` from `rootfs`'s own (`/` for the machine's system) with the
 * workspace UID's entry, whose shell is `shell` (bash, or the image's shell).
 */
export async function writeWorkspaceIdentity(workspace: WorkspaceRef, filesBase: string, rootfs = '/', shell = '/bin/bash'): Promise<WorkspaceIdentity> {
  const entry: IdentityEntry = { uid: workspace.uid, user: workspace.user ?? podUserOf(undefined, undefined), home: POD_HOME_DIR, shell };
  const passwd = await readFile(path.join(rootfs, 'etc', 'passwd'), 'utf8').catch(() => '');
  const group = await readFile(path.join(rootfs, 'etc', 'group'), 'utf8').catch(() => '');
  const login = freeLogin(passwd, entry.uid, entry.user.login);
  const passwdFile = `${filesBase}.passwd`;
  const groupFile = `${filesBase}.group`;
  await writeAtomically(passwdFile, passwdWithUser(passwd, entry, login));
  await writeAtomically(groupFile, groupWithUser(group, entry.uid, login));
  return {
    passwdFile,
    groupFile,
    binds: [{ source: passwdFile, target: '/etc/passwd' }, { source: groupFile, target: '/etc/group' }],
    env: identityEnv(entry, login),
    hostname: podHostName(workspace.name, workspace.id),
  };
}

/** Pods of a workspace starting at once (a stage step beside the editor pod) never bind a half-written file. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const partial = `${file}.${randomBytes(4).toString('hex')}.partial`;
  await writeFile(partial, text, { mode: 0o644 });
  await rename(partial, file);
}

/** The base of the identity files of a workspace's pods on the machine's system (`<runtime dir>/identity`). */
export const hostIdentityBase = (dataDir: string, id: number) => path.join(workspaceRuntimeDir(dataDir, id), 'identity');

/**
 * What a sandbox of the workspace on the machine's system needs to know its user and see its volume: the volume at
 * /data (the code at /data/app, HOME at /data/home), the passwd and group bound, HOME, USER, SHELL, the host name.
 */
export async function workspaceSandboxParts(host: VolumeHost, workspace: WorkspaceRef) {
  await createRuntimeDirs(host.dataDir, workspace.id);
  const identity = await writeWorkspaceIdentity(workspace, hostIdentityBase(host.dataDir, workspace.id));
  return { volumeDir: volumeDir(host, workspace.id), volumeAt: POD_VOLUME_DIR, hostname: identity.hostname, identityBinds: identity.binds, identityEnv: identity.env };
}
