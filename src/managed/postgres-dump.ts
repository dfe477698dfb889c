// Dumps and restores of a managed PostgreSQL instance with the client tools of pg-client.ts (pg_dump, pg_restore and
// psql 17, which read servers 15 to 17). A dump is `pg_dump -Fc` of the instance's database as its user, over the
// address the instance listens at (the server reaches the service network as Sync's own checks do). A restore loads
// the dump through psql in one transaction into a new database, which then replaces the instance's (its sessions
// ended). pg_restore 17 writes `SET transaction_timeout = 0;`, which servers before 17 do not know, so for those
// the dump goes as SQL through a filter that drops that one line of its preamble (docs/managed.md, "Dumps").
import { spawn } from 'node:child_process';
import { chmod } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { findPgClientTools, pgClientMissing, type PgClientTools } from './pg-client.ts';
import type { PostgresInstanceSpec } from './postgres-rules.ts';

const DUMP_TIMEOUT_MS = 6 * 3600_000;

async function toolsOf(host: ManagedHost): Promise<PgClientTools> {
  const tools = await findPgClientTools(host.toolsDir);
  if (!tools) throw pgClientMissing(host.toolsDir);
  return tools;
}

/** The environment of a client tool: the password by variable (never on a command line), no files of the host's. */
function clientEnv(spec: Pick<PostgresInstanceSpec, 'password'>): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/bin:/bin',
    LC_ALL: 'C',
    PGPASSWORD: spec.password,
    PGPASSFILE: '/dev/null',
    PGSERVICEFILE: '/dev/null',
    PGSYSCONFDIR: '/nonexistent',
    PGCONNECT_TIMEOUT: '10',
    PGAPPNAME: 'svc-dump',
  };
}

const connection = (spec: PostgresInstanceSpec) => ['-h', spec.address, '-p', String(spec.port), '-U', spec.user, '-w'];

interface Finished {
  code: number | null;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, stdio: Array<'ignore' | 'pipe'>) {
  const child = spawn(file, args, { env, stdio: stdio as ['ignore' | 'pipe', 'ignore' | 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk).slice(-8000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), DUMP_TIMEOUT_MS);
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
  return { child, finished };
}

/** The last lines a tool wrote to stderr, as the reason of a failure. */
const reasonOf = (what: string, result: Finished) =>
  `${what} failed: ${result.stderr.trim().split('\n').slice(-3).join('; ') || `exit code ${result.code}`}`;

/** Writes `pg_dump -Fc` of the instance's database to `file` (root's, mode 0600). */
export async function dumpPostgresInstance(host: ManagedHost, spec: PostgresInstanceSpec, file: string): Promise<void> {
  const tools = await toolsOf(host);
  const args = [...connection(spec), '-d', spec.database, '-Fc', '-f', file];
  const result = await run(tools.pgDump, args, clientEnv(spec), ['ignore', 'ignore', 'pipe']).finished;
  if (result.code !== 0) throw new ManagedInstanceFailure(reasonOf(`pg_dump of PostgreSQL instance ${spec.id}`, result));
  await chmod(file, 0o600);
}

/** The database a restore loads into before it takes the instance's database's place. */
const RESTORE_DATABASE = 'svc_restore';

/**
 * Replaces the instance's database with the one dumped in `file` (a pg_dump custom-format file): the dump is loaded
 * in one transaction into a new database, its objects owned by the instance's user; only once that succeeded is the
 * instance's database dropped with its sessions and the new one renamed to take its place, so a failed restore
 * leaves the data as it was. Then the spec's extensions are created where the dump had none.
 */
export async function restorePostgresInstance(host: ManagedHost, spec: PostgresInstanceSpec, file: string): Promise<void> {
  const tools = await toolsOf(host);
  const list = await run(tools.pgRestore, ['--list', file], clientEnv(spec), ['ignore', 'ignore', 'pipe']).finished;
  if (list.code !== 0) throw new ManagedInstanceFailure(reasonOf('reading the dump', list));
  await withClient(spec, 'postgres', 'preparing the restore', async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${RESTORE_DATABASE} WITH (FORCE)`); // what an interrupted restore left
    await client.query(`CREATE DATABASE ${RESTORE_DATABASE} OWNER ${spec.user}`);
  });
  const env = clientEnv(spec);
  const restore = run(tools.pgRestore, ['-f', '-', '--no-owner', '--no-privileges', file], env, ['ignore', 'pipe', 'pipe']);
  const psqlArgs = ['-X', '-q', '-1', '-v', 'ON_ERROR_STOP=1', ...connection(spec), '-d', RESTORE_DATABASE];
  const psql = run(tools.psql, psqlArgs, env, ['pipe', 'ignore', 'pipe']);
  const stages = spec.major < 17 ? [restore.child.stdout!, new PreambleFilter(), psql.child.stdin!] : [restore.child.stdout!, psql.child.stdin!];
  // A psql that stops at an error closes its input: that broken pipe is told by psql's own answer below.
  await pipeline(stages).catch(() => undefined);
  const [restored, loaded] = await Promise.all([restore.finished, psql.finished]);
  const failure = loaded.code !== 0
    ? reasonOf(`loading the dump into PostgreSQL instance ${spec.id}`, loaded)
    : restored.code !== 0 ? reasonOf('pg_restore', restored) : undefined;
  // The names are identifiers specErrors accepted (lower case, no quoting needed); the user is the superuser.
  await withClient(spec, 'postgres', failure ? 'cleaning up the restore' : `replacing the database ${spec.database}`, async (client) => {
    if (failure) return void (await client.query(`DROP DATABASE IF EXISTS ${RESTORE_DATABASE} WITH (FORCE)`));
    await client.query(`DROP DATABASE IF EXISTS ${spec.database} WITH (FORCE)`);
    await client.query(`ALTER DATABASE ${RESTORE_DATABASE} RENAME TO ${spec.database}`);
  });
  if (failure) throw new ManagedInstanceFailure(failure);
  await createExtensions(spec);
  host.log(`managed PostgreSQL instance ${spec.id}: database ${spec.database} restored from ${file}`);
}

async function withClient(spec: PostgresInstanceSpec, database: string, what: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ host: spec.address, port: spec.port, user: spec.user, password: spec.password, database });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await work(client);
  } catch (error) {
    throw new ManagedInstanceFailure(`${what} of PostgreSQL instance ${spec.id} failed: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The extensions the file asks for, where the dump brought none (its settings live in the cluster, untouched). */
const createExtensions = (spec: PostgresInstanceSpec) =>
  withClient(spec, spec.database, 'creating the extensions', async (client) => {
    for (const name of spec.extensions ?? []) await client.query(`CREATE EXTENSION IF NOT EXISTS ${client.escapeIdentifier(name)}`);
  });

/** The setting of pg_restore 17's preamble that servers before 17 refuse (`unrecognized configuration parameter`). */
const NEWER_SETTING = /^SET transaction_timeout = /;
/** Lines of a pg_restore preamble: blank, comments, `\restrict` (17.6 on), SET and set_config. */
const PREAMBLE_LINE = /^(|--.*|\\restrict .*|SET .*|SELECT pg_catalog\.set_config\(.*)$/;

/**
 * Drops `SET transaction_timeout = ...;` from the preamble of pg_restore's SQL; once the first other statement comes,
 * everything passes as it is (data that happens to start with those words included).
 */
export class PreambleFilter extends Transform {
  // Bytes, not text: a newline byte never sits inside a UTF-8 character, so no character is cut in two.
  private pending = Buffer.alloc(0);
  private inPreamble = true;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.inPreamble) return done(null, chunk);
    this.pending = Buffer.concat([this.pending, chunk]);
    let end: number;
    while (this.inPreamble && (end = this.pending.indexOf(0x0a)) >= 0) {
      const line = this.pending.subarray(0, end).toString('utf8');
      if (!PREAMBLE_LINE.test(line)) {
        this.inPreamble = false;
        this.push(this.pending);
      } else if (!NEWER_SETTING.test(line)) {
        this.push(this.pending.subarray(0, end + 1));
      }
      this.pending = this.inPreamble ? this.pending.subarray(end + 1) : Buffer.alloc(0);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    done(null, NEWER_SETTING.test(this.pending.toString('utf8')) ? Buffer.alloc(0) : this.pending);
  }
}
