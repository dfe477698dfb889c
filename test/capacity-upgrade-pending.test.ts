// `upgrade_pending` (spec 2.3, issue 19): a workspace whose editor pod runs on a pod template older than the one a
// start would use now (here: the plans file gave its plan more memory, then the server restarted) shows it on GET
// and in workspace.updated events, and switches over at its next sleep: woken again, its pod has the new limits.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ManualClock } from '../src/core/clock.ts';
import { loadServerConfig } from '../src/core/config.ts';
import { cgroupNames, hostCgroups } from '../src/runtime/local/cgroups.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { EventStream } from './helpers/events.ts';
import { PLANS_FILE } from './helpers/plans.ts';
import { TEST_VOLUME_BACKEND } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const cgroups = hostCgroups(process.getuid?.() === 0);
let database: TestDatabase;
let dataDir: string;
let server: RunningServer | undefined;
const ids: number[] = [];

async function start(plans: string): Promise<RunningServer> {
  const file = path.join(dataDir, 'plans.yml');
  await writeFile(file, plans);
  const config = loadServerConfig(['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '0', '--plans-file', file], {
    DATABASE_URL: database.url,
    SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'),
    SVC_DATA_PLANE: 'node',
    SVC_VOLUME_BACKEND: TEST_VOLUME_BACKEND,
  });
  return startServer({ ...config, logLevel: 'silent' }, { clock: new ManualClock(new Date()), logger: false });
}

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-upgrade-'));
});
after(async () => {
  await server?.close();
  await removeWorkspaces(createLocalDriver({ dataDir }), ids);
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The memory limit of the workspace's editor pod's cgroup, in MiB. */
async function editorMemoryMiB(id: number): Promise<number> {
  const name = cgroupNames(dataDir).editor(id);
  const file = cgroups!.version === 1 ? path.join('/sys/fs/cgroup/memory', name, 'memory.limit_in_bytes') : path.join('/sys/fs/cgroup', name, 'memory.max');
  return Number(await readFile(file, 'utf8')) / 2 ** 20;
}

test('upgrade_pending: set after a restart with another pod template, cleared when the next wake uses the new one', { skip: !cgroups && 'needs root and cgroups (the plan limits are part of the pod template)' }, async () => {
  server = await start(PLANS_FILE);
  await server.database.pool.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const session = await new ApiClient(server.url).signInWithLink(new URL(server.firstSignInLink!).hash.replace('#token=', ''));
  const key = await session.mintKey();
  const org = (await key.post('/orgs', { name: 'Upgrades' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Upgrades' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'steady' });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  ids.push(id);
  assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  const read = async (client: ApiClient) => (await client.get(`/workspaces/${id}`)).body;
  assert.deepEqual([(await read(key)).state, (await read(key)).upgrade_pending], ['running', false]);
  assert.equal(await editorMemoryMiB(id), 3072);

  // A restart with the same template changes nothing.
  await server.close();
  server = await start(PLANS_FILE);
  let client = new ApiClient(server.url, key.auth);
  assert.deepEqual([(await read(client)).state, (await read(client)).upgrade_pending], ['running', false]);

  // The operator gives the plan more memory: the running pod keeps its limits and shows the pending switch.
  await server.close();
  server = await start(PLANS_FILE.replace('dev: { title: Development, cpu: 1.5, memory: 3GiB', 'dev: { title: Development, cpu: 1.5, memory: 4GiB'));
  client = new ApiClient(server.url, key.auth);
  const pending = await read(client);
  assert.deepEqual([pending.state, pending.upgrade_pending], ['running', true]);
  assert.equal(await editorMemoryMiB(id), 3072, 'nothing restarts on its own');

  const events = await EventStream.open(new ApiClient(server.url, session.auth));
  await events.next('ready');
  const slept = await client.post(`/workspaces/${id}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  assert.deepEqual([slept.body.state, slept.body.upgrade_pending], ['sleeping', false]);
  const wake = await client.post(`/workspaces/${id}/wake`);
  assert.equal(wake.status, 202, wake.text);
  assert.equal((await operationFinished(client, wake.body.id)).state, 'succeeded');
  const running = await events.next('workspace.updated', (e) => e.workspace_id === id && e.workspace.state === 'running', 60_000);
  assert.equal(running.data.workspace.upgrade_pending, false);
  assert.equal((await read(client)).upgrade_pending, false);
  assert.equal(await editorMemoryMiB(id), 4096, 'the new pod has the new limits');
  await until(async () => ((await read(client)).state === 'running' ? true : undefined), 'the workspace to run');
  events.close();
});
