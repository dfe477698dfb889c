// The content-addressed image store under the data directory, shared by all workspaces (docs/images.md):
//
//   <data dir>/images/blobs/sha256/<hex>            manifests, indexes and configs, as the registry sent them
//   <data dir>/images/layers/sha256/<hex>/root/     a layer unpacked once, by the digest of its blob
//   <data dir>/images/layers/sha256/<hex>/meta.json its diff id, unpacked size, hard links to lower layers
//   <data dir>/images/images/sha256/<hex>/rootfs/   an image's root filesystem, hard links into its layers
//   <data dir>/images/images/sha256/<hex>/image.json what was pulled: reference, layers, config
//   <data dir>/images/tmp/<pid>-<random>/           work in progress, renamed into place when complete
//
// Everything appears by one rename of a complete directory, so two svc processes sharing the directory agree: the
// second rename fails and its copy is dropped. Within a process, one flight per layer and per image: concurrent
// pulls of the same layer wait for the one download. Garbage collection runs alone (no pull meanwhile).
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ImageConfig } from './manifest.ts';
import { defaultTransferBounds, type TransferBounds } from './transfer-bounds.ts';

export interface ImageStoreOptions {
  /** `<data dir>/images`. */
  root: string;
  /** Bytes the store may hold (layers unpacked, plus manifests and configs). */
  maxBytes: number;
  /** Registries reached over plain HTTP (`host:port`). */
  insecureRegistries?: readonly string[];
  /** How long a registry's request may stall and a pull may take (default 60 s and 30 min). */
  transferBounds?: TransferBounds;
  now?: () => Date;
}

export interface LayerRecord {
  digest: string;
  diffId: string;
  size: number;
  deferredLinks: { path: string; target: string }[];
}

export interface ImageRecord {
  /** What the reference resolved to (an index's digest when the tag named an index). */
  digest: string;
  /** The linux/amd64 image manifest's digest (the same as `digest` without an index). */
  manifestDigest: string;
  configDigest: string;
  /** Layer blob digests, lowest first. */
  layers: string[];
  /** The reference it was first pulled as. */
  reference: string;
  config: ImageConfig;
  pulledAt: string;
}

const hexOf = (digest: string) => {
  const match = /^sha256:([a-f0-9]{64})$/.exec(digest);
  if (!match) throw new Error(`not a sha256 digest: ${digest}`);
  return match[1];
};

export class ImageStore {
  readonly root: string;
  readonly maxBytes: number;
  readonly insecureRegistries: readonly string[];
  readonly transferBounds: TransferBounds;
  readonly now: () => Date;
  private readonly flights = new Map<string, Promise<unknown>>();
  private pulls = 0;
  private collecting?: Promise<unknown>;
  private drained?: () => void;

  private constructor(options: ImageStoreOptions) {
    this.root = options.root;
    this.maxBytes = options.maxBytes;
    this.insecureRegistries = options.insecureRegistries ?? [];
    this.transferBounds = options.transferBounds ?? defaultTransferBounds;
    this.now = options.now ?? (() => new Date());
  }

  /** Makes the directories and removes work left by processes that are gone. */
  static async open(options: ImageStoreOptions): Promise<ImageStore> {
    const store = new ImageStore(options);
    for (const dir of ['blobs/sha256', 'layers/sha256', 'images/sha256', 'tmp']) await mkdir(path.join(store.root, dir), { recursive: true, mode: 0o700 });
    // Pods run as the workspace's UID and must reach an image's rootfs: the way there may be entered, not listed.
    for (const dir of ['.', 'images', 'images/sha256']) await chmod(path.join(store.root, dir), 0o711);
    await store.removeAbandonedWork();
    return store;
  }

  blobPath = (digest: string) => path.join(this.root, 'blobs', 'sha256', hexOf(digest));
  layerDir = (digest: string) => path.join(this.root, 'layers', 'sha256', hexOf(digest));
  imageDir = (digest: string) => path.join(this.root, 'images', 'sha256', hexOf(digest));
  rootfsOf = (digest: string) => path.join(this.imageDir(digest), 'rootfs');

  /** One run of `work` per key at a time in this process; callers with the same key share its result. */
  once<T>(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.flights.get(key) as Promise<T> | undefined;
    if (running) return running;
    const flight = work().finally(() => this.flights.delete(key));
    this.flights.set(key, flight);
    return flight;
  }

  /** Runs a pull; waits while a garbage collection runs. */
  async whilePulling<T>(work: () => Promise<T>): Promise<T> {
    while (this.collecting) await this.collecting.catch(() => undefined);
    this.pulls++;
    try {
      return await work();
    } finally {
      if (--this.pulls === 0) this.drained?.();
    }
  }

  /** Runs `work` with no pull running in this process, and none starting until it ends. */
  async alone<T>(work: () => Promise<T>): Promise<T> {
    while (this.collecting) await this.collecting.catch(() => undefined);
    const run = (async () => {
      if (this.pulls > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      return work();
    })();
    this.collecting = run;
    try {
      return await run;
    } finally {
      this.collecting = undefined;
    }
  }

  /** A fresh directory for work in progress, on the store's filesystem (so renames and hard links work). */
  async workDir(): Promise<string> {
    const dir = path.join(this.root, 'tmp', `${process.pid}-${randomBytes(6).toString('hex')}`);
    await mkdir(dir, { mode: 0o700 });
    return dir;
  }

  /** Moves a complete directory into place; false (and the copy dropped) when another process was first. */
  async publish(work: string, final: string): Promise<boolean> {
    try {
      await rename(work, final);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await rm(work, { recursive: true, force: true });
      return false;
    }
  }

  async writeBlob(digest: string, bytes: Buffer): Promise<void> {
    const file = this.blobPath(digest);
    if (await exists(file)) return;
    const partial = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
    await writeFile(partial, bytes, { mode: 0o600 });
    await rename(partial, file);
  }

  async readLayer(digest: string): Promise<LayerRecord | undefined> {
    return readJson<LayerRecord>(path.join(this.layerDir(digest), 'meta.json'));
  }

  async readImage(digest: string): Promise<ImageRecord | undefined> {
    return readJson<ImageRecord>(path.join(this.imageDir(digest), 'image.json'));
  }

  /** Bytes held: unpacked layers (their tar size) and blobs. Root filesystems are hard links and add none. */
  async usage(): Promise<number> {
    let total = 0;
    for (const hex of await readdir(path.join(this.root, 'layers', 'sha256'))) {
      total += (await this.readLayer(`sha256:${hex}`).catch(() => undefined))?.size ?? 0;
    }
    for (const name of await readdir(path.join(this.root, 'blobs', 'sha256'))) {
      total += (await stat(path.join(this.root, 'blobs', 'sha256', name)).catch(() => undefined))?.size ?? 0;
    }
    return total;
  }

  /** Removes `tmp/<pid>-…` entries whose process is gone (a crash mid-pull). */
  async removeAbandonedWork(): Promise<void> {
    const tmp = path.join(this.root, 'tmp');
    for (const name of await readdir(tmp)) {
      const pid = Number(name.split('-')[0]);
      if (pid === process.pid || (Number.isInteger(pid) && processAlive(pid))) continue;
      await rm(path.join(tmp, name), { recursive: true, force: true });
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
