// Volumes of the local driver: a directory per workspace under <data dir>/volumes, owned by the workspace UID
// and group 0, setgid, group permissions equal to the user's; with the loop backend the directory is the mount point
// of the volume's own file system of its size (volume-images.ts). Pods see it at /data, the code in its app/ at
// /data/app and HOME in its home/ (volume-layout.ts). Archives are gzip-compressed tar files of the whole volume.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, chown, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeFailure } from '../driver.ts';
import { runCommand } from './processes.ts';
import { mountVolumeImage, removeVolumeImage, type VolumeBackend } from './volume-images.ts';
import { ensureVolumeLayout, volumeAppDir } from './volume-layout.ts';
import { reownTree } from './volume-owner.ts';

/** setgid, rwx for user and group, nothing for others (other workspaces' UIDs). */
export const VOLUME_MODE = 0o2770;

export interface VolumeHost {
  dataDir: string;
  /** The server runs as root and can hand files to workspace UIDs. */
  asRoot: boolean;
  /** `loop`: each volume a file system of its size (writes past it fail); `directory` (the default here): measured only. */
  volumeBackend?: VolumeBackend;
  log?: (message: string) => void;
}

export function volumesDir(host: VolumeHost): string {
  return path.join(host.dataDir, 'volumes');
}

export function volumeDir(host: VolumeHost, id: number): string {
  return path.join(volumesDir(host), String(id));
}

/** Where the workspace's code is on the host: the volume's app/, the pods' /data/app (volume-layout.ts). */
export function appDir(host: VolumeHost, id: number): string {
  return volumeAppDir(volumeDir(host, id));
}

/** Gives the workspace's volume its layout (volume-layout.ts); says so in the log when an old volume's code moved. */
export async function ensureWorkspaceLayout(host: VolumeHost, id: number, uid: number): Promise<void> {
  const done = await ensureVolumeLayout(volumeDir(host, id), { uid, asRoot: host.asRoot }).catch((error: Error) => {
    throw new RuntimeFailure('agent', error.message);
  });
  if (done === 'moved') host.log?.(`the code of workspace ${id}'s volume moved to its app directory (the volume's layout since HOME is on it)`);
}

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}

/**
 * Creates the volume directory (idempotent) and gives it to the workspace UID; with the loop backend, mounts the
 * volume's file system there first (made at `storageGib`, grown when that grew).
 */
export async function createVolumeDir(host: VolumeHost, id: number, uid: number, storageGib: number): Promise<string> {
  await ensureVolumesDir(host);
  const dir = volumeDir(host, id);
  if (host.volumeBackend === 'loop') await mountVolumeImage(host, id, dir, storageGib, host.log);
  else await mkdir(dir, { recursive: true });
  await ownVolumeRoot(host, dir, uid);
  return dir;
}

/** Mounts the volume's file system again when it is not (loop backend; after a reboot); nothing for directories. */
export async function ensureVolumeMounted(host: VolumeHost, id: number, storageGib: number): Promise<void> {
  if (host.volumeBackend !== 'loop' || !(await exists(volumeDir(host, id)))) return;
  await mountVolumeImage(host, id, volumeDir(host, id), storageGib, host.log);
}

/** Removes the volume directory, and with the loop backend unmounts it and removes its image first. */
async function removeVolume(host: VolumeHost, id: number): Promise<void> {
  if (host.volumeBackend === 'loop') await removeVolumeImage(host, id, volumeDir(host, id));
  await rm(volumeDir(host, id), { recursive: true, force: true });
}

async function ownVolumeRoot(host: VolumeHost, dir: string, uid: number): Promise<void> {
  if (host.asRoot) await chown(dir, uid, 0);
  await chmod(dir, VOLUME_MODE);
}

/**
 * A pod is set up by the workspace UID itself (bubblewrap runs as it), so it must be able to pass through the data
 * directory to its own volume: others may enter (x) but not list the data and volumes directories.
 */
async function ensureVolumesDir(host: VolumeHost): Promise<void> {
  const dir = volumesDir(host);
  await mkdir(dir, { recursive: true, mode: 0o711 });
  if (!host.asRoot) return;
  await chmod(dir, 0o711);
  // Pod processes run with group 0, so for directories of group root the group bits decide, not the others bits.
  const dataMode = (await stat(host.dataDir)).mode;
  if ((dataMode & 0o011) !== 0o011) await chmod(host.dataDir, (dataMode & 0o7777) | 0o011);
  for (let parent = path.dirname(host.dataDir); ; parent = path.dirname(parent)) {
    const info = await stat(parent);
    if ((info.mode & (info.gid === 0 ? 0o010 : 0o001)) === 0) {
      throw new Error(`workspace pods cannot reach their volumes under ${host.dataDir}: others may not enter ${parent} (chmod o+x ${parent}, or choose another data directory)`);
    }
    if (parent === path.dirname(parent)) return;
  }
}

export async function deleteVolumeDir(host: VolumeHost, id: number): Promise<void> {
  await removeVolume(host, id);
  await rm(nixDir(host, id), { recursive: true, force: true });
}

/**
 * What the workspace's pods see at /nix (docs/runtime.md, "/nix"): a directory of the workspace's own beside its
 * volume, not in it (so /data/app cannot write what a service sees read-only), kept while the volume is archived and
 * deleted with it. Writable in the editor pod and its stage steps, read-only in steps replicas unless `nixWritable`.
 */
export function nixDir(host: VolumeHost, id: number): string {
  return path.join(host.dataDir, 'nix', String(id));
}

/** Creates the workspace's /nix directory (idempotent), the workspace UID's like its volume. */
export async function ensureNixDir(host: VolumeHost, id: number, uid: number): Promise<string> {
  const parent = path.join(host.dataDir, 'nix');
  await mkdir(parent, { recursive: true, mode: 0o711 });
  await chmod(parent, 0o711);
  const dir = nixDir(host, id);
  await mkdir(dir, { recursive: true });
  await ownVolumeRoot(host, dir, uid);
  return dir;
}

export async function isEmptyDir(dir: string): Promise<boolean> {
  return (await readdir(dir)).length === 0;
}

/** Bytes the volume takes on disk (0 when it does not exist). */
export async function volumeBytes(host: VolumeHost, id: number): Promise<number> {
  const dir = volumeDir(host, id);
  if (!(await exists(dir))) return 0;
  const du = await runCommand('du', ['-s', '--block-size=1', dir]);
  if (du.code !== 0) throw new Error(`du ${dir}: ${du.stderr.trim()}`);
  return Number(du.stdout.split(/\s/)[0]);
}

/**
 * Packs the volume into `archiveFile` (written under a temporary name, then renamed) and frees the volume. Run again
 * after a crash, it finds the archive already made and the volume gone, and answers the same.
 */
export async function packVolume(host: VolumeHost, id: number, archiveFile: string): Promise<{ bytes: number; sha256: string }> {
  const dir = volumeDir(host, id);
  if (!(await exists(dir))) {
    if (await exists(archiveFile)) return describeArchive(archiveFile);
    throw new Error(`workspace ${id} has no volume to archive`);
  }
  await mkdir(path.dirname(archiveFile), { recursive: true, mode: 0o700 });
  const partial = `${archiveFile}.partial`;
  const tar = await runCommand('tar', ['--create', '--gzip', '--numeric-owner', '--file', partial, '--directory', dir, '.']);
  if (tar.code !== 0) {
    await rm(partial, { force: true });
    throw new Error(`packing the volume of workspace ${id} failed: ${tar.stderr.trim()}`);
  }
  await chmod(partial, 0o600);
  await rename(partial, archiveFile);
  await removeVolume(host, id);
  return describeArchive(archiveFile);
}

/** Refills the volume from `archiveFile`, with the owners and modes it was packed with. */
export async function unpackVolume(host: VolumeHost, id: number, uid: number, storageGib: number, archiveFile: string): Promise<void> {
  if (!(await exists(archiveFile))) throw new Error(`the archive ${archiveFile} does not exist`);
  const dir = await createVolumeDir(host, id, uid, storageGib);
  const owners = host.asRoot ? ['--same-owner', '--numeric-owner'] : ['--no-same-owner'];
  const tar = await runCommand('tar', ['--extract', '--gzip', '--same-permissions', ...owners, '--file', archiveFile, '--directory', dir]);
  if (tar.code !== 0) throw new Error(`restoring the volume of workspace ${id} failed: ${tar.stderr.trim()}`);
  await ownVolumeRoot(host, dir, uid);
  // Archived before a volume owner change (spec 4.7), its files carry the old UID: they get the workspace's own.
  if (host.asRoot) await reownTree(dir, '/data', uid);
  // archived before the volume had its layout, the code comes back at the root: it moves into app/
  await ensureWorkspaceLayout(host, id, uid);
}

async function describeArchive(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { bytes: (await stat(file)).size, sha256: hash.digest('hex') };
}
