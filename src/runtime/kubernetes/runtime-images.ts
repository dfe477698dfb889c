// The Kubernetes driver's runtime images (base, agent, managed) and svc's own server image as scripts/test-cluster/images.sh builds them, and
// where `svc images build --push` puts them: the script's output read, the pushed references named, the registry
// credentials written as a containers-auth.json for skopeo (never in its argv). Pure; runtime-images-build.ts runs
// the script and skopeo.
import { parseImageReference } from '../../images/reference.ts';

export const runtimeImageNames = ['base', 'agent', 'managed', 'server'] as const;
export type RuntimeImageName = (typeof runtimeImageNames)[number];

export interface BuiltImage {
  name: RuntimeImageName;
  /** `svc.local/<name>:<key>`: the name of the oci-archive as `ctr images import` reads it. */
  reference: string;
  /** The cache key (the reference's tag): a changed input gives another key. */
  key: string;
  /** The oci-archive tar in the cache. */
  archive: string;
}

export interface BuiltImages {
  /** The OCI layout holding every image, tagged `<name>-<key>`. */
  layout: string;
  images: BuiltImage[];
}

const envNames: Record<RuntimeImageName, string> = { base: 'SVC_KUBE_BASE_IMAGE', agent: 'SVC_KUBE_AGENT_IMAGE', managed: 'SVC_KUBE_MANAGED_IMAGE', server: 'SVC_KUBE_SERVER_IMAGE' };
/**
 * What takes each image, as `svc images build --push` prints it (`<this>=<reference>`): the `svc server` flag for
 * the driver's images; `server-image` for svc's own, which no flag takes (the Deployment of deploy/kubernetes names it).
 */
export const runtimeImageFlags: Record<RuntimeImageName, string> = { base: '--kube-base-image', agent: '--kube-agent-image', managed: '--kube-managed-image', server: 'server-image' };

/** Reads the `NAME=value` lines the script prints last; an Error names what is missing. */
export function parseImagesScriptOutput(stdout: string): BuiltImages {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const match = /^(SVC_KUBE_[A-Z_]+)=(.+)$/.exec(line.trim());
    if (match) values.set(match[1], match[2]);
  }
  const layout = values.get('SVC_KUBE_IMAGES_LAYOUT');
  if (!layout) throw new Error('the images script printed no SVC_KUBE_IMAGES_LAYOUT line');
  const images: BuiltImage[] = [];
  for (const name of runtimeImageNames) {
    const reference = values.get(envNames[name]);
    if (!reference) continue;
    const archive = values.get(envNames[name].replace(/_IMAGE$/, '_ARCHIVE'));
    if (!archive) throw new Error(`the images script printed ${envNames[name]} but no archive for it`);
    const key = reference.slice(reference.lastIndexOf(':') + 1);
    images.push({ name, reference, key, archive });
  }
  if (images.length === 0) throw new Error('the images script printed no image');
  return { layout, images };
}

/** The tag of an image in the OCI layout. */
export const layoutTag = (image: BuiltImage): string => `${image.name}-${image.key}`;

/**
 * `REGISTRY/PREFIX` as given to `--push`: a registry host (a dot, a port or `localhost`) and at least one path
 * part; an Error says why not.
 */
export function parsePushDestination(text: string): { registry: string; prefix: string } {
  const trimmed = text.replace(/\/+$/, '');
  const slash = trimmed.indexOf('/');
  const why = (reason: string) => new Error(`--push ${JSON.stringify(text)}: ${reason} (e.g. registry.example.com/svc)`);
  if (slash === -1) throw why('give the registry and a repository prefix');
  let parsed;
  try {
    parsed = parseImageReference(`${trimmed}/agent:tag`);
  } catch (error) {
    throw why((error as Error).message);
  }
  if (parsed.registry !== trimmed.slice(0, slash)) throw why(`${trimmed.slice(0, slash)} is not a registry host (it needs a dot, a port or to be localhost)`);
  return { registry: parsed.registry, prefix: parsed.repository.slice(0, -'/agent'.length) };
}

/** Where an image goes: `<registry>/<prefix>/<name>:<key>`. */
export function pushedReference(destination: { registry: string; prefix: string }, image: BuiltImage): string {
  return `${destination.registry}/${destination.prefix}/${image.name}:${image.key}`;
}

/** A containers-auth.json (skopeo's `--dest-authfile`) holding one registry's credentials. */
export function registryAuthFile(registry: string, username: string, password: string): string {
  return `${JSON.stringify({ auths: { [registry]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } })}\n`;
}
