// Garbage collection of the image store: images that no landscape uses go, then the layers and blobs no remaining
// image needs. Something pulled or used within the grace period stays even when unused (a Sync pins a digest just
// after pulling it; another svc process may be between its pull and its pin).
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ImageStore } from './store.ts';

export interface CollectOptions {
  /** Milliseconds after its last pull or use during which an unused image, layer or blob is kept (default 1 hour). */
  graceMs?: number;
}

export interface CollectResult {
  removedImages: string[];
  removedLayers: string[];
  /** Bytes of layers and blobs removed (root filesystems are hard links and free no more). */
  freedBytes: number;
}

/** Removes what `inUse` (digests that landscapes pin: what `pullImage` returned as `digest`) does not keep. */
export async function collectImages(store: ImageStore, inUse: Iterable<string>, options: CollectOptions = {}): Promise<CollectResult> {
  const keep = new Set(inUse);
  const graceMs = options.graceMs ?? 3_600_000;
  return store.alone(async () => {
    const cutoff = store.now().getTime() - graceMs;
    const recent = async (file: string) => ((await stat(file).catch(() => undefined))?.mtimeMs ?? 0) > cutoff;
    const result: CollectResult = { removedImages: [], removedLayers: [], freedBytes: 0 };
    const neededLayers = new Set<string>();
    const neededBlobs = new Set<string>();

    for (const digest of await digestsIn(store, 'images')) {
      const record = await store.readImage(digest).catch(() => undefined);
      const imageFile = path.join(store.imageDir(digest), 'image.json');
      if (record && (keep.has(digest) || (await recent(imageFile)))) {
        record.layers.forEach((l) => neededLayers.add(l));
        [record.digest, record.manifestDigest, record.configDigest].forEach((b) => neededBlobs.add(b));
        continue;
      }
      await rm(store.imageDir(digest), { recursive: true, force: true });
      result.removedImages.push(digest);
    }
    for (const digest of await digestsIn(store, 'layers')) {
      const dir = store.layerDir(digest);
      if (neededLayers.has(digest) || (await recent(dir))) continue;
      const size = (await store.readLayer(digest).catch(() => undefined))?.size ?? 0;
      await rm(dir, { recursive: true, force: true });
      result.removedLayers.push(digest);
      result.freedBytes += size;
    }
    for (const digest of await digestsIn(store, 'blobs')) {
      const file = store.blobPath(digest);
      if (neededBlobs.has(digest) || (await recent(file))) continue;
      result.freedBytes += (await stat(file).catch(() => undefined))?.size ?? 0;
      await rm(file, { force: true });
    }
    await store.removeAbandonedWork();
    return result;
  });
}

async function digestsIn(store: ImageStore, kind: 'images' | 'layers' | 'blobs'): Promise<string[]> {
  const names = await readdir(path.join(store.root, kind, 'sha256'));
  return names.filter((n) => /^[a-f0-9]{64}$/.test(n)).map((n) => `sha256:${n}`);
}
