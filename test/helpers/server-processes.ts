// Several `svc server` processes on one database and one data directory, as an installation scaled out on one
// machine runs them (docs/topology.md): real child processes, so a test can SIGKILL one.
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ApiClient } from './client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { startSvc, stopSvc, type SvcProcess } from './process.ts';

export interface ServerProcess {
  url: string;
  process: SvcProcess;
  /** The id it took among the installation's servers (src/cluster/presence.ts). */
  serverId: string;
  /** The JSON lines it logged (pino), parsed. */
  logLines(): Array<Record<string, unknown> & { msg?: string; time?: number }>;
}

export interface Installation {
  database: TestDatabase;
  dataDir: string;
  /** The first administrator's API key, good on every server. */
  adminKey: string;
  /** The first administrator's browser session (minting keys needs one), good on every server. */
  adminCookie: string;
  servers: ServerProcess[];
  /** Starts one more server on the same database and data directory. */
  addServer(): Promise<ServerProcess>;
  /** A client of `server` with the administrator's key. */
  admin(server: ServerProcess): ApiClient;
  query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface InstallationOptions {
  /** Extra settings of every server (environment variables). */
  env?: Record<string, string>;
}

/** `count` servers on a new database and data directory; the first one makes the administrator. */
export async function startInstallation(count: number, options: InstallationOptions = {}): Promise<Installation> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-multi-'));
  await mkdir(path.join(dataDir, 'no-tools'));
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  const servers: ServerProcess[] = [];
  const env = {
    DATABASE_URL: database.url,
    SVC_DATA_DIR: dataDir,
    SVC_LISTEN: '127.0.0.1:0',
    SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'), // the built-in editor, quick to start
    SVC_DATA_PLANE: process.env.SVC_DATA_PLANE,
    SVC_RATE_LIMIT: '0',
    SVC_LOG_LEVEL: 'debug',
    // the administrator's first organization and team only where a test asks for them (test/first-start.test.ts)
    SVC_FIRST_TEAM: 'false',
    ...options.env,
  };
  const addServer = async (): Promise<ServerProcess> => {
    const child = startSvc(['server'], env);
    try {
      const [, url] = await child.waitFor(/listening on (http:\/\/\S+)\n/, 120_000);
      const lines = () =>
        child
          .stderr()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown> & { msg?: string; time?: number });
      const announced = lines().map((l) => /^server (\S+) \(slot \d+\)$/.exec(l.msg ?? '')?.[1]).find(Boolean);
      if (!announced) throw new Error(`the server did not say its id:\n${child.stderr()}`);
      const server = { url, process: child, serverId: announced, logLines: lines };
      servers.push(server);
      return server;
    } catch (error) {
      await stopSvc(child);
      throw error;
    }
  };
  let adminKey = '';
  let adminCookie = '';
  try {
    const first = await addServer();
    const [, link] = await first.process.waitFor(/^\s+(http\S+\/sign-in#token=\S+)$/m);
    await pool.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
    const session = await new ApiClient(first.url).signInWithLink(new URL(link).hash.slice('#token='.length));
    adminKey = (await session.mintKey('administrator')).auth.token!;
    adminCookie = session.auth.cookie!;
    for (let i = 1; i < count; i++) await addServer();
  } catch (error) {
    for (const server of servers) await stopSvc(server.process);
    await pool.end();
    await database.drop();
    throw error;
  }
  return {
    database,
    dataDir,
    adminKey,
    adminCookie,
    servers,
    addServer,
    admin: (server) => new ApiClient(server.url, { token: adminKey }),
    query: async (text, values) => (await pool.query(text, values)).rows,
    async close() {
      for (const server of servers) await stopSvc(server.process);
      await endNginxLeftBehind(dataDir);
      await pool.end();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The nginx of a server killed with SIGKILL keeps running (it leads its own process group): ended here. */
async function endNginxLeftBehind(dataDir: string): Promise<void> {
  for (const name of (await readdir(dataDir)).filter((n) => /^nginx(-\d+)?\.pid$/.test(n))) {
    const pid = Number((await readFile(path.join(dataDir, name), 'utf8')).trim());
    const isNginx = async () => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).startsWith('nginx: master');
    if (!pid || !(await isNginx())) continue;
    process.kill(-pid, 'SIGKILL');
    while (await isNginx()) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
