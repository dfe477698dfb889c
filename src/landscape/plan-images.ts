// The images of a plan (spec 2.8: Sync pins the digest): each container service's reference with the digest it
// names now, beside the digest the deployed landscape runs. A service whose reference is unchanged but now names
// another digest (the tag moved) restarts at Sync, so the plan says so. The digests join the plan's hash: a tag
// that moves between Plan and Sync makes Sync answer plan-changed instead of running something not reviewed.
import { canonicalJson, sha256 } from './normal-form.ts';
import type { LandscapePlan, ServiceChange } from './plan.ts';
import type { NormalLandscape } from './types.ts';

export interface PlanImage {
  service: string;
  /** The reference as the file writes it. */
  image: string;
  /** The digest the reference names now (what Sync will run); null when it could not be resolved. */
  digest: string | null;
  /** The digest the deployed landscape runs for the service, when it runs one. */
  deployed_digest?: string;
  /** Why `digest` is null: the problem a Sync would fail with (image-unavailable, naming the registry's answer). */
  problem?: Record<string, unknown>;
}

/** What a reference resolved to: a digest, or the problem that says why not. */
export type ImageResolution = { digest: string } | { problem: Record<string, unknown> };

/** The plan with `images`, services whose digest moved marked to restart, and a hash that covers the digests. */
export function withPlanImages(
  plan: LandscapePlan,
  next: NormalLandscape,
  deployed: Readonly<Record<string, { image: string; digest: string }>>,
  resolved: ReadonlyMap<string, ImageResolution>,
): LandscapePlan {
  const images: PlanImage[] = [];
  const services = plan.services.map((s) => ({ ...s }));
  let unchanged = plan.unchanged;
  for (const [service, spec] of Object.entries(next.services).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (spec.type !== 'container') continue;
    const resolution = resolved.get(spec.image);
    const pin = Object.hasOwn(deployed, service) ? deployed[service] : undefined;
    const entry: PlanImage = { service, image: spec.image, digest: resolution && 'digest' in resolution ? resolution.digest : null };
    if (pin) entry.deployed_digest = pin.digest;
    if (resolution && 'problem' in resolution) entry.problem = resolution.problem;
    images.push(entry);
    if (!pin || pin.image !== spec.image || entry.digest === null || entry.digest === pin.digest) continue;
    const reason = `the image ${spec.image} names ${shortDigest(entry.digest)} now; ${shortDigest(pin.digest)} runs`;
    const pointer = `/services/${service}/image`;
    const change = services.find((s) => s.name === service);
    if (change) {
      if (change.action !== 'change') continue; // created, replaced or removed: nothing more to say
      change.restarts = true;
      change.reason = change.reason ? `${change.reason}; ${reason}` : reason;
      if (!change.changes.includes(pointer)) change.changes = [...change.changes, pointer];
    } else {
      unchanged = unchanged.filter((name) => name !== service);
      const moved: ServiceChange = { name: service, action: 'change', type: 'container', changes: [pointer], environment: [], restarts: true, reason };
      services.push(moved);
    }
  }
  if (images.length === 0) return { ...plan, images };
  services.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const hash = sha256(canonicalJson({ plan: plan.hash, images: images.map((i) => [i.service, i.image, i.digest]) }));
  return { ...plan, services, unchanged, images, changed: plan.changed || services.length > 0, hash };
}

/** `sha256:` and the first 12 hex digits, as the console and CLI show a digest. */
export const shortDigest = (digest: string): string => digest.slice(0, 'sha256:'.length + 12);
