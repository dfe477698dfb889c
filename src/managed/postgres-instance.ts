// The processes of a managed PostgreSQL instance on the local runtime: initdb and the server, each in a bubblewrap
// sandbox like a pod (sandbox.ts) that sees only its own directory and the binaries of its major version, run as the
// workspace's UID, in the network namespace the caller gives. The server is started detached and recorded, so it
// outlives a restart of the svc server as pods do. Layout under <data dir>/managed/<id>/: data/ (PGDATA, the
// instance's UID), postgres.log and process.json (root's). The lifecycle calls create, start, stop, delete and ready.
import { chmod, chown, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { isSameProcess, pollUntil, runCommand } from '../runtime/local/processes.ts';
import { podSeccompFile } from '../runtime/local/seccomp.ts';
import { sandboxCommand, type SandboxSpec } from '../runtime/local/sandbox.ts';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { instanceCgroup, isInstanceProcessRunning, readInstanceProcess, startInstanceProcess, stopInstanceProcess } from './instance-process.ts';
import {
  autoConfText,
  BINARIES_IN_SANDBOX,
  INSTANCE_DIR_IN_SANDBOX,
  binariesDir,
  INITDB_DIR,
  initdbScript,
  passwordChangeScript,
  passwordChangeSql,
  instanceDataDir,
  instanceDir,
  PASSWORD_FILE,
  postgresFailureReason,
  serverScript,
  settingsChange,
  specErrors,
  startDecision,
  versionMarker,
  type PostgresInstanceSpec,
} from './postgres-rules.ts';

/** scripts/setup-postgres.sh installed the majors under <tools>/postgres/<major>. */
export type PostgresHost = ManagedHost;

/** A start, stop or creation that did not succeed; `reason` is what PostgreSQL or the sandbox said. */
export class PostgresInstanceFailure extends ManagedInstanceFailure {}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const INITDB_TIMEOUT_MS = 120_000;
const logFile = (host: PostgresHost, id: number) => path.join(instanceDir(host.dataDir, id), 'postgres.log');
const passwdFile = (host: PostgresHost, id: number) => path.join(instanceDir(host.dataDir, id), 'passwd');
const isRoot = () => process.getuid?.() === 0;

/** The majors scripts/setup-postgres.sh finished installing in `toolsDir` (their marker files), ascending. */
export async function installedPostgresMajors(toolsDir: string): Promise<number[]> {
  const names = await readdir(path.join(toolsDir, 'postgres')).catch(() => [] as string[]);
  const majors: number[] = [];
  for (const name of names.filter((entry) => /^\d+$/.test(entry))) {
    const version = await readFile(versionMarker(toolsDir, Number(name)), 'utf8').catch(() => '');
    if (version.startsWith(`${name}.`)) majors.push(Number(name));
  }
  return majors.sort((a, b) => a - b);
}

/** The major the instance's data directory was created with (its PG_VERSION), undefined before initdb. */
export async function instanceMajor(host: PostgresHost, id: number): Promise<string | undefined> {
  return readFile(path.join(instanceDataDir(host.dataDir, id), 'PG_VERSION'), 'utf8').then((text) => text.trim(), () => undefined);
}

/**
 * Creates the instance when its data directory is new (initdb, first start, its database), else starts it as it
 * is; then brings its extensions and settings to the spec's. Answers once it accepts queries, with the settings
 * that wait for a restart (stop and start) to apply and whether a running server was restarted (to take a new
 * password). Idempotent: the lifecycle may call it on every Sync.
 */
export async function createPostgresInstance(host: PostgresHost, spec: PostgresInstanceSpec, hooks: SettingsHooks = {}): Promise<{ pendingRestart: string[]; restarted: boolean }> {
  await checkSpec(host, spec);
  const decision = startDecision(await instanceMajor(host, spec.id), spec.major);
  if (decision.kind === 'refuse') throw new PostgresInstanceFailure(decision.reason);
  if (decision.kind === 'initialise') await initialise(host, spec);
  await startPostgresInstance(host, spec).catch(async (error: unknown) => {
    // A new cluster that cannot start (a setting PostgreSQL refuses) holds nothing yet: the next Sync begins afresh.
    if (decision.kind === 'initialise') await rm(instanceDataDir(host.dataDir, spec.id), { recursive: true, force: true });
    throw error;
  });
  // A resumed instance has its database (one connection fewer); one whose creation stopped short may not.
  if (decision.kind === 'initialise') await ensureDatabase(spec);
  let restarted = false;
  const pendingRestart = await applyPostgresSettings(spec, hooks).catch(async (error: Error & { code?: string }) => {
    if (error.code === '28P01') {
      // A running instance refuses the password the vault holds now: a restart gives it the new one.
      await hooks.changing?.();
      await stopPostgresInstance(host, spec.id);
      await startPostgresInstance(host, spec);
      restarted = true;
      return applyPostgresSettings(spec, hooks);
    }
    if (error.code !== '3D000') throw error; // invalid_catalog_name: the database does not exist
    await ensureDatabase(spec);
    return applyPostgresSettings(spec, hooks);
  });
  if (decision.kind !== 'initialise' || pendingRestart.length === 0) return { pendingRestart, restarted };
  // A new instance starts with its settings: nobody uses it yet, so the restart costs nothing but half a second.
  await stopPostgresInstance(host, spec.id);
  await startPostgresInstance(host, spec);
  return { pendingRestart: [], restarted: false };
}

async function checkSpec(host: PostgresHost, spec: PostgresInstanceSpec): Promise<void> {
  const errors = specErrors(spec, await installedPostgresMajors(host.toolsDir));
  if (errors.length > 0) throw new PostgresInstanceFailure(errors.join('; '));
}

function sandboxOf(host: PostgresHost, spec: PostgresInstanceSpec, script: string, detached: boolean): SandboxSpec {
  return {
    seccomp: podSeccompFile(host.dataDir),
    uid: spec.uid,
    switchUser: isRoot(),
    netns: detached ? spec.netns : undefined,
    isolateNetwork: !detached, // initdb needs no network
    hostname: `ms-${spec.id}`,
    volumeDir: instanceDir(host.dataDir, spec.id),
    readOnlyBinds: [
      { source: binariesDir(host.toolsDir, spec.major), target: BINARIES_IN_SANDBOX },
      { source: passwdFile(host, spec.id), target: '/etc/passwd' },
    ],
    env: { LC_ALL: 'C', TZ: 'UTC' },
    infoFd: detached ? 3 : undefined,
    dieWithParent: !detached,
    script,
  };
}

/**
 * initdb in the sandbox, into an empty INITDB_DIR owned by the instance's UID (the password goes by file); the
 * directory becomes the data directory once initdb and the settings file are complete. What an initdb cut short
 * left (its server killed) is removed first: it is never started, and creation begins afresh.
 */
async function initialise(host: PostgresHost, spec: PostgresInstanceSpec): Promise<void> {
  const dir = instanceDir(host.dataDir, spec.id);
  const data = instanceDataDir(host.dataDir, spec.id);
  const partial = path.join(dir, INITDB_DIR);
  for (const leftover of [data, partial]) await rm(leftover, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chmod(dir, 0o755);
  await mkdir(partial, { mode: 0o700 });
  // initdb looks its user up by UID; the workspace's UID has no entry in the host's /etc/passwd.
  await writeFile(passwdFile(host, spec.id), passwdEntry(spec.uid), { mode: 0o644 });
  if (isRoot()) await chown(partial, spec.uid, 0);
  // SVC_TEST_HOLD_INITDB: read only by tests, which kill the server while initdb is held halfway.
  const result = await runWithPasswordFile(host, spec, `${spec.password}\n`, initdbScript(spec, process.env.SVC_TEST_HOLD_INITDB === '1'));
  if (result.code !== 0) {
    await rm(partial, { recursive: true, force: true });
    const output = `${result.stdout}\n${result.stderr}`;
    throw new PostgresInstanceFailure(`initdb of PostgreSQL ${spec.major} failed: ${postgresFailureReason(output) ?? `exit code ${result.code}`}`);
  }
  // Its settings from the first start on: no restart for those PostgreSQL reads only at start (max_connections).
  if (Object.keys(spec.settings ?? {}).length > 0) {
    const autoConf = path.join(partial, 'postgresql.auto.conf');
    await writeFile(autoConf, autoConfText(spec.settings!), { mode: 0o600 });
    if (isRoot()) await chown(autoConf, spec.uid, 0);
  }
  await rename(partial, data);
  host.log(`managed PostgreSQL ${spec.major} instance ${spec.id} initialised in ${data}`);
}

/** Runs `script` in the instance's sandbox (no network) with `text` in its password file, readable by its UID only. */
async function runWithPasswordFile(host: PostgresHost, spec: PostgresInstanceSpec, text: string, script: string) {
  const passwordFile = path.join(instanceDir(host.dataDir, spec.id), PASSWORD_FILE);
  await writeFile(passwordFile, text, { mode: 0o600 });
  try {
    if (isRoot()) await chown(passwordFile, spec.uid, 0);
    const command = sandboxCommand(sandboxOf(host, spec, script, false));
    return await runCommand(command.file, command.args, { timeoutMs: INITDB_TIMEOUT_MS });
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** Sets the user's password to the spec's, with the server stopped (single-user mode needs no old password). */
async function changePostgresPassword(host: PostgresHost, spec: PostgresInstanceSpec): Promise<void> {
  const result = await runWithPasswordFile(host, spec, passwordChangeSql(spec), passwordChangeScript());
  const output = `${result.stdout}\n${result.stderr}`;
  // Single-user mode reports a failed statement on its output and still exits 0.
  if (result.code !== 0 || /\bERROR:/.test(output)) {
    throw new PostgresInstanceFailure(`PostgreSQL instance ${spec.id} could not take its new password: ${postgresFailureReason(output) ?? output.trim().split('\n').at(-1)}`);
  }
  host.log(`managed PostgreSQL instance ${spec.id}: the password of ${spec.user} changed`);
}

/** The sandbox's /etc/passwd: its one user, the instance's UID, named as PostgreSQL's own. */
const passwdEntry = (uid: number) => `postgres:x:${uid}:0:PostgreSQL:${INSTANCE_DIR_IN_SANDBOX}:/usr/sbin/nologin\n`;

/** Whether the instance's server process runs (the one recorded, not a process that reused its pid). */
export async function isPostgresInstanceRunning(host: PostgresHost, id: number): Promise<boolean> {
  return isInstanceProcessRunning(await readInstanceProcess(instanceDir(host.dataDir, id)));
}

/**
 * Starts the server of an initialised instance (resume after a pause) and answers once it accepts queries. A
 * running instance is left as it is. A server that exits while starting, or does not answer within a minute, ends
 * in a PostgresInstanceFailure naming PostgreSQL's own reason; nothing of it is left running. One that refuses the
 * spec's password (changed in the vault since) is stopped, given the new password and started again.
 */
export async function startPostgresInstance(host: PostgresHost, spec: PostgresInstanceSpec, passwordChanged = false): Promise<void> {
  await checkSpec(host, spec);
  const decision = startDecision(await instanceMajor(host, spec.id), spec.major);
  if (decision.kind === 'refuse') throw new PostgresInstanceFailure(decision.reason);
  if (decision.kind === 'initialise') throw new PostgresInstanceFailure(`the managed PostgreSQL instance ${spec.id} has no data directory; create it first`);
  if (await isPostgresInstanceRunning(host, spec.id)) return;
  // As the instance's UID now (a volume owner change gives the workspace another one).
  await writeFile(passwdFile(host, spec.id), passwdEntry(spec.uid), { mode: 0o644 });
  const command = sandboxCommand(sandboxOf(host, spec, serverScript(spec), true));
  const place = { netns: spec.netns, address: spec.address, port: spec.port };
  const limited = { cgroup: instanceCgroup(host, spec.id), limits: spec.limits };
  const record = await startInstanceProcess(instanceDir(host.dataDir, spec.id), logFile(host, spec.id), command, place, limited).catch(async (error: Error) => {
    throw new PostgresInstanceFailure(`the sandbox of PostgreSQL instance ${spec.id} did not start: ${error.message}`);
  });
  let exited = false;
  let lastAnswer: Readiness = { ready: false, reason: 'none' };
  const done = await pollUntil(async () => {
    exited = !(await isSameProcess(record.pid, record.startTime));
    if (exited) return true;
    lastAnswer = await checkPostgresReady(spec, 'postgres', 1000); // its own database may not exist yet; retried, so short
    return lastAnswer.ready || isAuthorizationRefusal(lastAnswer);
  }, START_TIMEOUT_MS, 25);
  if (done && lastAnswer.ready && !exited) {
    host.log(`managed PostgreSQL ${spec.major} instance ${spec.id} accepts connections at ${spec.address}:${spec.port}`);
    return;
  }
  await stopPostgresInstance(host, spec.id);
  if (!exited && isAuthorizationRefusal(lastAnswer) && !passwordChanged) {
    // The password in the vault changed since the instance was made: it takes the new one, then starts again.
    await changePostgresPassword(host, spec);
    return startPostgresInstance(host, spec, true);
  }
  const log = await readFile(logFile(host, spec.id), 'utf8').catch(() => '');
  const why = exited
    ? postgresFailureReason(log) ?? 'the server exited'
    : isAuthorizationRefusal(lastAnswer)
      ? `it refused the instance's user: ${lastAnswer.reason}` // waiting longer would not change that
      : `it did not accept connections within ${START_TIMEOUT_MS / 1000} s (last answer: ${lastAnswer.ready ? 'ready' : lastAnswer.reason})`;
  throw new PostgresInstanceFailure(`PostgreSQL instance ${spec.id} did not start: ${why}`);
}

/**
 * Pauses the instance: a fast shutdown of the postmaster (sessions ended, a checkpoint written), then whatever is
 * left of its sandbox is killed. The data stays. Idempotent.
 */
export async function stopPostgresInstance(host: PostgresHost, id: number): Promise<void> {
  // SIGINT to the postmaster (the one child of bubblewrap's reaper) is PostgreSQL's fast shutdown.
  const ended = await stopInstanceProcess(instanceDir(host.dataDir, id), id, 'SIGINT', STOP_TIMEOUT_MS, Infinity, instanceCgroup(host, id));
  if (!ended) host.log(`managed PostgreSQL instance ${id} did not shut down within ${STOP_TIMEOUT_MS / 1000} s; killed it`);
}

/** Deletes the instance: its processes, then its directory with the data. Idempotent. */
export async function deletePostgresInstance(host: PostgresHost, id: number): Promise<void> {
  await stopPostgresInstance(host, id);
  await rm(instanceDir(host.dataDir, id), { recursive: true, force: true });
  host.log(`managed PostgreSQL instance ${id} deleted with its data`);
}

/** `code` is PostgreSQL's SQLSTATE when the server answered with an error. */
export type Readiness = { ready: true } | { ready: false; reason: string; code?: string };

/** Class 28 (invalid authorization: a wrong password, an unknown user): the server runs and says no. */
const isAuthorizationRefusal = (answer: Readiness) => !answer.ready && answer.code?.startsWith('28') === true;

/** A real connection as the instance's user to its database (or `database`), and `SELECT 1`, within `timeoutMs`. */
export async function checkPostgresReady(
  spec: Pick<PostgresInstanceSpec, 'address' | 'port' | 'user' | 'password' | 'database'>,
  database = spec.database,
  timeoutMs = 5000,
): Promise<Readiness> {
  const client = new pg.Client({
    host: spec.address,
    port: spec.port,
    user: spec.user,
    password: spec.password,
    database,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on('error', () => undefined); // a server going away mid-check is a "not ready", not a crash
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ready: true };
  } catch (error) {
    const { message, code } = error as Error & { code?: string };
    return { ready: false, reason: message, ...(code && /^[0-9A-Z]{5}$/.test(code) ? { code } : {}) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the instance's database (owned by its user) when it does not exist yet. */
export async function ensureDatabase(spec: PostgresInstanceSpec): Promise<void> {
  await withClient(spec, 'postgres', async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [spec.database]);
    // The name is an identifier specErrors accepted: nothing to quote.
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${spec.database} OWNER ${spec.user}`);
  });
}

export interface SettingsHooks {
  /** Called once before an extension or a setting changes (not when everything is as the spec asks). */
  changing?: () => Promise<void>;
}

/**
 * Creates the spec's missing extensions in its database and keeps its settings in the cluster (ALTER SYSTEM, so
 * they hold across restarts), reloading the configuration; answers the settings that apply only after a restart.
 * A value PostgreSQL refuses (a time zone it does not know) ends in a PostgresInstanceFailure with its reason.
 */
export async function applyPostgresSettings(spec: PostgresInstanceSpec, hooks: SettingsHooks = {}): Promise<string[]> {
  return withClient(spec, spec.database, async (client) => {
    // One round trip for what is there: the extensions (name null) and the settings kept by ALTER SYSTEM.
    const found = await client.query<{ extension: string | null; name: string | null; setting: string | null }>(
      `SELECT extname AS extension, NULL AS name, NULL AS setting FROM pg_extension
       UNION ALL SELECT NULL, name, setting FROM pg_file_settings WHERE sourcefile LIKE '%/postgresql.auto.conf' AND error IS NULL`,
    );
    const missing = (spec.extensions ?? []).filter((name) => !found.rows.some((row) => row.extension === name));
    const kept = { rows: found.rows.filter((row): row is { extension: null; name: string; setting: string } => row.name !== null) };
    const change = settingsChange(Object.fromEntries(kept.rows.map((row) => [row.name.toLowerCase(), row.setting])), spec.settings ?? {});
    if (missing.length + change.set.length + change.reset.length > 0) await hooks.changing?.();
    for (const name of missing) await client.query(`CREATE EXTENSION IF NOT EXISTS ${client.escapeIdentifier(name)}`);
    try {
      // ALTER SYSTEM takes no parameters; the names are ones specErrors accepted and the values are quoted.
      for (const [name, value] of change.set) await client.query(`ALTER SYSTEM SET ${name} = ${client.escapeLiteral(value)}`);
    } catch (error) {
      throw new PostgresInstanceFailure(`PostgreSQL instance ${spec.id} refused its settings: ${(error as Error).message}`);
    }
    for (const name of change.reset) await client.query(`ALTER SYSTEM RESET ${name}`);
    if (change.set.length + change.reset.length === 0) return [];
    await client.query('SELECT pg_reload_conf()');
    const pending = await client.query<{ name: string }>(
      'SELECT name FROM pg_settings WHERE pending_restart OR (name = ANY($1) AND context = $2) ORDER BY name',
      [change.set.map(([name]) => name).concat(change.reset), 'postmaster'],
    );
    return pending.rows.map((row) => row.name);
  });
}

async function withClient<T>(spec: PostgresInstanceSpec, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: spec.address, port: spec.port, user: spec.user, password: spec.password, database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
