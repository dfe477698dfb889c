// Pulling an image into the store: the reference resolved to a digest, the linux/amd64 manifest picked from an
// index, the config and every layer verified, layers unpacked once and shared, the root filesystem assembled.
import { chmod, mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ImageFailure } from './failures.ts';
import { PhaseTimeline } from '../core/phases.ts';
import { LayerError, unpackLayer } from './layer-unpack.ts';
import { DocumentError, parseImageConfig, parseManifestDocument, pickPlatform, type ImageConfig, type ImageManifest, type LayerDescriptor } from './manifest.ts';
import { formatImageReference, parseImageReference, type ImageReference } from './reference.ts';
import type { RegistryCredentials } from './registry-auth.ts';
import { RegistryClient, type FetchedManifest } from './registry-client.ts';
import type { LayerTiming, PullTimings } from './pull-timings.ts';
import { assembleRootfs, RootfsError } from './rootfs.ts';
import { timedOutDetail } from './transfer-bounds.ts';
import type { ImageRecord, ImageStore, LayerRecord } from './store.ts';

export interface PullOptions {
  /** Credentials for the image's registry (the team's, chosen by registry host). */
  credentials?: RegistryCredentials;
  /**
   * The manifest (or index) the reference's digest names, as a resolution fetched it (its bytes hashed to that
   * digest): used instead of asking the registry again. Ignored unless its digest is the reference's.
   */
  manifest?: FetchedManifest;
}

export interface PulledImage {
  /** What the reference resolved to: the digest to pin (an index's digest when the tag named an index). */
  digest: string;
  /** The image's root filesystem: a directory to mount read-only; it has `dev`, `proc`, `sys` and `tmp`. */
  rootfs: string;
  config: ImageConfig;
  /** The full reference with the digest: `docker.io/library/busybox:1@sha256:…`. */
  reference: string;
  manifestDigest: string;
  /** True when the image was in the store already (nothing was fetched but, for a tag, its manifest). */
  cached: boolean;
  /** Where the time went, when this pull built the image (not when it found it or waited for another pull). */
  timings?: PullTimings;
}

export interface ResolveOptions extends PullOptions {
  insecureRegistries?: readonly string[];
  /** Milliseconds each request to the registry may take (default 60 s). */
  timeoutMs?: number;
  /** Milliseconds a request may go without progress (default 60 s). */
  stallMs?: number;
}

const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

/** The digest a reference names now (a tag's current manifest, kept for the pull), without pulling layers. */
export async function resolveImage(image: string, options: ResolveOptions = {}): Promise<{ digest: string; manifest: FetchedManifest }> {
  const reference = parseImageReference(image);
  const client = new RegistryClient(reference, image, { insecureRegistries: options.insecureRegistries, credentials: options.credentials, timeoutMs: options.timeoutMs, stallMs: options.stallMs });
  const manifest = await client.fetchManifest(reference.digest ?? reference.tag!);
  return { digest: manifest.digest, manifest };
}

/** Makes the image's root filesystem available in the store; an `ImageFailure` says why it cannot. */
export async function pullImage(store: ImageStore, image: string, options: PullOptions = {}): Promise<PulledImage> {
  const reference = parseImageReference(image);
  return store.whilePulling(async () => {
    if (reference.digest) {
      const stored = await store.readImage(reference.digest);
      if (stored) return storedImage(store, stored, reference, true);
    }
    // Every request of this pull ends when the pull's time is up (a flight others joined ends for them too).
    const { stallMs, pullTimeoutMs } = store.transferBounds;
    const deadline = new AbortController();
    const client = new RegistryClient(reference, image, { insecureRegistries: store.insecureRegistries, credentials: options.credentials, stallMs, signal: deadline.signal });
    const timer = setTimeout(() => deadline.abort(client.failure('timed-out', timedOutDetail(pullTimeoutMs))), pullTimeoutMs);
    try {
      const began = performance.now();
      const known = reference.digest && options.manifest?.digest === reference.digest ? options.manifest : undefined;
      const top = known ?? (await client.fetchManifest(reference.digest ?? reference.tag!));
      const stored = await store.readImage(top.digest);
      if (stored) return storedImage(store, stored, reference, true);
      let timings: PullTimings | undefined;
      const record = await store.once(`image:${top.digest}`, () => buildImage(store, client, reference, top, began, (t) => (timings = t)));
      return { ...(await storedImage(store, record, reference, false)), ...(timings && { timings }) };
    } finally {
      clearTimeout(timer);
    }
  });
}

async function storedImage(store: ImageStore, record: ImageRecord, reference: ImageReference, cached: boolean): Promise<PulledImage> {
  const now = store.now();
  await utimes(path.join(store.imageDir(record.digest), 'image.json'), now, now).catch(() => undefined); // last use, for the GC's grace
  return {
    digest: record.digest,
    rootfs: store.rootfsOf(record.digest),
    config: record.config,
    reference: formatImageReference({ ...reference, digest: record.digest }),
    manifestDigest: record.manifestDigest,
    cached,
  };
}

async function buildImage(store: ImageStore, client: RegistryClient, reference: ImageReference, top: FetchedManifest, began: number, timed: (timings: PullTimings) => void): Promise<ImageRecord> {
  const existing = await store.readImage(top.digest); // another flight may have finished meanwhile
  if (existing) return existing;
  const timeline = new PhaseTimeline(began);
  const layerTimings: LayerTiming[] = [];
  const manifestDoc = await readDocument(client, top);
  let manifest: FetchedManifest = top;
  let doc = manifestDoc;
  if (doc.kind === 'index') {
    const entry = pickPlatform(doc);
    if (!entry) {
      const offered = doc.manifests.map((m) => `${m.os ?? '?'}/${m.architecture ?? '?'}`).join(', ') || 'none';
      throw client.failure('unsupported', `the image has no linux/amd64 variant (it has ${offered})`);
    }
    manifest = await client.fetchManifest(entry.digest);
    doc = await readDocument(client, manifest);
    if (doc.kind === 'index') throw client.failure('invalid', 'the image index points to another index, not to an image');
  }
  timeline.mark('manifest', performance.now());
  const configBytes = await client.fetchBlob(doc.config, MAX_CONFIG_BYTES);
  let config: ReturnType<typeof parseImageConfig>;
  try {
    config = parseImageConfig(configBytes);
  } catch (error) {
    throw client.failure('invalid', (error as Error).message);
  }
  if ((config.os && config.os !== 'linux') || (config.architecture && config.architecture !== 'amd64')) {
    throw client.failure('unsupported', `the image is for ${config.os}/${config.architecture}; svc runs linux/amd64 images`);
  }
  if (config.diffIds.length > 0 && config.diffIds.length !== doc.layers.length) {
    throw client.failure('invalid', `the config lists ${config.diffIds.length} layers, the manifest ${doc.layers.length}`);
  }
  timeline.mark('config', performance.now());
  await checkRoom(store, client, doc);
  timeline.mark('room check', performance.now());
  const layers = await Promise.all(doc.layers.map((layer, i) => ensureLayer(store, client, layer, config.diffIds[i], layerTimings)));
  timeline.mark('layers', performance.now());

  const work = await store.workDir();
  try {
    await mkdir(path.join(work, 'rootfs'));
    await chmod(path.join(work, 'rootfs'), 0o755);
    try {
      await assembleRootfs(layers.map((l) => ({ dir: path.join(store.layerDir(l.digest), 'root'), deferredLinks: l.deferredLinks })), path.join(work, 'rootfs'));
    } catch (error) {
      if (error instanceof RootfsError) throw client.failure('invalid', error.message);
      throw error;
    }
    timeline.mark('rootfs', performance.now());
    const record: ImageRecord = {
      digest: top.digest,
      manifestDigest: manifest.digest,
      configDigest: doc.config.digest,
      layers: layers.map((l) => l.digest),
      reference: formatImageReference({ ...reference, digest: top.digest }),
      config: config.config,
      pulledAt: store.now().toISOString(),
    };
    await writeFile(path.join(work, 'image.json'), JSON.stringify(record, null, 2), { mode: 0o600 });
    await store.writeBlob(top.digest, top.bytes);
    await store.writeBlob(manifest.digest, manifest.bytes);
    await store.writeBlob(doc.config.digest, configBytes);
    await chmod(work, 0o711); // pods (the workspace's UID) pass through to rootfs/
    await store.publish(work, store.imageDir(top.digest));
    const published = (await store.readImage(top.digest))!;
    timeline.mark('record', performance.now());
    timed({ phases: timeline.phases, layers: layerTimings });
    return published;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function readDocument(client: RegistryClient, fetched: FetchedManifest) {
  try {
    return parseManifestDocument(fetched.bytes, fetched.contentType);
  } catch (error) {
    if (error instanceof DocumentError) throw client.failure(error.reason, error.message);
    throw error;
  }
}

/** Refuses an image whose missing layers would not fit (their compressed sizes: the least they will take). */
async function checkRoom(store: ImageStore, client: RegistryClient, manifest: ImageManifest): Promise<void> {
  let needed = 0;
  for (const layer of manifest.layers) if (!(await store.readLayer(layer.digest))) needed += layer.size;
  const used = await store.usage();
  if (used + needed > store.maxBytes) throw storeFull(store, client, used);
}

function storeFull(store: ImageStore, client: RegistryClient, used: number): ImageFailure {
  const mib = (bytes: number) => `${Math.ceil(bytes / 1048576)} MiB`;
  return client.failure('store-full', `the image store would grow past its limit of ${mib(store.maxBytes)} (${mib(used)} used); remove unused images or raise --images-max-size (docs/images.md)`);
}

/** The layer unpacked in the store: fetched and unpacked by the first pull that needs it, waited for by the others. */
async function ensureLayer(store: ImageStore, client: RegistryClient, layer: LayerDescriptor, diffId: string | undefined, timings: LayerTiming[]): Promise<LayerRecord> {
  const stored = await store.readLayer(layer.digest);
  if (stored) return stored;
  return store.once(`layer:${layer.digest}`, async () => {
    const again = await store.readLayer(layer.digest);
    if (again) return again;
    const used = await store.usage();
    const work = await store.workDir();
    try {
      await mkdir(path.join(work, 'root'), { mode: 0o755 });
      const requested = performance.now();
      const source = await client.openBlob(layer);
      const answered = performance.now();
      let unpacked;
      try {
        unpacked = await unpackLayer(source, layer.compression, path.join(work, 'root'), Math.max(0, store.maxBytes - used));
      } catch (error) {
        source.destroy();
        if (error instanceof LayerError) throw error.reason === 'too-large' ? storeFull(store, client, used) : client.failure('invalid', `layer ${layer.digest}: ${error.message}`);
        throw error;
      }
      if (diffId && unpacked.diffId !== diffId) {
        throw client.failure('digest-mismatch', `layer ${layer.digest} unpacks to ${unpacked.diffId}, the config says ${diffId}`);
      }
      const record: LayerRecord = { digest: layer.digest, diffId: unpacked.diffId, size: unpacked.size, deferredLinks: unpacked.deferredLinks };
      await writeFile(path.join(work, 'meta.json'), JSON.stringify(record), { mode: 0o600 });
      const unpackedAt = performance.now();
      await store.publish(work, store.layerDir(layer.digest));
      timings.push({
        digest: layer.digest, blobBytes: layer.size, tarBytes: unpacked.size, entries: unpacked.entries, requestMs: answered - requested,
        streamMs: unpackedAt - answered, blobHashMs: source.hashMs, tarHashMs: unpacked.tarHashMs, publishMs: performance.now() - unpackedAt,
      });
      return (await store.readLayer(layer.digest))!;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
}
