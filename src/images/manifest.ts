// Manifests, image indexes and image configs of OCI and Docker v2 (schema 2), read from their JSON. Pure.

export const MediaTypes = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
} as const;

/** What a manifest request accepts, most preferred first. */
export const manifestAccept = [MediaTypes.ociIndex, MediaTypes.ociManifest, MediaTypes.dockerList, MediaTypes.dockerManifest].join(', ');

export type LayerCompression = 'none' | 'gzip' | 'zstd';

const layerTypes: Record<string, LayerCompression> = {
  'application/vnd.oci.image.layer.v1.tar': 'none',
  'application/vnd.oci.image.layer.v1.tar+gzip': 'gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd': 'zstd',
  'application/vnd.oci.image.layer.nondistributable.v1.tar': 'none',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip': 'gzip',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+zstd': 'zstd',
  'application/vnd.docker.image.rootfs.diff.tar.gzip': 'gzip',
  'application/vnd.docker.image.rootfs.diff.tar': 'none',
};

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export interface LayerDescriptor extends Descriptor {
  compression: LayerCompression;
}

export interface ImageManifest {
  kind: 'manifest';
  config: Descriptor;
  layers: LayerDescriptor[];
}

export interface PlatformEntry extends Descriptor {
  os?: string;
  architecture?: string;
  variant?: string;
}

export interface ImageIndex {
  kind: 'index';
  manifests: PlatformEntry[];
}

/** The parts of an image config a runtime needs (OCI image spec, "config" object). */
export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
  User?: string;
  ExposedPorts?: Record<string, object>;
}

export interface ParsedConfig {
  os?: string;
  architecture?: string;
  config: ImageConfig;
  /** Uncompressed digests of the layers, in order. */
  diffIds: string[];
}

/** Something wrong with a document: `unsupported` (a kind svc does not run) or `invalid` (broken). */
export class DocumentError extends Error {
  constructor(readonly reason: 'unsupported' | 'invalid', message: string) {
    super(message);
  }
}

const digestPattern = /^sha256:[a-f0-9]{64}$/;

function descriptor(value: unknown, where: string): Descriptor {
  const d = value as Partial<Descriptor> | null;
  if (!d || typeof d !== 'object' || typeof d.mediaType !== 'string' || typeof d.digest !== 'string' || typeof d.size !== 'number') {
    throw new DocumentError('invalid', `${where} is not a descriptor (mediaType, digest, size)`);
  }
  if (!digestPattern.test(d.digest)) throw new DocumentError('unsupported', `${where} has the digest ${d.digest}; svc verifies sha256 digests only`);
  if (!Number.isSafeInteger(d.size) || d.size < 0) throw new DocumentError('invalid', `${where} has the size ${d.size}`);
  return { mediaType: d.mediaType, digest: d.digest, size: d.size };
}

function parseJson(bytes: Buffer, what: string): Record<string, unknown> {
  try {
    const value = JSON.parse(bytes.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // reported below
  }
  throw new DocumentError('invalid', `the ${what} is not a JSON object`);
}

/** A manifest or an index, told apart by its media type (the body's, else the answer's Content-Type). */
export function parseManifestDocument(bytes: Buffer, contentType: string | undefined): ImageManifest | ImageIndex {
  const body = parseJson(bytes, 'manifest');
  const mediaType = typeof body.mediaType === 'string' ? body.mediaType : (contentType ?? '').split(';')[0].trim();
  if (body.schemaVersion === 1 || /prettyjws|manifest\.v1\+json$/.test(mediaType) && !mediaType.includes('oci')) {
    throw new DocumentError('unsupported', 'Docker schema 1 manifests are not supported; push the image again with a current client');
  }
  if (body.schemaVersion !== 2) throw new DocumentError('invalid', `the manifest has schemaVersion ${String(body.schemaVersion)}, not 2`);
  const isIndex = mediaType === MediaTypes.ociIndex || mediaType === MediaTypes.dockerList || (!mediaType && Array.isArray(body.manifests));
  if (isIndex) {
    if (!Array.isArray(body.manifests)) throw new DocumentError('invalid', 'the image index has no manifests list');
    return {
      kind: 'index',
      manifests: body.manifests.map((entry: Record<string, unknown>, i: number) => {
        const platform = (entry?.platform ?? {}) as Record<string, unknown>;
        return {
          ...descriptor(entry, `manifests[${i}]`),
          os: typeof platform.os === 'string' ? platform.os : undefined,
          architecture: typeof platform.architecture === 'string' ? platform.architecture : undefined,
          variant: typeof platform.variant === 'string' ? platform.variant : undefined,
        };
      }),
    };
  }
  if (mediaType && mediaType !== MediaTypes.ociManifest && mediaType !== MediaTypes.dockerManifest) {
    throw new DocumentError('unsupported', `the manifest media type ${mediaType} is not an image manifest svc runs`);
  }
  if (!Array.isArray(body.layers)) throw new DocumentError('invalid', 'the manifest has no layers list');
  const config = descriptor(body.config, 'config');
  if (config.mediaType !== MediaTypes.ociConfig && config.mediaType !== MediaTypes.dockerConfig) {
    throw new DocumentError('unsupported', `the config media type ${config.mediaType} is not an image config (an artifact, not a runnable image?)`);
  }
  const layers = body.layers.map((layer: unknown, i: number) => {
    const d = descriptor(layer, `layers[${i}]`);
    const compression = layerTypes[d.mediaType];
    if (compression === undefined) throw new DocumentError('unsupported', `layer ${d.digest} has the media type ${d.mediaType}, which svc cannot unpack`);
    return { ...d, compression };
  });
  return { kind: 'manifest', config, layers };
}

/** The linux/amd64 entry of an index (no variant preferred), or undefined. */
export function pickPlatform(index: ImageIndex, os = 'linux', architecture = 'amd64'): PlatformEntry | undefined {
  const matches = index.manifests.filter((m) => m.os === os && m.architecture === architecture);
  return matches.find((m) => !m.variant) ?? matches[0];
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

export function parseImageConfig(bytes: Buffer): ParsedConfig {
  const body = parseJson(bytes, 'image config');
  const raw = (body.config ?? {}) as Record<string, unknown>;
  const config: ImageConfig = {};
  if (stringList(raw.Entrypoint)) config.Entrypoint = stringList(raw.Entrypoint);
  if (stringList(raw.Cmd)) config.Cmd = stringList(raw.Cmd);
  if (stringList(raw.Env)) config.Env = stringList(raw.Env);
  if (typeof raw.WorkingDir === 'string' && raw.WorkingDir) config.WorkingDir = raw.WorkingDir;
  if (typeof raw.User === 'string' && raw.User) config.User = raw.User;
  if (raw.ExposedPorts && typeof raw.ExposedPorts === 'object') config.ExposedPorts = raw.ExposedPorts as Record<string, object>;
  const rootfs = (body.rootfs ?? {}) as Record<string, unknown>;
  const diffIds = stringList(rootfs.diff_ids) ?? [];
  return {
    os: typeof body.os === 'string' ? body.os : undefined,
    architecture: typeof body.architecture === 'string' ? body.architecture : undefined,
    config,
    diffIds,
  };
}
