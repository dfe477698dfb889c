// The connection values of a workspace's managed services as environment variables, for the places developers work
// (the editor pod's shells, `svc exec`, `svc ssh`, the console's terminal): the same host, port, user, password,
// database and URL the landscape's services get through `${{ services.<name>.* }}`. Each service gets
// `SVC_MANAGED_<NAME>_*`; the first instance of each provider (in the order given: the oldest first) also gets the
// names its clients read by themselves (postgres: `DATABASE_URL` and libpq's `PG*`, so `psql` connects without
// arguments; redis: `REDIS_URL`; nats: `NATS_URL`). Pure: the adapter (connection-values.ts) reads the deployed
// landscape.
import type { ManagedServiceValues } from '../landscape/index.ts';

export interface ManagedConnection {
  name: string;
  provider: string;
  values: ManagedServiceValues;
}

/** `db-main` -> `DB_MAIN`: the service's part of its variables' names. */
export function managedEnvName(service: string): string {
  return service.toUpperCase().replace(/-/g, '_');
}

const text = (value: unknown): string | undefined => (value === undefined ? undefined : String(value));

/** The `SVC_MANAGED_<NAME>_*` variables of one managed service (absent fields left out). */
export function serviceConnectionEnv(connection: ManagedConnection): Record<string, string> {
  const prefix = `SVC_MANAGED_${managedEnvName(connection.name)}_`;
  const { values } = connection;
  const fields: Record<string, string | undefined> = {
    HOST: values.host,
    PORT: String(values.port),
    USER: text(values.details.user),
    PASSWORD: values.secret,
    DATABASE: text(values.details.database),
    URL: values.dsn,
  };
  return Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined).map(([k, v]) => [prefix + k, v]));
}

/** The client libraries' own names of the only instance of a provider. */
function usualEnv(connection: ManagedConnection): Record<string, string> {
  const { values } = connection;
  switch (connection.provider) {
    case 'postgres':
      return {
        DATABASE_URL: values.dsn,
        PGHOST: values.host,
        PGPORT: String(values.port),
        PGUSER: String(values.details.user ?? ''),
        PGPASSWORD: values.secret,
        PGDATABASE: String(values.details.database ?? ''),
      };
    case 'redis':
      return { REDIS_URL: values.dsn };
    case 'nats':
      return { NATS_URL: values.dsn };
    default:
      return {};
  }
}

/** Every managed service's variables, and the usual names of the first instance of each provider. */
export function managedConnectionEnv(connections: readonly ManagedConnection[]): Record<string, string> {
  const env: Record<string, string> = {};
  const named = new Set<string>();
  for (const connection of connections) {
    Object.assign(env, serviceConnectionEnv(connection));
    if (named.has(connection.provider)) continue;
    named.add(connection.provider);
    Object.assign(env, usualEnv(connection));
  }
  return env;
}
