// The installation's ImageSource (src/runtime/image.ts) on the image store: Plan resolves a service's reference to
// a digest (bounded in time, answers cached briefly per team and reference), Sync pulls exactly the digest the plan
// showed with the team's credentials for the image's registry, and garbage collection keeps what deployed
// landscapes pin. A store that is full is collected once before a pull is refused as store-full.
import { createHash } from 'node:crypto';
import { Problem, problem } from '../core/problems.ts';
import type { ImageLookup, ImageRequest, ImageSource, PreparedImage } from '../runtime/image.ts';
import { ImageFailure, imageProblem } from './failures.ts';
import { collectImages, type CollectResult } from './gc.ts';
import { pullImage, resolveImage } from './pull.ts';
import { pullTimingsText } from './pull-timings.ts';
import { parseImageReference } from './reference.ts';
import type { RegistryCredentials } from './registry-auth.ts';
import type { FetchedManifest } from './registry-client.ts';
import type { ImageStore } from './store.ts';

export interface RegistryImageSourceOptions {
  store: ImageStore;
  /** The team's credentials for the registry of `image` (src/images/team-credentials.ts), or undefined. */
  credentials: (teamId: number, image: string) => Promise<RegistryCredentials | undefined>;
  /** Digests that deployed landscapes pin: garbage collection keeps them. */
  pinned: () => Promise<Iterable<string>>;
  /** Milliseconds now, for the resolution cache (the server's clock). */
  nowMs: () => number;
  /** Longest a Plan waits for a registry to resolve one reference (default 10 s). */
  resolveTimeoutMs?: number;
  /** How long a resolution (a digest or a failure) is reused (default 30 s). */
  resolveCacheMs?: number;
  /** Milliseconds after its last pull or use that an unpinned image is kept (default 1 hour): a Sync between pull and pin. */
  graceMs?: number;
  /** Receives a line for each image pulled from its registry. */
  log?: (message: string) => void;
}

interface CachedResolution {
  until: number;
  answer: Promise<{ digest: string }>;
}

export const RESOLVE_TIMEOUT_MS = 10_000;
export const RESOLVE_CACHE_MS = 30_000;
export const IMAGE_GRACE_MS = 3_600_000;

/** Manifests kept from resolutions for the pulls that follow (a Plan's, then its Sync's): the newest few. */
const KEPT_MANIFESTS = 32;

export class RegistryImageSource implements ImageSource {
  private readonly resolutions = new Map<string, CachedResolution>();
  /** By digest: the bytes hash to it, so whoever asked, a pull of that digest may use them. */
  private readonly manifests = new Map<string, FetchedManifest>();

  constructor(private readonly options: RegistryImageSourceOptions) {}

  get store(): ImageStore {
    return this.options.store;
  }

  /**
   * The digest `image` names now; the same answer (or failure) for the same team, reference and credentials for a
   * short while (credentials added or changed since are a new question).
   */
  async resolve(lookup: ImageLookup): Promise<{ digest: string }> {
    const credentials = await this.credentialsFor(lookup.teamId, lookup.image);
    const who = credentials ? createHash('sha256').update(`${credentials.username}\0${credentials.password}`).digest('hex') : '-';
    const key = `${lookup.teamId} ${lookup.image} ${who}`;
    const now = this.options.nowMs();
    const cached = this.resolutions.get(key);
    if (cached && cached.until > now) return cached.answer;
    for (const [k, entry] of this.resolutions) if (entry.until <= now) this.resolutions.delete(k);
    const entry: CachedResolution = { until: Number.POSITIVE_INFINITY, answer: this.resolveNow(lookup, credentials) };
    const settled = () => (entry.until = this.options.nowMs() + (this.options.resolveCacheMs ?? RESOLVE_CACHE_MS));
    entry.answer.then(settled, settled);
    this.resolutions.set(key, entry);
    return entry.answer;
  }

  /** Pulls `image` at the digest the plan showed (or as the tag names it now), with the team's credentials. */
  async prepare(request: ImageRequest): Promise<PreparedImage> {
    try {
      let pulled;
      try {
        pulled = await this.pull(request, 'a Sync');
      } catch (error) {
        if (!(error instanceof ImageFailure) || error.reason !== 'store-full') throw error;
        await this.collect(); // what no landscape pins makes room, then the pull is tried once more
        pulled = await this.pull(request, 'a Sync');
      }
      const layers = pulled.timings?.layers ?? [];
      const fetched = layers.length > 0 ? { fetched: { bytes: layers.reduce((sum, layer) => sum + layer.blobBytes, 0), layers: layers.length } } : {};
      return { digest: pulled.digest, rootfs: pulled.rootfs, config: pulled.config, ...fetched };
    } catch (error) {
      throw asProblem(error, request.image);
    }
  }

  /**
   * The pull a Plan's digest will need, started now and not awaited: its Sync finds the image in the store or joins
   * this pull (one flight per image and layer). No collection for room (a Sync makes room if it must); a failure is
   * logged only, the Sync's own pull says why to its caller.
   */
  prefetch(request: ImageRequest): void {
    if (!request.digest) return;
    this.pull(request, 'a Plan').catch((error: unknown) => {
      this.options.log?.(`image store: the pull of ${request.image}@${request.digest} started by a Plan failed: ${(error as Error).message}`);
    });
  }

  private async pull(request: ImageRequest, by: string) {
    const reference = request.digest && !request.image.includes('@') ? `${request.image}@${request.digest}` : request.image;
    const credentials = await this.credentialsFor(request.teamId, request.image);
    const started = performance.now();
    const manifest = request.digest ? this.manifests.get(request.digest) : undefined;
    const pulled = await pullImage(this.store, reference, { credentials, manifest });
    if (!pulled.cached) {
      const where = pulled.timings ? `: ${pullTimingsText(pulled.timings)}` : ' (waited for a pull of it under way)';
      this.options.log?.(`image store: pulled ${pulled.reference} in ${Math.round(performance.now() - started)} ms for ${by}${where}`);
    }
    return pulled;
  }

  /**
   * Removes images no deployed landscape pins, unless pulled or used within the grace (a Sync between its pull and
   * its pin), then the layers and blobs only they used. Pulls of this process wait while it runs.
   */
  async collect(options: { graceMs?: number } = {}): Promise<CollectResult> {
    return collectImages(this.store, await this.options.pinned(), { graceMs: options.graceMs ?? this.options.graceMs ?? IMAGE_GRACE_MS });
  }

  private async resolveNow(lookup: ImageLookup, credentials: RegistryCredentials | undefined): Promise<{ digest: string }> {
    try {
      const reference = parseImageReference(lookup.image);
      if (reference.digest && (await this.store.readImage(reference.digest))) return { digest: reference.digest };
      const timeoutMs = this.options.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ImageFailure('unreachable', lookup.image, reference.registry, `the registry did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      });
      try {
        const { digest, manifest } = await Promise.race([resolveImage(lookup.image, { credentials, insecureRegistries: this.store.insecureRegistries, timeoutMs, stallMs: this.store.transferBounds.stallMs }), late]);
        this.keepManifest(manifest);
        return { digest };
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      throw asProblem(error, lookup.image);
    }
  }

  private keepManifest(manifest: FetchedManifest): void {
    this.manifests.delete(manifest.digest);
    this.manifests.set(manifest.digest, manifest);
    for (const oldest of this.manifests.keys()) {
      if (this.manifests.size <= KEPT_MANIFESTS) break;
      this.manifests.delete(oldest);
    }
  }

  private async credentialsFor(teamId: number, image: string): Promise<RegistryCredentials | undefined> {
    try {
      return await this.options.credentials(teamId, image);
    } catch (error) {
      if (error instanceof ImageFailure) return undefined; // an invalid reference: the pull says so
      throw error;
    }
  }
}

function asProblem(error: unknown, image: string): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof ImageFailure) return imageProblem(error);
  return problem('unavailable', 503, `The image ${image} could not be made ready: ${(error as Error).message}`, { extra: { image } });
}
