// What lives where on a workspace's volume (docs/runtime.md, "The volume"): its root is the pods' /data, with the
// code at app/ (/data/app), the person's HOME at home/ (/data/home: caches, shell history, .npm, dotfiles) and svc's
// own files at .svc/ (/data/.svc: the editor's state), so that nothing but the repository is in /data/app.
// A volume made before this layout had the code at its root (and svc's files in its .svc): the first start after
// the upgrade moves the code into app/ once, in steps a crash can resume.
import { chmod, chown, lstat, mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const VOLUME_APP = 'app';
export const VOLUME_HOME = 'home';
export const VOLUME_SVC = '.svc';
/** Written once the code has its own directory; its presence says the volume has this layout. */
const LAYOUT_MARKER = path.join(VOLUME_SVC, 'layout');
/** Where the code of an old-layout volume gathers before it becomes app/. */
const MOVING = '.svc-moving-app';
/** Entries of an old volume's root that are not the code. */
const NOT_CODE = new Set([VOLUME_SVC, MOVING, 'lost+found']);

export const volumeAppDir = (volume: string) => path.join(volume, VOLUME_APP);
export const volumeHomeDir = (volume: string) => path.join(volume, VOLUME_HOME);

export interface LayoutOwner {
  uid: number;
  asRoot: boolean;
}

const exists = (file: string) => stat(file).then(() => true, () => false);

/** Serialized per volume in this process: a replica and the editor pod starting at once migrate once. */
const pending = new Map<string, Promise<'made' | 'moved' | 'kept'>>();

/**
 * Gives the volume its layout (idempotent): a new volume gets its directories, an old one has its code moved into
 * app/. Answers what it did. The directories are the workspace UID's, group 0, setgid, like the volume's root.
 */
export function ensureVolumeLayout(volume: string, owner: LayoutOwner): Promise<'made' | 'moved' | 'kept'> {
  const before = pending.get(volume) ?? Promise.resolve('kept' as const);
  const next = before.catch(() => 'kept' as const).then(() => layOut(volume, owner));
  pending.set(volume, next);
  void next.finally(() => pending.get(volume) === next && pending.delete(volume)).catch(() => undefined);
  return next;
}

async function layOut(volume: string, owner: LayoutOwner): Promise<'made' | 'moved' | 'kept'> {
  let outcome: 'made' | 'moved' | 'kept' = 'kept';
  if (!(await exists(path.join(volume, LAYOUT_MARKER)))) {
    await ownedDir(path.join(volume, VOLUME_SVC), owner);
    const code = (await readdir(volume)).filter((name) => !NOT_CODE.has(name));
    outcome = code.length > 0 || (await exists(path.join(volume, MOVING))) ? 'moved' : 'made';
    await ownedDir(path.join(volume, MOVING), owner);
    for (const name of code) await rename(path.join(volume, name), path.join(volume, MOVING, name));
    await writeFile(path.join(volume, LAYOUT_MARKER), 'app home\n');
    if (owner.asRoot) await chown(path.join(volume, LAYOUT_MARKER), owner.uid, 0);
    await chmod(path.join(volume, LAYOUT_MARKER), 0o664); // group permissions equal to the user's, as on the whole volume
  }
  // after the marker, MOVING holds the whole code: it becomes app/ (a crash between the two resumes here)
  if ((await exists(path.join(volume, MOVING))) && !(await exists(volumeAppDir(volume)))) await rename(path.join(volume, MOVING), volumeAppDir(volume));
  await ownedDir(volumeAppDir(volume), owner);
  await ownedDir(volumeHomeDir(volume), owner);
  for (const name of [VOLUME_APP, VOLUME_HOME]) {
    if (!(await lstat(path.join(volume, name))).isDirectory()) throw new Error(`the volume's ${name} is not a directory (made a link from inside the workspace?): /data/${name} must be one`);
  }
  return outcome;
}

async function ownedDir(dir: string, owner: LayoutOwner): Promise<void> {
  if (await exists(dir)) return;
  await mkdir(dir);
  if (owner.asRoot) await chown(dir, owner.uid, 0);
  await chmod(dir, 0o2770);
}
