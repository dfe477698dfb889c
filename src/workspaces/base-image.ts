// A workspace's `base_image` (spec 2.3): the root filesystem of its editor pod and stage steps. The installation's
// base image (its name is INSTALLATION_BASE_IMAGE, the API's default) is what the runtime driver runs without an image:
// the local driver's is the machine's own system. Any other reference is an OCI image, made ready by the
// installation's ImageSource and pinned at the workspace's first start (its creation): later starts and wakes run that
// digest, even when the tag moves; a root filesystem that left the image store is fetched again by its digest.
import { problem } from '../core/problems.ts';
import { RuntimeFailure } from '../runtime/driver.ts';
import type { ImageSource, PreparedImage } from '../runtime/image.ts';
import type { Queryable } from '../store/database.ts';
import { saveBaseImagePin, type WorkspaceRow } from '../store/workspaces.ts';
import { stat } from 'node:fs/promises';

/** The name of the installation's base image: `base_image`'s default, run without pulling anything. */
export const INSTALLATION_BASE_IMAGE = 'debian';

/** The service name an ImageSource hears for a workspace's base image (the editor pod is `ide`). */
export const BASE_IMAGE_SERVICE = 'ide';

export function usesInstallationBaseImage(baseImage: string): boolean {
  return baseImage === INSTALLATION_BASE_IMAGE;
}

/** 501 not-available for a base image of its own on an installation that cannot fetch images. */
export function refuseBaseImageWithoutImages(baseImage: string, images: ImageSource | undefined): void {
  if (usesInstallationBaseImage(baseImage) || images) return;
  throw problem('not-available', 501, `This installation cannot fetch container images yet, so base_image ${baseImage} cannot run. Leave base_image out to use the installation's (${INSTALLATION_BASE_IMAGE}).`, {
    errors: [{ pointer: '/base_image', message: 'cannot be fetched by this installation' }],
  });
}

/**
 * The row with its base image pinned and on this machine (unchanged for the installation's base image). Throws
 * RuntimeFailure('ide') when the image cannot be made ready: the editor pod has no root to start from.
 */
export async function pinBaseImage(deps: { pool: Queryable; images?: ImageSource }, row: WorkspaceRow, prepared?: (image: PreparedImage) => void): Promise<WorkspaceRow> {
  if (usesInstallationBaseImage(row.base_image)) return row;
  const pin = row.base_image_pin;
  if (pin && (await stat(pin.rootfs).then((info) => info.isDirectory(), () => false))) return row;
  if (!deps.images) throw new RuntimeFailure('ide', `this installation cannot fetch container images, so the base image ${row.base_image} cannot run`);
  // a pinned digest is fetched again as it was; without a pin the reference resolves now, once
  const reference = pin ? `${pin.image.split('@')[0]}@${pin.digest}` : row.base_image;
  const image = await deps.images.prepare({ image: reference, teamId: row.team_id, workspaceId: row.id, service: BASE_IMAGE_SERVICE }).catch((error: Error) => {
    throw new RuntimeFailure('ide', `the base image ${row.base_image} could not be made ready: ${error.message}`);
  });
  prepared?.(image);
  const saved = await saveBaseImagePin(deps.pool, row.id, { image: row.base_image, digest: image.digest, rootfs: image.rootfs, config: image.config });
  return saved ?? row;
}
