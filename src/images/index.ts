// OCI images (spec 2.8 `container` services, `image` of `steps` services): pulled from registries over the
// distribution API v2 into a content-addressed store shared by all workspaces. docs/images.md is for operators.
import { chmod, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ServerConfig } from '../core/config.ts';
import { ImageStore } from './store.ts';
import type { TransferBounds } from './transfer-bounds.ts';

export { collectImages, type CollectOptions, type CollectResult } from './gc.ts';
export { ImageFailure, imageProblem, type ImageFailureReason, type RegistryAnswer } from './failures.ts';
export type { ImageConfig } from './manifest.ts';
export { pullImage, resolveImage, type PulledImage, type PullOptions, type ResolveOptions } from './pull.ts';
export { pullTimingsText, type LayerTiming, type PullTimings } from './pull-timings.ts';
export { formatImageReference, isRegistryHost, normalizeRegistryHost, parseImageReference, type ImageReference } from './reference.ts';
export type { RegistryCredentials } from './registry-auth.ts';
export type { FetchedManifest } from './registry-client.ts';
export { ImageStore, type ImageRecord, type ImageStoreOptions } from './store.ts';
export { DEFAULT_PULL_TIMEOUT_SECONDS, DEFAULT_STALL_SECONDS, STALL_BYTES, type TransferBounds } from './transfer-bounds.ts';

/**
 * The installation's image store: `<data dir>/images`, with the configured size limit, insecure registries and
 * bounds on the registries' transfers. Pods run as the workspace's UID with group 0 and must pass through the data
 * directory to an image's rootfs: as root, the data directory is made enterable (not listable) by group and others,
 * as for volumes (src/runtime/local/volumes.ts). `now` is the server's clock: garbage collection's grace period
 * counts on it.
 */
export async function openImageStore(
  config: Pick<ServerConfig, 'dataDir' | 'imagesMaxBytes' | 'insecureRegistries' | 'registryStallSeconds' | 'registryPullTimeoutSeconds'>,
  now?: () => Date,
): Promise<ImageStore> {
  await mkdir(config.dataDir, { recursive: true });
  if (process.getuid?.() === 0) {
    const mode = (await stat(config.dataDir)).mode & 0o7777;
    if ((mode & 0o011) !== 0o011) await chmod(config.dataDir, mode | 0o011);
  }
  const transferBounds: TransferBounds = { stallMs: config.registryStallSeconds * 1000, pullTimeoutMs: config.registryPullTimeoutSeconds * 1000 };
  return ImageStore.open({ root: path.join(config.dataDir, 'images'), maxBytes: config.imagesMaxBytes, insecureRegistries: config.insecureRegistries, transferBounds, now });
}
export { RegistryImageSource, RESOLVE_CACHE_MS, RESOLVE_TIMEOUT_MS, type RegistryImageSourceOptions } from './image-source.ts';
export { teamCredentialsForImage } from './team-credentials.ts';
