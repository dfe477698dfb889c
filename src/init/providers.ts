// Images (and devcontainer features) that are a database or broker svc runs as a managed service: the provider and,
// from the image's tag, its major version.
export interface ProviderMatch {
  provider: 'postgres' | 'redis' | 'nats';
  version?: string;
}

const known: Array<{ provider: ProviderMatch['provider']; names: RegExp }> = [
  { provider: 'postgres', names: /^(postgres|postgresql|postgis|timescaledb(-ha)?|timescale\/timescaledb)$/ },
  { provider: 'redis', names: /^(redis|redis-stack(-server)?|valkey)$/ },
  { provider: 'nats', names: /^nats(-streaming)?$/ },
];

/** `docker.io/library/postgres:16-alpine` -> postgres 16; `bitnami/redis:7.2` -> redis 7; other images: undefined. */
export function providerOfImage(image: string): ProviderMatch | undefined {
  const withoutDigest = image.split('@')[0];
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const tag = colon > slash ? withoutDigest.slice(colon + 1) : '';
  const repository = colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
  const last = repository.split('/').at(-1)!.toLowerCase();
  const match = known.find((k) => k.names.test(last) || k.names.test(repository.split('/').slice(-2).join('/')));
  if (!match) return undefined;
  const major = /^v?(\d+)/.exec(tag)?.[1];
  return { provider: match.provider, version: major };
}

/** A devcontainer feature that installs a server svc manages (`ghcr.io/.../features/postgres:1`). */
export function providerOfFeature(feature: string): ProviderMatch | undefined {
  const name = feature.split('/').at(-1)!.split(':')[0].toLowerCase();
  if (/^postgres(ql)?(-server)?$/.test(name)) return { provider: 'postgres' };
  if (/^redis(-server)?$/.test(name)) return { provider: 'redis' };
  if (/^nats(-server)?$/.test(name)) return { provider: 'nats' };
  return undefined;
}
