// A managed landscape that outlives restarts of its server: one database, data directory, tools directory (PostgreSQL
// only) and repository (`web` answering SQL through db's DSN, sqlWebJs) kept while a test stops the server and starts
// it again with other settings. Needs root and scripts/setup-postgres.sh's PostgreSQL 16 (see managedSkip).
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLocalDriver } from '../../src/runtime/local/index.ts';
import { ApiClient } from './client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { createBareRepository, type BareRepository } from './git.ts';
import { postgresToolsDir, removeManagedInstances, sqlWebJs } from './managed-landscape.ts';
import { startSvc, stopSvc, type SvcProcess } from './process.ts';
import { operationFinished, until } from './wait.ts';
import { removeWorkspaces } from './workspaces.ts';

export interface ManagedRestarts {
  database: TestDatabase;
  dataDir: string;
  tools: string;
  repository: BareRepository;
  /** The workspace under test and its team, once `createWorkspace` made them (`close` removes its pods and instances). */
  ws?: number;
  team?: number;
  /** The `svc server` process `startProcess` started last. */
  running?: SvcProcess;
  /**
   * Starts `svc server` as its own process on the database and data directory (data plane node, local repositories
   * allowed, `env` added); answers its URL once it listens.
   */
  startProcess(env?: Record<string, string>): Promise<string>;
  /** Stops the process `startProcess` started (SIGTERM, as an operator does). */
  stopProcess(): Promise<void>;
  /** Rows of `sql` on the test database, read on a connection of its own. */
  query<T extends pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<T[]>;
  /** A key of the first administrator of the process `startProcess` started first, answering at `url`. */
  adminKey(url: string): Promise<ApiClient>;
  /**
   * Creates an org and a team called `name` and in it the workspace `workspace` of the repository (its ids from the
   * database's own block: pods are named by workspace id on the one machine), and syncs its landscape.
   */
  createWorkspace(key: ApiClient, name: string, workspace: string): Promise<{ team: number; ws: number }>;
  /** db as the API shows it to `client`. */
  instance(client: ApiClient): Promise<any>;
  /** Plans and syncs the landscape of `ws`; asserts the operation succeeded. */
  sync(key: ApiClient): Promise<void>;
  /** What the database answers to `sql`, asked by web through its DSN (once web runs and db answers). */
  ask(sql: string, timeoutMs?: number): Promise<string>;
  /** Stops the process, removes the workspace's pods and managed instances, the repository, database and directories. */
  close(): Promise<void>;
}

/** `name` names the data directory; `files` is the repository (web.js is added). */
export async function prepareManagedRestarts(name: string, files: Record<string, string>): Promise<ManagedRestarts> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `svc-${name}-`));
  const tools = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-tools-'));
  await chmod(tools, 0o755); // the instances' UID reaches the binaries through it
  await symlink(path.join(postgresToolsDir, 'postgres'), path.join(tools, 'postgres'));
  const repository = await createBareRepository({ ...files, 'web.js': sqlWebJs });

  const fixture: ManagedRestarts = {
    database,
    dataDir,
    tools,
    repository,
    async startProcess(env = {}) {
      fixture.running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--data-plane', 'node', '--allow-local-repositories', 'true'], {
        DATABASE_URL: database.url,
        SVC_TOOLS_DIR: tools,
        ...env,
      });
      const [, url] = await fixture.running.waitFor(/listening on (\S+)\n/, 60_000);
      return url;
    },
    stopProcess: () => stopSvc(fixture.running),
    async query<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return (await client.query<T>(sql, values)).rows;
      } finally {
        await client.end();
      }
    },
    async adminKey(url) {
      const [, link] = await fixture.running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
      return (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey();
    },
    async createWorkspace(key, name, workspace) {
      await fixture.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
      const org = (await key.post('/orgs', { name })).body.id;
      const team = (fixture.team = (await key.post('/teams', { org_id: org, name })).body.id as number);
      const created = await key.post('/workspaces', { team_id: team, name: workspace, storage_gib: 1, git: { provider: 'git', repo: repository.url } });
      assert.equal(created.status, 202, created.text);
      const ws = (fixture.ws = Number(created.body.target.split('/')[2]));
      assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
      await fixture.sync(key);
      return { team, ws };
    },
    async instance(client) {
      return (await client.get(`/teams/${fixture.team}/managed-services?workspace=${fixture.ws}`)).body.items[0];
    },
    async sync(key) {
      const plan = await key.get(`/workspaces/${fixture.ws}/landscape/plan`);
      assert.equal(plan.status, 200, plan.text);
      const started = await key.post(`/workspaces/${fixture.ws}/landscape/sync`, { plan_hash: plan.body.hash });
      assert.equal(started.status, 202, started.text);
      const done = await operationFinished(key, started.body.id);
      assert.equal(done.state, 'succeeded', JSON.stringify(done));
    },
    ask(sql, timeoutMs) {
      const driver = createLocalDriver({ dataDir });
      return until(async () => {
        const web = (await driver.replicaStates({ id: fixture.ws!, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
        if (!web?.address) return undefined;
        const answer = await fetch(`http://${web.address.host}:8080/?sql=${encodeURIComponent(sql)}`).catch(() => undefined);
        return answer?.status === 200 ? answer.text() : undefined;
      }, `the database to answer ${sql}`, timeoutMs);
    },
    async close() {
      await fixture.stopProcess();
      await removeWorkspaces(createLocalDriver({ dataDir }), [fixture.ws]);
      await removeManagedInstances(dataDir); // a test purges its workspace; this is for one that failed before
      await repository.remove();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
      await rm(tools, { recursive: true, force: true });
    },
  };
  return fixture;
}
