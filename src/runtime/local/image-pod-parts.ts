// What every pod whose root is an image shares, whatever runs in it (a steps replica, an editor pod, a stage step):
// the check that the pinned root is still on this machine, the host's resolv.conf, the top-level names it replaces,
// and what it sees at /nix (docs/runtime.md, "/nix").
import { readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { RuntimeFailure, type PinnedRoot, type WorkspaceRef } from '../driver.ts';
import type { ImageRoot } from './container-root.ts';
import { POD_NIX_DIR, type Bind } from './sandbox.ts';
import { ensureNixDir, type VolumeHost } from './volumes.ts';

/** Top-level names of an image that a pod with the volume replaces: /data holds the volume at /data/app. */
export const IMAGE_POD_OWN_TOP = ['data'];

/** Refuses an image whose root filesystem left the image store (garbage collection) since it was pinned. */
export async function checkRootfs(image: PinnedRoot, then: string, stage: 'agent' | 'ide' = 'agent'): Promise<void> {
  if (await stat(image.rootfs).then((info) => info.isDirectory(), () => false)) return;
  throw new RuntimeFailure(stage, `the root filesystem of image ${image.image} (${image.digest}) is not on this machine any more; ${then}`);
}

/** Where the driver writes the pods' resolv.conf (as root: pods in network namespaces of their own, egress.ts). */
export const podResolvConfFile = (dataDir: string) => path.join(dataDir, 'pods', 'resolv.conf');

/** The pods' resolv.conf when the driver wrote one, else the host's, when the host has one. */
export async function hostResolvConf(dataDir: string): Promise<string | undefined> {
  for (const file of [podResolvConfFile(dataDir), '/etc/resolv.conf']) {
    if (await stat(file).then((info) => info.isFile(), () => false)) return file;
  }
  return undefined;
}

/**
 * What a pod on the host's system binds over the host's /etc/resolv.conf: the pods' own, when the driver wrote one.
 * Where /etc/resolv.conf is a symbolic link (systemd-resolved: to /run/systemd/resolve/stub-resolv.conf, which a
 * pod does not have), at the link's destination: bubblewrap cannot bind over a link that leads nowhere.
 */
export async function resolvConfBinds(dataDir: string): Promise<Bind[]> {
  const file = podResolvConfFile(dataDir);
  if (!(await stat(file).then((info) => info.isFile(), () => false))) return [];
  return [{ source: file, target: await linkDestination('/etc/resolv.conf') }];
}

/** Where a chain of symbolic links from `file` ends (lexically; at most 8 links). */
export async function linkDestination(file: string, read: (file: string) => Promise<string | undefined> = (f) => readlink(f).catch(() => undefined)): Promise<string> {
  let current = file;
  for (let hop = 0; hop < 8; hop++) {
    const next = await read(current);
    if (next === undefined) return current;
    current = path.resolve(path.dirname(current), next);
  }
  return current;
}

export type NixBind = Bind & { writable: boolean };

/**
 * What a pod sees at /nix: an image's own /nix when it has one (read-only: the image is shared, and bubblewrap 0.8
 * has no overlay to write over it, so asking for `writable` is refused then, unless `bestEffort`), else the
 * workspace's /nix directory (volumes.ts), read-write when `writable`. `own` is set when it is the workspace's.
 */
export async function nixOf(
  host: VolumeHost,
  workspace: WorkspaceRef,
  image: { root: ImageRoot; image: string } | undefined,
  writable: boolean,
  bestEffort = false,
): Promise<{ own?: { dir: string; writable: boolean }; binds: NixBind[] }> {
  if (image && image.root.top.some((entry) => entry.name === 'nix')) {
    if (writable && !bestEffort) {
      throw new RuntimeFailure('agent', `the image ${image.image} has its own /nix, which the local runtime mounts read-only: nixWritable cannot be honoured`);
    }
    return { binds: [] };
  }
  const own = { dir: await ensureNixDir(host, workspace.id, workspace.uid), writable };
  return { own, binds: [{ source: own.dir, target: POD_NIX_DIR, writable }] };
}

/** The read-only and the writable ones of `binds`, as plain binds. */
export function splitBinds(binds: NixBind[]): { readOnly: Bind[]; writable: Bind[] } {
  const plain = (bind: NixBind) => ({ source: bind.source, target: bind.target });
  return { readOnly: binds.filter((bind) => !bind.writable).map(plain), writable: binds.filter((bind) => bind.writable).map(plain) };
}
