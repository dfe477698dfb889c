// The providers of managed services this installation knows (spec 2.7, 2.8 "managed service"): data only, read
// by the catalog (catalog.ts). An operator adds a plan or a version here; disabling a version is a server setting
// (--managed-disable), docs/managed.md.

/** How a value may change once the instance exists (its update constraint). */
export type UpdateRule =
  /** Applied by Sync while the instance runs. */
  | 'live'
  /** Applied by Sync, which restarts the instance's server (the plan says so). */
  | 'restart'
  /** Sizes that may grow but never shrink (data lives in them). */
  | 'grow'
  /** Fixed at creation: a change is refused at Plan. */
  | 'never';

export type ResourceUnit = 'millicpu' | 'MiB' | 'count';

export interface ResourceDefinition {
  name: string;
  unit: ResourceUnit;
  description: string;
  update: UpdateRule;
}

/** A value of a plan and the bounds a file's `resources` override must stay within. */
export interface ResourceBounds {
  value: number;
  min: number;
  max: number;
}

export interface ManagedPlanDefinition {
  id: string;
  title: string;
  resources: Record<string, ResourceBounds>;
}

/** The words for a PostgreSQL database or user name (the pattern's error message). */
const POSTGRES_NAME = 'must be a name of lowercase letters, digits and _, not starting with a digit, at most 63 characters';

/** A JSON Schema of a provider's `config`; each property says its update rule in `x-update` and a pattern's rule in `patternErrorMessage`. */
export interface ConfigSchema {
  type: 'object';
  additionalProperties: false;
  properties: Record<string, Record<string, unknown> & { description: string; 'x-update': UpdateRule }>;
}

export interface NamedField {
  name: string;
  description: string;
}

export interface ProviderDefinition {
  name: string;
  title: string;
  description: string;
  /** Oldest first; the newest one not disabled is the default. */
  versions: string[];
  defaultPlan: string;
  resources: ResourceDefinition[];
  plans: ManagedPlanDefinition[];
  config: ConfigSchema;
  secrets: NamedField[];
  details: NamedField[];
  capabilities: { dump: boolean; backups: boolean; pause: boolean; http: boolean };
}

// The CPU limit of an instance's cgroup changes while it runs: no provider restarts for it.
const cpu: ResourceDefinition = { name: 'cpu', unit: 'millicpu', description: 'CPU in thousandths of a core (1000 = one core)', update: 'live' };
const memory: ResourceDefinition = { name: 'memory', unit: 'MiB', description: 'memory of the server process', update: 'restart' };
const storage: ResourceDefinition = { name: 'storage', unit: 'MiB', description: 'space for the data; may grow, never shrink', update: 'grow' };

function bounds(value: number, min: number, max: number): ResourceBounds {
  return { value, min, max };
}

const postgres: ProviderDefinition = {
  name: 'postgres',
  title: 'PostgreSQL',
  description: 'A PostgreSQL server with one database and one user.',
  versions: ['15', '16', '17'],
  defaultPlan: 'small',
  resources: [cpu, memory, storage, { name: 'connections', unit: 'count', description: 'max_connections of the server', update: 'restart' }],
  plans: [
    { id: 'small', title: 'Small', resources: { cpu: bounds(500, 250, 1000), memory: bounds(512, 256, 1024), storage: bounds(1024, 512, 10240), connections: bounds(100, 10, 200) } },
    { id: 'medium', title: 'Medium', resources: { cpu: bounds(1000, 500, 2000), memory: bounds(2048, 1024, 4096), storage: bounds(10240, 1024, 102400), connections: bounds(200, 10, 500) } },
    { id: 'large', title: 'Large', resources: { cpu: bounds(2000, 1000, 4000), memory: bounds(4096, 2048, 8192), storage: bounds(51200, 10240, 512000), connections: bounds(400, 10, 1000) } },
  ],
  config: {
    type: 'object',
    additionalProperties: false,
    properties: {
      database: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$', patternErrorMessage: POSTGRES_NAME, description: 'name of the database (default app)', 'x-update': 'never' },
      user: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$', patternErrorMessage: POSTGRES_NAME, description: 'name of the user owning it (default app)', 'x-update': 'never' },
      locale: { type: 'string', enum: ['C', 'C.UTF-8'], description: 'locale of the cluster (default C.UTF-8)', 'x-update': 'never' },
      timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'TimeZone setting (default UTC)', 'x-update': 'live' },
      extensions: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', enum: ['citext', 'hstore', 'pg_trgm', 'pgcrypto', 'uuid-ossp', 'btree_gin', 'btree_gist', 'tablefunc'] },
        description: 'extensions created in the database (from those the binaries ship)',
        'x-update': 'live',
      },
      work_mem: { type: 'integer', minimum: 1, maximum: 1024, description: 'work_mem in MiB', 'x-update': 'live' },
      statement_timeout: { type: 'integer', minimum: 0, maximum: 86400000, description: 'statement_timeout in milliseconds; 0 is none', 'x-update': 'live' },
    },
  },
  secrets: [{ name: 'password', description: "the user's password (a vault secret)" }],
  details: [
    { name: 'host', description: 'host name on the workspace service network' },
    { name: 'port', description: 'TCP port' },
    { name: 'database', description: 'database name' },
    { name: 'user', description: 'user name' },
    { name: 'version', description: 'the major version the instance runs' },
  ],
  capabilities: { dump: true, backups: true, pause: true, http: false },
};

const redis: ProviderDefinition = {
  name: 'redis',
  title: 'Redis',
  description: "Debian's redis-server, protected by a password.",
  versions: ['7'],
  defaultPlan: 'small',
  resources: [
    cpu,
    { ...memory, description: 'maxmemory of the server (applied live)', update: 'live' },
    storage,
    { name: 'connections', unit: 'count', description: 'maxclients of the server (applied live)', update: 'live' },
  ],
  plans: [
    { id: 'small', title: 'Small', resources: { cpu: bounds(250, 100, 1000), memory: bounds(256, 64, 1024), storage: bounds(512, 256, 4096), connections: bounds(1000, 10, 4000) } },
    { id: 'medium', title: 'Medium', resources: { cpu: bounds(500, 250, 2000), memory: bounds(1024, 256, 4096), storage: bounds(2048, 512, 16384), connections: bounds(4000, 10, 10000) } },
  ],
  config: {
    type: 'object',
    additionalProperties: false,
    properties: {
      maxmemoryPolicy: {
        type: 'string',
        enum: ['noeviction', 'allkeys-lru', 'allkeys-lfu', 'volatile-lru', 'volatile-lfu', 'allkeys-random', 'volatile-random', 'volatile-ttl'],
        description: 'maxmemory-policy (default noeviction)',
        'x-update': 'live',
      },
      appendonly: { type: 'boolean', description: 'append-only file besides snapshots (default false)', 'x-update': 'live' },
      databases: { type: 'integer', minimum: 1, maximum: 64, description: 'number of databases (default 16)', 'x-update': 'restart' },
    },
  },
  secrets: [{ name: 'password', description: 'the requirepass password (a vault secret)' }],
  details: [
    { name: 'host', description: 'host name on the workspace service network' },
    { name: 'port', description: 'TCP port' },
    { name: 'version', description: 'the major version the instance runs' },
  ],
  capabilities: { dump: true, backups: true, pause: true, http: false },
};

const nats: ProviderDefinition = {
  name: 'nats',
  title: 'NATS',
  description: "Debian's nats-server with JetStream, a message broker; its monitoring endpoint is the managed-service host.",
  versions: ['2'],
  defaultPlan: 'small',
  resources: [cpu, memory, { ...storage, description: 'JetStream file storage; may grow, never shrink' }, { name: 'connections', unit: 'count', description: 'max_connections of the server', update: 'restart' }],
  plans: [
    { id: 'small', title: 'Small', resources: { cpu: bounds(250, 100, 1000), memory: bounds(256, 128, 1024), storage: bounds(1024, 256, 10240), connections: bounds(1000, 10, 10000) } },
  ],
  config: {
    type: 'object',
    additionalProperties: false,
    properties: {
      user: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]{0,62}$', patternErrorMessage: 'must be a name of letters, digits, _ and -, not starting with a digit or -, at most 63 characters', description: 'name of the user clients connect as (default app)', 'x-update': 'restart' },
      jetstream: { type: 'boolean', description: 'JetStream persistence (default true)', 'x-update': 'restart' },
      maxPayload: { type: 'integer', minimum: 1024, maximum: 8388608, description: 'max_payload in bytes (default 1048576)', 'x-update': 'restart' },
    },
  },
  secrets: [{ name: 'password', description: "the user's password (a vault secret)" }],
  details: [
    { name: 'host', description: 'host name on the workspace service network' },
    { name: 'port', description: 'client TCP port' },
    { name: 'monitoringPort', description: 'HTTP monitoring port, served on the managed-service host' },
    { name: 'user', description: 'user name' },
    { name: 'jetstream', description: 'whether JetStream persistence is on' },
    { name: 'version', description: 'the major version the instance runs' },
  ],
  capabilities: { dump: false, backups: false, pause: true, http: true },
};

export const providerDefinitions: readonly ProviderDefinition[] = [postgres, redis, nats];
