// A real landscape with a managed PostgreSQL `db` and a `steps` service `web` that answers query results over HTTP
// through `${{ services.db.dsn }}`, in a workspace of a team with a developer and an outsider (a member of another
// team). Needs root (the service network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { instanceCgroup, managedInstanceDir, stopInstanceProcess } from '../../src/managed/instance-process.ts';
import { installedPostgresMajors } from '../../src/managed/postgres-instance.ts';
import { hostCgroups } from '../../src/runtime/local/cgroups.ts';
import type { RuntimeDriver } from '../../src/runtime/driver.ts';
import { DEFAULT_TOOLS_DIR } from '../../src/runtime/local/editor-tools.ts';
import { createLocalDriver, type LocalDriverOptions } from '../../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './client.ts';
import { createBareRepository, type BareRepository } from './git.ts';
import { startTestServer, type TestServer } from './server.ts';
import { operationFinished, until } from './wait.ts';
import { removeWorkspaces } from './workspaces.ts';

export const postgresToolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;

/** Why the tests cannot run here, or false. */
export const managedSkip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : (await installedPostgresMajors(postgresToolsDir)).includes(16)
      ? false
      : `PostgreSQL 16 is not installed in ${postgresToolsDir}; run scripts/setup-postgres.sh`;

export const webService = `  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DSN: \${{ services.db.dsn }}
`;

export const managedSvcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    secrets:
      password: \${{ secrets.DB_PASSWORD }}
${webService}`;

// psql from the host's /usr (bound read-only in pods); the DSN reaches db by its name on the service network.
const webJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
const sql = { '/write': "CREATE TABLE IF NOT EXISTS notes (body text); INSERT INTO notes VALUES ('kept')", '/': 'SELECT count(*) FROM notes' };
http.createServer((req, res) => {
  execFile('psql', [process.env.DSN, '-tAc', sql[req.url] ?? 'SELECT 1'], (error, stdout, stderr) => {
    res.statusCode = error ? 500 : 200;
    res.end(error ? stderr || error.message : stdout.trim());
  });
}).listen(8080, '0.0.0.0');
`;

export interface ManagedLandscape {
  server: TestServer;
  driver: RuntimeDriver;
  /** The tools directory the server uses (PostgreSQL only). */
  tools: string;
  team: number;
  ws: number;
  dev: ApiClient;
  outsider: ApiClient;
  /** The outsider's own team. */
  outsiderTeam: number;
  /** Plans and syncs the workspace's landscape; asserts the operation succeeded. */
  sync(): Promise<void>;
  /** Plans and syncs the workspace's landscape; answers the operation once it ended, whatever its state. */
  trySync(): Promise<any>;
  /** web's answer for `urlPath` (200), once it answers. */
  ask(urlPath: string): Promise<string>;
  /** web's answer for `urlPath` as status and text, once web's replica runs. */
  askRaw(urlPath: string): Promise<{ status: number; text: string }>;
  finished(operationId: string): Promise<any>;
  close(): Promise<void>;
}

/**
 * Ends the managed instances of a test server's data directory and removes their cgroups: they outlive the server
 * (as they outlive a restart in production), so a test ends them before it removes the data directory.
 */
export async function removeManagedInstances(dataDir: string): Promise<void> {
  const host = { dataDir, toolsDir: '', log: () => undefined, cgroups: hostCgroups(process.getuid?.() === 0) };
  for (const id of await readdir(path.join(dataDir, 'managed')).catch(() => [] as string[])) {
    if (/^\d+$/.test(id)) await stopInstanceProcess(managedInstanceDir(dataDir, Number(id)), Number(id), 'SIGINT', 10_000, 1000, instanceCgroup(host, Number(id)));
  }
}

/**
 * A test server with the local driver whose tools directory holds only PostgreSQL (the editor stays the built-in one,
 * quick to start), cloning local repositories. Remove `tools` when done. `driverOptions` go to the local driver
 * (`podDns`: the resolver of an internet host).
 */
export async function startManagedServer(
  env: Record<string, string> = {},
  onLog?: (message: string) => void,
  driverOptions: Partial<Omit<LocalDriverOptions, 'dataDir' | 'clock'>> = {},
): Promise<{ server: TestServer; driver: RuntimeDriver; tools: string }> {
  const tools = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(postgresToolsDir, 'postgres'), path.join(tools, 'postgres'));
  let driver!: RuntimeDriver;
  const server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TOOLS_DIR: tools, ...env },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ ...driverOptions, dataDir, clock })),
    ...(onLog && { onLog }),
  });
  return { server, driver, tools };
}

/** `onLog` receives the server's log messages (info and above). */
export async function startManagedLandscape(options: { env?: Record<string, string>; onLog?: (message: string) => void } = {}): Promise<ManagedLandscape> {
  const { server, driver, tools } = await startManagedServer(options.env, options.onLog);
  const owner = await createPerson(server.admin, 'ms-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Managed' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Managed' })).body.id;
  const outsiderTeam = (await owner.key.post('/teams', { org_id: org, name: 'Elsewhere' })).body.id;
  const developer = await createPerson(server.admin, 'ms-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  const outsiderPerson = await createPerson(server.admin, 'ms-outsider@example.com');
  await owner.key.put(`/teams/${outsiderTeam}/members/${outsiderPerson.id}`, { role: 'admin' });
  const dev = developer.key;
  const repository: BareRepository = await createBareRepository({ 'svc.yml': managedSvcYml, 'web.js': webJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'managed', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  const ws = Number(created.body.target.split('/')[2]);
  const finished = (operationId: string) => operationFinished(dev, operationId);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'p@ss word' });

  const askRaw = (urlPath: string) =>
    until(async () => {
      const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
      if (!web?.address) return undefined;
      const answer = await fetch(`http://${web.address.host}:8080${urlPath}`).catch(() => undefined);
      return answer && { status: answer.status, text: await answer.text() };
    }, `web to answer ${urlPath}`);
  const trySync = async () => {
    const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
    assert.equal(plan.status, 200, plan.text);
    const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
    assert.equal(started.status, 202, started.text);
    return finished(started.body.id);
  };
  return {
    server, driver, tools, team, ws, dev, outsider: outsiderPerson.key, outsiderTeam, finished, askRaw, trySync,
    async sync() {
      const done = await trySync();
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
    },
    async ask(urlPath) {
      return until(async () => {
        const answer = await askRaw(urlPath);
        return answer.status === 200 ? answer.text : undefined;
      }, `web to answer ${urlPath} with 200`);
    },
    async close() {
      await removeWorkspaces(driver, [ws]);
      await removeManagedInstances(server.server.config.dataDir);
      await server.close();
      await repository.remove();
      await rm(tools, { recursive: true, force: true });
    },
  };
}

/** `web`: psql from the host's /usr (bound read-only in pods) answers the query in ?sql= through the DSN in `DSN`. */
export const sqlWebJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
http.createServer((req, res) => {
  const sql = new URL(req.url, 'http://web').searchParams.get('sql') ?? 'SELECT 1';
  execFile('psql', [process.env.DSN, '-tAc', sql], (error, stdout, stderr) => {
    res.statusCode = error ? 500 : 200;
    res.end(error ? stderr || error.message : stdout.trim());
  });
}).listen(8080, '0.0.0.0');
`;
