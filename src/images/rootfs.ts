// An image's root filesystem, assembled from its unpacked layers in order, as overlayfs would show them: each
// layer's files are hard links to the layer's own (no data is copied), directories are made fresh, `.wh.<name>`
// removes what lower layers had at that name and `.wh..wh..opq` empties a directory of what lower layers put in it.
// Nothing here follows a symlink of the image: every directory written into was checked to be a real one first.
import { chmod, copyFile, link, lstat, mkdir, readdir, readlink, rm, symlink } from 'node:fs/promises';
import path from 'node:path';

export interface AssembledLayer {
  dir: string;
  deferredLinks: { path: string; target: string }[];
}

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';
/** Mount points a pod needs in a read-only root (bubblewrap cannot make them there). */
const mountPoints: [string, number][] = [['dev', 0o755], ['proc', 0o555], ['sys', 0o555], ['tmp', 0o1777]];

export class RootfsError extends Error {}

/** Fills the empty directory `target` with the layers, lowest first. */
export async function assembleRootfs(layers: AssembledLayer[], target: string): Promise<void> {
  for (const [i, layer] of layers.entries()) {
    await mergeDirectory(layer.dir, target, i === 0);
    for (const hardLink of layer.deferredLinks) await linkToLowerLayer(target, hardLink);
  }
  for (const [name, mode] of mountPoints) {
    const where = path.join(target, name);
    if (!(await lstat(where).catch(() => undefined))) {
      await mkdir(where);
      await chmod(where, mode);
    }
  }
}

/**
 * Merges `source` into `destination`. `fresh` when this assembly made `destination` just now (or it is the empty
 * target and this is the lowest layer): nothing there to remove or replace, so no name is looked up first.
 */
async function mergeDirectory(source: string, destination: string, fresh: boolean): Promise<void> {
  const entries = await readdir(source, { withFileTypes: true });
  if (!fresh && entries.some((e) => e.name === OPAQUE)) {
    for (const lower of await readdir(destination)) await rm(path.join(destination, lower), { recursive: true, force: true });
  }
  for (const entry of entries) {
    if (!fresh && entry.name.startsWith(WHITEOUT) && entry.name !== OPAQUE) {
      await rm(path.join(destination, entry.name.slice(WHITEOUT.length)), { recursive: true, force: true });
    }
  }
  const rest = entries.filter((e) => !e.name.startsWith(WHITEOUT));
  for (let i = 0; i < rest.length; i += 64) {
    await Promise.all(rest.slice(i, i + 64).map((entry) => mergeEntry(path.join(source, entry.name), path.join(destination, entry.name), entry, fresh)));
  }
}

async function mergeEntry(from: string, to: string, entry: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }, fresh: boolean): Promise<void> {
  const existing = fresh ? undefined : await lstat(to).catch(() => undefined);
  if (entry.isDirectory()) {
    if (existing && !existing.isDirectory()) await rm(to, { force: true });
    const made = !existing || !existing.isDirectory();
    if (made) await mkdir(to);
    await mergeDirectory(from, to, made);
    await chmod(to, (await lstat(from)).mode & 0o7777);
    return;
  }
  if (!entry.isFile() && !entry.isSymbolicLink()) return; // sockets and the like: nothing a pod needs
  if (existing) await rm(to, { recursive: true, force: true });
  await linkOrCopy(from, to, entry.isSymbolicLink());
}

/** A hard link; a copy when the file has reached the filesystem's link limit (EMLINK). */
async function linkOrCopy(from: string, to: string, isSymlink: boolean): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EMLINK') throw error;
    if (isSymlink) await symlink(await readlink(from), to);
    else {
      await copyFile(from, to);
      await chmod(to, (await lstat(from)).mode & 0o7777);
    }
  }
}

/** A hard link of a layer to a file of a lower layer, both resolved inside the root without following symlinks. */
async function linkToLowerLayer(root: string, hardLink: { path: string; target: string }): Promise<void> {
  const target = await insideRoot(root, hardLink.target);
  const targetStat = target && (await lstat(target).catch(() => undefined));
  if (!target || !targetStat || targetStat.isDirectory()) {
    throw new RootfsError(`the hard link ${hardLink.path} points to ${hardLink.target}, which no layer has`);
  }
  const at = await insideRoot(root, hardLink.path);
  if (!at) throw new RootfsError(`the hard link ${hardLink.path} is not inside the image`);
  await rm(at, { recursive: true, force: true });
  await linkOrCopy(target, at, targetStat.isSymbolicLink());
}

/** `root/relative` when every directory on the way is a real directory (no symlink, no `..`). */
async function insideRoot(root: string, relative: string): Promise<string | undefined> {
  const parts = relative.split('/').filter((p) => p && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return undefined;
  let at = root;
  for (const part of parts.slice(0, -1)) {
    at = path.join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    if (!stat?.isDirectory()) return undefined;
  }
  return path.join(at, parts[parts.length - 1]);
}
