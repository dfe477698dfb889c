// The root filesystem of a container replica's pod: the image's unpacked root read-only, without writing a byte into
// it (the image store shares it between every replica of every workspace). bubblewrap cannot create mount points in
// a read-only tree, so the pod's `/` is a tmpfs that carries them: each top-level entry of the image is bound
// read-only (links recreated as links), `/etc` is a tmpfs with the image's entries bound one by one beside the
// workspace's hosts file and a passwd that knows the pod's UID, and the pod's own machinery sits where no image
// puts anything (/.svc, /run/svc). Writable: /tmp, /run, /var/tmp (where the image has it), /dev/shm and `mounts`.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_CONTAINER_HOME } from '../container-process.ts';

export interface RootEntry {
  name: string;
  kind: 'directory' | 'file' | 'symlink' | 'other';
  /** A symlink's target, as written. */
  target?: string;
}

export interface ImageRoot {
  rootfs: string;
  top: RootEntry[];
  /** Entries of the image's /etc when it is a directory. */
  etc: RootEntry[];
  /** The image has /var/tmp as a directory (a tmpfs then covers it). */
  varTmp: boolean;
}

/** What the pod adds to the image's root. */
export interface PodFiles {
  hostsFile: string;
  passwdFile: string;
  /** The pod's /etc/group, when it provides one (a pod of the workspace's user); else the image's. */
  groupFile?: string;
  /** The host's resolv.conf, as steps pods see it, when the host has one. */
  resolvConf?: string;
}

/** Top-level names the pod provides itself, whatever the image has there. */
const POD_OWNED = new Set(['dev', 'proc', 'sys', 'tmp', 'run', 'etc', '.svc']);
/** Files of /etc the pod provides itself. */
const POD_OWNED_ETC = new Set(['hosts', 'passwd', 'resolv.conf']);

/** Reads what the pod's root needs to know of the image's root (top level, /etc, /var/tmp); never writes. */
export async function readImageRoot(rootfs: string): Promise<ImageRoot> {
  const top = await entriesOf(rootfs);
  const etc = top.find((entry) => entry.name === 'etc')?.kind === 'directory' ? await entriesOf(path.join(rootfs, 'etc')) : [];
  const varTmp = top.find((entry) => entry.name === 'var')?.kind === 'directory' && (await kindOf(path.join(rootfs, 'var', 'tmp'))) === 'directory';
  return { rootfs, top, etc, varTmp };
}

/** The image has a top-level directory `name` (e.g. `nix`). */
export function hasTopDirectory(root: ImageRoot, name: string): boolean {
  return root.top.some((entry) => entry.name === name && entry.kind === 'directory');
}

async function entriesOf(dir: string): Promise<RootEntry[]> {
  const names = (await readdir(dir)).sort();
  const entries: RootEntry[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    const kind = await kindOf(full);
    if (kind === undefined) continue; // gone since it was listed
    entries.push(kind === 'symlink' ? { name, kind, target: await readlink(full) } : { name, kind });
  }
  return entries;
}

async function kindOf(file: string): Promise<RootEntry['kind'] | undefined> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return undefined;
  if (info.isSymbolicLink()) return 'symlink';
  if (info.isDirectory()) return 'directory';
  return info.isFile() ? 'file' : 'other';
}

/** Made read-only last, after the pod's own binds and `mounts` found their mount points in them. */
export const SEAL_ROOT_ARGS = ['--remount-ro', '/etc', '--remount-ro', '/'];

/**
 * bubblewrap arguments for the pod's root, before the pod's own binds (then SEAL_ROOT_ARGS); pure. `ownTop` names
 * further top-level entries the pod provides itself (`data` in a pod with the volume at /data/app).
 */
export function imageRootArgs(root: ImageRoot, files: PodFiles, ownTop: string[] = []): string[] {
  const entryArgs = (entries: RootEntry[], hostDir: string, podDir: string, skip: Set<string>) =>
    entries
      .filter((entry) => !skip.has(entry.name) && entry.kind !== 'other')
      .flatMap((entry) =>
        entry.kind === 'symlink'
          ? ['--symlink', entry.target!, path.posix.join(podDir, entry.name)]
          : ['--ro-bind', path.join(hostDir, entry.name), path.posix.join(podDir, entry.name)],
      );
  return [
    '--tmpfs', '/',
    ...entryArgs(root.top, root.rootfs, '/', new Set([...POD_OWNED, ...ownTop])),
    '--tmpfs', '/etc',
    ...entryArgs(root.etc, path.join(root.rootfs, 'etc'), '/etc', files.groupFile ? new Set([...POD_OWNED_ETC, 'group']) : POD_OWNED_ETC),
    '--ro-bind', files.hostsFile, '/etc/hosts',
    '--ro-bind', files.passwdFile, '/etc/passwd',
    ...(files.groupFile ? ['--ro-bind', files.groupFile, '/etc/group'] : []),
    ...(files.resolvConf ? ['--ro-bind', files.resolvConf, '/etc/resolv.conf'] : []),
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--tmpfs', '/run',
    ...(root.varTmp ? ['--tmpfs', '/var/tmp'] : []),
  ];
}

/**
 * The image's /etc/passwd with a line for `uid` when it has none, so that programs asking who they are get an answer
 * (the workspace user's login, else `workspace`; group 0, home /tmp) instead of failing on an unknown UID.
 */
export async function podPasswd(rootfs: string, uid: number, login = 'workspace'): Promise<string> {
  const file = path.join(rootfs, 'etc', 'passwd');
  const image = (await kindOf(file)) === 'file' ? await readFile(file, 'utf8') : '';
  const known = image.split('\n').some((line) => line.split(':')[2] === String(uid));
  const lines = image.length > 0 && !image.endsWith('\n') ? `${image}\n` : image;
  const root = image.length === 0 && uid !== 0 ? 'root:x:0:0:root:/root:/sbin/nologin\n' : '';
  const taken = image.split('\n').some((line) => line.split(':')[0] === login);
  return known ? lines : `${lines}${root}${taken ? 'workspace' : login}:x:${uid}:0:workspace user:${DEFAULT_CONTAINER_HOME}:/sbin/nologin\n`;
}
