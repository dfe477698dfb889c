// A managed PostgreSQL instance as a described process (src/runtime/managed-process.ts), for drivers that run
// descriptions (the Kubernetes driver): one shell script that initialises a new data directory (initdb with the
// password from a secret file, scram for every connection from the service network), or, on a data directory that
// exists, checks its major and sets the user's password to the vault's (single-user mode: a changed password reaches
// an instance whose old one nobody keeps), then runs the server on TCP only. Its database, extensions and settings are
// then brought to the request's over a connection, as the local engine does (postgres-instance.ts).
import { shellQuote } from '../agent/shell.ts';
import { managedProcessEnv, type ManagedProcess } from '../runtime/managed-process.ts';
import { pollUntil } from '../runtime/local/processes.ts';
import type { DescribedEngine } from './described-engines.ts';
import { ManagedInstanceFailure, type InstanceRequest } from './engine.ts';
import { postgresDetails, postgresDumps, postgresSpec } from './postgres-engine.ts';
import { applyPostgresSettings, checkPostgresReady, ensureDatabase, type Readiness } from './postgres-instance.ts';
import { DEFAULT_LOCALE, INITDB_DIR, passwordChangeSql, specErrors, type PostgresInstanceSpec } from './postgres-rules.ts';

const READY_TIMEOUT_MS = 60_000;
/** PostgreSQL's fast shutdown writes a checkpoint; it gets this long before it is killed. */
const STOP_GRACE_SECONDS = 30;

/** The secret files the script reads: initdb's password file and the statement that sets the password. */
export const POSTGRES_SECRET_FILES = { password: 'password', passwordSql: 'password.sql' } as const;

/** The script of the instance's process (pure): prepare or check the data directory, then `exec` the server. */
export function postgresScript(spec: Pick<PostgresInstanceSpec, 'major' | 'user' | 'port' | 'locale'>): string {
  const { bin, data, secrets } = managedProcessEnv;
  const major = String(spec.major);
  return [
    'set -eu',
    'umask 0077',
    `pgdata="$${data}/data"`,
    `partial="$${data}/${INITDB_DIR}"`,
    'if [ ! -s "$pgdata/PG_VERSION" ]; then',
    // what an initdb cut short left is never started: creation begins afresh
    '  rm -rf "$partial" "$pgdata"',
    `  "$${bin}/initdb" -D "$partial" -U ${spec.user} --pwfile="$${secrets}/${POSTGRES_SECRET_FILES.password}" --auth=scram-sha-256 -E UTF8 --locale=${shellQuote(spec.locale ?? DEFAULT_LOCALE)} --lc-messages=C`,
    `  printf 'host all all 0.0.0.0/0 scram-sha-256\\n' >> "$partial/pg_hba.conf"`,
    '  mv "$partial" "$pgdata"',
    `elif [ "$(cat "$pgdata/PG_VERSION")" != ${major} ]; then`,
    `  echo "FATAL: the data directory was created by PostgreSQL $(cat "$pgdata/PG_VERSION"); it cannot be started with PostgreSQL ${major}"`,
    '  exit 1',
    'else',
    // a volume whose ownership the cluster changed (fsGroup) leaves it group-writable, which PostgreSQL refuses
    '  chmod 0700 "$pgdata"',
    `  "$${bin}/postgres" --single -j -D "$pgdata" postgres < "$${secrets}/${POSTGRES_SECRET_FILES.passwordSql}" > /dev/null`,
    'fi',
    `exec "$${bin}/postgres" -D "$pgdata" -p ${spec.port} -c listen_addresses='*' -c unix_socket_directories= -c logging_collector=off`,
  ].join('\n');
}

/** The instance's spec (postgres-engine.ts) before it has an address: the process listens on every address of its own. */
function unplacedSpec(request: Omit<InstanceRequest, 'netns' | 'address'>): PostgresInstanceSpec {
  const spec = postgresSpec({ ...request, address: '0.0.0.0' });
  // the image holds the binaries of the catalog's majors: no installed majors to check here
  const errors = specErrors(spec, [spec.major]);
  if (errors.length > 0) throw new ManagedInstanceFailure(errors.join('; '));
  return spec;
}

export function postgresProcess(request: Omit<InstanceRequest, 'netns' | 'address'>): ManagedProcess {
  const spec = unplacedSpec(request);
  return {
    provider: 'postgres',
    version: String(spec.major),
    script: postgresScript(spec),
    env: { LC_ALL: 'C', TZ: 'UTC' },
    secretFiles: { [POSTGRES_SECRET_FILES.password]: `${spec.password}\n`, [POSTGRES_SECRET_FILES.passwordSql]: passwordChangeSql(spec) },
    uid: spec.uid,
    port: spec.port,
    storageMiB: request.plan?.resources.storage?.value ?? 1024,
    ...(spec.limits && { limits: spec.limits }),
    stopGraceSeconds: STOP_GRACE_SECONDS,
    stopSignal: 'SIGINT',
  };
}

/** Waits until the server at the request's address accepts the user (it may still be starting up after its probe passed). */
async function awaitServing(spec: PostgresInstanceSpec): Promise<void> {
  let last: Readiness = { ready: false, reason: 'none' };
  const ready = await pollUntil(async () => {
    last = await checkPostgresReady(spec, 'postgres', 2000);
    return last.ready;
  }, READY_TIMEOUT_MS, 100);
  if (!ready) throw new ManagedInstanceFailure(`PostgreSQL instance ${spec.id} did not accept connections within ${READY_TIMEOUT_MS / 1000} s (last answer: ${last.ready ? 'ready' : last.reason})`);
}

export const postgresDescribed: DescribedEngine = {
  describe: postgresProcess,
  async configure(_host, request, hooks) {
    const spec = postgresSpec(request);
    await awaitServing(spec);
    await ensureDatabase(spec);
    return applyPostgresSettings(spec, hooks);
  },
  details: (request) => postgresDetails({ ...request, address: '' }),
  ...postgresDumps,
};
