// Images of services at Plan and Sync (spec 2.8): `runAsUser` only for teams a cluster administrator allowed, and
// the image of each container service and of each steps service with an `image` made ready by the installation's
// ImageSource and pinned at Sync (the digest, root filesystem and config its replicas run until the next Sync).
// Without an image source nothing can run them, so such a Sync is refused rather than deployed with services that
// silently never start (or, for steps, silently run on another system than the one asked for).
import { Problem, problem } from '../core/problems.ts';
import { placeProblem, type NormalContainerService, type NormalLandscape } from '../landscape/index.ts';
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

/** Each image of a service (container, or steps with an `image`) made ready and pinned; one request per reference. */
export async function pinImages(images: ImageSource, row: WorkspaceRow, normal: NormalLandscape): Promise<Record<string, PinnedImage>> {
  const prepared = new Map<string, Promise<PinnedImage>>();
  const pins: Record<string, PinnedImage> = {};
  for (const [name, reference] of imageServices(normal)) {
    let pin = prepared.get(reference);
    if (!pin) {
      pin = images.prepare({ image: reference, teamId: row.team_id, workspaceId: row.id, service: name }).then(
        (image) => ({ image: reference, digest: image.digest, rootfs: image.rootfs, config: image.config }),
        (error: unknown) => {
          if (error instanceof Problem) throw error;
          throw problem('unavailable', 503, `The image ${reference} of ${name} could not be made ready: ${(error as Error).message}`, { extra: { image: reference } });
        },
      );
      prepared.set(reference, pin);
    }
    pins[name] = await pin;
  }
  return pins;
}

/** Services whose pinned digest moved since the last Sync (the tag points elsewhere now): they restart. */
export function servicesWithNewImages(before: Record<string, PinnedImage>, after: Record<string, PinnedImage>): string[] {
  return Object.keys(after).filter((name) => before[name] !== undefined && before[name].digest !== after[name].digest);
}
