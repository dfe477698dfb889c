// Images of services at Plan and Sync (spec 2.8): `runAsUser` only for teams a cluster administrator allowed, and
// the image of each container service and of each steps service with an `image` resolved to a digest at Plan and made
// ready at exactly that digest by the installation's ImageSource and pinned at Sync (the digest, root filesystem and config its replicas run until the next Sync).
// Without an image source nothing can run them, so such a Sync is refused rather than deployed with services that
// silently never start (or, for steps, silently run on another system than the one asked for).
import { Problem, problem } from '../core/problems.ts';
import { placeProblem, type ImageResolution, type NormalContainerService, type NormalLandscape } from '../landscape/index.ts';
import { imageOf } from './deployment.ts';
import type { ImageSource } from '../runtime/image.ts';
import type { Queryable } from '../store/database.ts';
import type { PinnedImage } from '../store/landscapes.ts';
import { teamRunAsUserAllowed } from '../store/teams.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';

export function containerServices(normal: NormalLandscape): Array<[string, NormalContainerService]> {
  return Object.entries(normal.services).filter((entry): entry is [string, NormalContainerService] => entry[1].type === 'container');
}

/** Every service that runs from an image, with its image: container services and steps services with an `image`. */
export function imageServices(normal: NormalLandscape): Array<[string, string]> {
  return Object.entries(normal.services).flatMap(([name, service]) => {
    const image = imageOf(service);
    return image === undefined ? [] : [[name, image] as [string, string]];
  });
}

/** 403 run-as-user-not-allowed, each `runAsUser` placed in the file, unless the team was allowed. */
export async function refuseRunAsUser(db: Queryable, teamId: number, normal: NormalLandscape, text: string): Promise<void> {
  const names = containerServices(normal).filter(([, service]) => service.runAsUser !== undefined).map(([name]) => name);
  if (names.length === 0 || (await teamRunAsUserAllowed(db, teamId))) return;
  const errors = names.map((name) => ({ pointer: `/services/${name}/runAsUser`, message: 'is not allowed for this team; a cluster administrator can allow it' }));
  const detail = `runAsUser runs a container as root or a fixed user, which a cluster administrator has not allowed for this team: ${names.join(', ')}. ` +
    'Remove it to run as the workspace user.';
  throw placeProblem(problem('run-as-user-not-allowed', 403, detail, { errors, extra: { services: names } }), text);
}

/**
 * 501 not-available naming the services that run from an image (container services, steps services with an
 * `image`), when this installation has no image source.
 */
export function refuseContainersWithoutImages(normal: NormalLandscape, images: ImageSource | undefined): void {
  const services = imageServices(normal);
  if (services.length === 0 || images) return;
  const list = services.map(([name, image]) => `${name} (${image})`).join(', ');
  const containers = containerServices(normal).map(([name]) => name);
  const steps = services.map(([name]) => name).filter((name) => !containers.includes(name));
  const instead = steps.length > 0 ? 'Use steps services without an image instead.' : 'Use steps services instead.';
  throw problem('not-available', 501, `This installation cannot fetch container images yet, so the landscape cannot be synced: ${list}. ${instead}`, {
    extra: { container_services: containers, ...(steps.length > 0 ? { image_services: steps } : {}) },
  });
}

/** What each image reference of the container services names now, by reference; a Problem for those that cannot be resolved. */
export interface ImageResolutions {
  resolved: Map<string, ImageResolution>;
  problems: Map<string, Problem>;
}

/**
 * Resolves each image reference of the container services once, in parallel (Plan; the source bounds the time and
 * caches answers briefly). Without an image source every reference is unresolved with the 501 a Sync answers.
 */
export async function resolveImages(images: Pick<ImageSource, 'resolve'> | undefined, teamId: number, normal: NormalLandscape): Promise<ImageResolutions> {
  const references = [...new Set(imageServices(normal).map(([, image]) => image))];
  const result: ImageResolutions = { resolved: new Map(), problems: new Map() };
  await Promise.all(
    references.map(async (image) => {
      try {
        if (!images) throw problem('not-available', 501, `This installation cannot fetch container images, so ${image} cannot be resolved.`, { extra: { image } });
        result.resolved.set(image, { digest: (await images.resolve({ image, teamId })).digest });
      } catch (error) {
        const failure = error instanceof Problem ? error : problem('unavailable', 503, `The image ${image} could not be resolved: ${(error as Error).message}`, { extra: { image } });
        result.problems.set(image, failure);
        result.resolved.set(image, { problem: failure.toBody() });
      }
    }),
  );
  return result;
}

/** The first image that could not be resolved, as the problem a Sync fails with. */
export function refuseUnresolvedImages(normal: NormalLandscape, resolutions: ImageResolutions): void {
  for (const [, image] of imageServices(normal)) {
    const failure = resolutions.problems.get(image);
    if (failure) throw failure;
  }
}

/** Each service's image (container, or steps with an `image`) made ready at the digest the plan showed, and pinned; one request per reference, in parallel. */
export async function pinImages(images: ImageSource, row: WorkspaceRow, normal: NormalLandscape, resolutions: ImageResolutions, fetched?: (bytes: number, layers: number) => void): Promise<Record<string, PinnedImage>> {
  const prepared = new Map<string, Promise<PinnedImage>>();
  for (const [name, image] of imageServices(normal)) {
    const service = { image };
    if (prepared.has(service.image)) continue;
    const resolution = resolutions.resolved.get(service.image);
    const digest = resolution && 'digest' in resolution ? resolution.digest : undefined;
    const pin = images.prepare({ image: service.image, digest, teamId: row.team_id, workspaceId: row.id, service: name }).then(
      (image) => {
        if (image.fetched) fetched?.(image.fetched.bytes, image.fetched.layers);
        return { image: service.image, digest: image.digest, rootfs: image.rootfs, config: image.config };
      },
      (error: unknown) => {
        if (error instanceof Problem) throw error;
        throw problem('unavailable', 503, `The image ${service.image} of ${name} could not be made ready: ${(error as Error).message}`, { extra: { image: service.image } });
      },
    );
    pin.catch(() => undefined); // awaited below; another may fail first
    prepared.set(service.image, pin);
  }
  const pins: Record<string, PinnedImage> = {};
  for (const [name, image] of imageServices(normal)) pins[name] = await prepared.get(image)!;
  return pins;
}

/**
 * A Plan's images made ready in the background for a caller who may Sync (the image source's `prefetch`): what a
 * Sync would pull next starts now, while the plan is read and the Sync is asked for. Nothing runs or is pinned.
 */
export function prefetchImages(images: ImageSource | undefined, row: WorkspaceRow, normal: NormalLandscape, resolutions: ImageResolutions): void {
  if (!images?.prefetch) return;
  const seen = new Set<string>();
  for (const [name, image] of imageServices(normal)) {
    const resolution = resolutions.resolved.get(image);
    if (seen.has(image) || !resolution || !('digest' in resolution)) continue;
    seen.add(image);
    images.prefetch({ image, digest: resolution.digest, teamId: row.team_id, workspaceId: row.id, service: name });
  }
}

/** Container services whose pinned digest moved since the last Sync (the tag points elsewhere now): they restart. */
export function servicesWithNewImages(before: Record<string, PinnedImage>, after: Record<string, PinnedImage>): string[] {
  return Object.keys(after).filter((name) => before[name] !== undefined && before[name].digest !== after[name].digest);
}
