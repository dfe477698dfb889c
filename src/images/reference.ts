// Image references as Docker and the OCI distribution spec read them: `[registry/]repository[:tag][@digest]`.
// Without a registry the image is on Docker Hub (`docker.io`), whose one-part names live under `library/`.
import { ImageFailure } from './failures.ts';

export interface ImageReference {
  /** The registry as credentials and `--insecure-registries` name it: `docker.io`, `registry.example.com:5000`. */
  registry: string;
  /** `library/busybox`, `team/api`. */
  repository: string;
  /** Absent when only a digest was given; `latest` when neither was. */
  tag?: string;
  /** `sha256:<64 hex>`; wins over the tag when both are given. */
  digest?: string;
}

export const DOCKER_HUB = 'docker.io';
const hubAliases = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domainPattern = new RegExp(`^(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]{1,5})?$`);
const pathComponent = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const tagPattern = /^[\w][\w.-]{0,127}$/;
const digestPattern = /^sha256:[a-f0-9]{64}$/;

/** Reads a reference; an `ImageFailure` (`invalid-reference`) says what is wrong with it. */
export function parseImageReference(text: string): ImageReference {
  const invalid = (why: string) => new ImageFailure('invalid-reference', text, undefined, `not an image reference: ${why}`);
  if (text.length === 0 || text.length > 512) throw invalid('it must have 1 to 512 characters');
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!digestPattern.test(digest)) throw invalid(`the digest "${digest}" is not sha256: and 64 lowercase hex digits`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!tagPattern.test(tag)) throw invalid(`the tag "${tag}" has characters a tag cannot have, or more than 128`);
  }
  const parts = rest.split('/');
  let registry = DOCKER_HUB;
  const first = parts[0];
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase())) {
    if (!domainPattern.test(first)) throw invalid(`"${first}" is not a registry host`);
    registry = hubAliases.has(first.toLowerCase()) ? DOCKER_HUB : first.toLowerCase();
    parts.shift();
  }
  if (parts.length === 0 || parts.some((part) => !pathComponent.test(part))) {
    throw invalid(`the repository "${parts.join('/')}" must be lowercase letters, digits and separators (. _ __ -) between slashes`);
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  const repository = parts.join('/');
  if (repository.length > 255) throw invalid('the repository name is longer than 255 characters');
  return { registry, repository, tag: tag ?? (digest ? undefined : 'latest'), digest };
}

/** The full reference: `docker.io/library/busybox:latest`, `host:5000/team/api@sha256:…`. */
export function formatImageReference(reference: ImageReference): string {
  const name = `${reference.registry}/${reference.repository}`;
  if (reference.digest) return `${name}${reference.tag ? `:${reference.tag}` : ''}@${reference.digest}`;
  return `${name}:${reference.tag ?? 'latest'}`;
}

/** The host that serves the registry's API: Docker Hub's lives at registry-1.docker.io. */
export function registryApiHost(registry: string): string {
  return registry === DOCKER_HUB ? 'registry-1.docker.io' : registry;
}

/** The registry name credentials are stored under: lowercase, Docker Hub's aliases as `docker.io`. */
export function normalizeRegistryHost(host: string): string {
  const lower = host.trim().toLowerCase();
  return hubAliases.has(lower) ? DOCKER_HUB : lower;
}

/** Whether `host` (a registry name, host or host:port) is a registry name svc accepts. */
export function isRegistryHost(host: string): boolean {
  return host.length <= 255 && domainPattern.test(host);
}
