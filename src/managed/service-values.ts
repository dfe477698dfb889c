// What a managed service offers to the landscape's templates (`${{ services.<name>.host/.port/.dsn/.secret/
// .details.X }}`), computed from the file alone: the host is the service's name on the workspace's service network,
// the port the provider's own, the database and user from `config`, the password from its filled `secrets`. So Plan
// shows the values Sync will give without the instance existing yet (docs/decisions.md).
import type { ManagedServiceValues, NormalLandscape, NormalManagedService } from '../landscape/index.ts';
import { findProvider, type Catalog } from './catalog.ts';
import { NATS_CLIENT_PORT, NATS_MONITORING_PORT } from './nats-rules.ts';

export const POSTGRES_PORT = 5432;
export const REDIS_PORT = 6379;

/** Where and as whom a managed PostgreSQL instance is reached. */
export interface PostgresParameters {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  version: string;
}

/**
 * The connection parameters of managed postgres service `name` whose templates were filled in; `version` is the
 * one the instance was created with, else the one the file names, else the catalog's default.
 */
export function postgresParameters(name: string, service: NormalManagedService, version: string): PostgresParameters {
  const text = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback);
  return {
    host: name,
    port: POSTGRES_PORT,
    database: text(service.config.database, 'app'),
    user: text(service.config.user, 'app'),
    password: service.secrets.password ?? '',
    version,
  };
}

export function postgresDsn(p: Pick<PostgresParameters, 'user' | 'password' | 'host' | 'port' | 'database'>): string {
  return `postgresql://${p.user}:${encodeURIComponent(p.password)}@${p.host}:${p.port}/${p.database}`;
}

/** The version an instance of `service` runs: the one it was created with, else the file's, else the default. */
export function managedVersion(service: NormalManagedService, catalog: Catalog, created?: string): string | undefined {
  return created ?? service.providerVersion ?? findProvider(catalog, service.provider)?.defaultVersion;
}

/**
 * The template values of the managed services of `filled` (its managed `secrets` filled in) that this
 * installation runs; `versions` are those of existing instances by name.
 */
/** A provider's template values of service `name` from the file alone (its templates and `secrets` filled in). */
export type ProviderValues = (name: string, service: NormalManagedService, version: string) => ManagedServiceValues;

function postgresValues(name: string, service: NormalManagedService, version: string): ManagedServiceValues {
  const p = postgresParameters(name, service, version);
  return {
    host: p.host,
    port: p.port,
    dsn: postgresDsn(p),
    secret: p.password,
    details: { host: p.host, port: p.port, database: p.database, user: p.user, version: p.version },
  };
}

/** Where a managed Redis instance is reached, and its password (requirepass). */
export interface RedisParameters {
  host: string;
  port: number;
  password: string;
  version: string;
}

export function redisParameters(name: string, service: NormalManagedService, version: string): RedisParameters {
  return { host: name, port: REDIS_PORT, password: service.secrets.password ?? '', version };
}

/** `redis://:<password>@<host>:6379/0`: the default user, the password URL-encoded, database 0. */
export function redisDsn(p: Pick<RedisParameters, 'password' | 'host' | 'port'>): string {
  return `redis://:${encodeURIComponent(p.password)}@${p.host}:${p.port}/0`;
}

function redisValues(name: string, service: NormalManagedService, version: string): ManagedServiceValues {
  const p = redisParameters(name, service, version);
  return { host: p.host, port: p.port, dsn: redisDsn(p), secret: p.password, details: { host: p.host, port: p.port, version: p.version } };
}

/** Where and as whom a managed NATS instance is reached: one user (config `user`, default app) and its password. */
export function natsParameters(name: string, service: NormalManagedService, version: string) {
  return {
    host: name,
    port: NATS_CLIENT_PORT,
    monitoringPort: NATS_MONITORING_PORT,
    user: typeof service.config.user === 'string' ? service.config.user : 'app',
    password: service.secrets.password ?? '',
    jetstream: service.config.jetstream !== false,
    version,
  };
}

function natsValues(name: string, service: NormalManagedService, version: string): ManagedServiceValues {
  const p = natsParameters(name, service, version);
  return {
    host: p.host,
    port: p.port,
    dsn: `nats://${encodeURIComponent(p.user)}:${encodeURIComponent(p.password)}@${p.host}:${p.port}`,
    secret: p.password,
    details: { host: p.host, port: p.port, monitoringPort: p.monitoringPort, user: p.user, jetstream: p.jetstream, version: p.version },
  };
}

/** The template values of each provider this installation runs (engines.ts has the same names). */
export const providerValues: Readonly<Record<string, ProviderValues>> = {
  postgres: postgresValues,
  redis: redisValues,
  nats: natsValues,
};

/**
 * The template values of the managed services of `filled` (its managed `secrets` filled in) that this
 * installation runs; `versions` are those of existing instances by name.
 */
export function managedServiceValues(filled: NormalLandscape, catalog: Catalog, versions: Readonly<Record<string, string>>): Record<string, ManagedServiceValues> {
  const values: Record<string, ManagedServiceValues> = {};
  for (const [name, service] of Object.entries(filled.services)) {
    if (service.type !== 'managed' || !Object.hasOwn(providerValues, service.provider)) continue;
    values[name] = providerValues[service.provider](name, service, managedVersion(service, catalog, versions[name]) ?? '');
  }
  return values;
}
