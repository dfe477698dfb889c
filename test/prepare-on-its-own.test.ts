// `prepare` runs on its own (issue 34, item 5), through the real server, real pods and git: once after a workspace's
// clone when its svc.yml declares steps (Stages shows the run, trigger `clone`; the creation ends after it, so what
// it made is there), a failing one named in the workspace's status text while it runs on, a Sync that runs prepare
// again only when its steps changed since their last success (or none succeeded yet), and a workspace without
// prepare steps that runs none. Pods have no outbound network: prepare does local work (writes files).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc, startSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const skip = process.getuid?.() !== 0 ? 'needs root: pods' : false;

const goodYml = `schema: svc/v1
prepare:
  - name: Install
    run: mkdir -p deps && echo installed > deps/marker && echo "prepare ran as $(id -u)"
services:
  web:
    type: steps
    steps:
      - run: cat deps/marker && node -e "require('node:http').createServer((q, s) => s.end('up')).listen(8080, '0.0.0.0')"
    ports:
      - port: 8080
`;
const failingYml = `schema: svc/v1
prepare:
  - name: Install
    run: echo "no registry here" >&2; exit 3
  - name: Build
    run: echo never
`;
const plainYml = `schema: svc/v1
services: {}
`;

let server: TestServer;
let driver: RuntimeDriver;
let dev: ApiClient;
let team: number;
const repositories: BareRepository[] = [];
const workspaces: number[] = [];
let svcEnv: Record<string, string>;

before(async () => {
  if (skip) return;
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'prep-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Prep' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Prep' })).body.id;
  const developer = await createPerson(server.admin, 'prep-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  dev = developer.key;
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token! };
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, workspaces);
  await server?.close();
  for (const repository of repositories) await repository.remove();
});

/** Creates a workspace from a repository holding `yml` as svc.yml; its id and the ended creation. */
async function create(name: string, yml: string): Promise<{ ws: number; operation: any }> {
  const repository = await createBareRepository({ 'svc.yml': yml });
  repositories.push(repository);
  const created = await dev.post('/workspaces', { team_id: team, name, storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  const ws = Number(created.body.target.split('/')[2]);
  workspaces.push(ws);
  return { ws, operation: await operationFinished(dev, created.body.id) };
}

const prepareOf = async (ws: number) => (await dev.get(`/workspaces/${ws}/stages/prepare`)).body;

async function sync(ws: number): Promise<any> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  return operationFinished(dev, started.body.id);
}

/** Replaces svc.yml in the workspace's code, as someone editing it would. */
async function writeSvcYml(ws: number, text: string): Promise<void> {
  const run = startSvc(['exec', '-i', String(ws), '--', 'sh', '-c', 'cat > svc.yml'], svcEnv);
  run.child.stdin.end(text);
  assert.equal(await run.exited, 0, run.stderr());
}

let good: number;

test('prepare runs by itself after the clone: Stages shows the run (trigger clone), and what it made is there when the creation ends', { skip }, async () => {
  const { ws, operation } = await create('prepared', goodYml);
  good = ws;
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  const stage = await prepareOf(ws);
  assert.equal(stage.runs.length, 1);
  assert.deepEqual(
    { state: stage.current.state, trigger: stage.current.trigger, started_by: stage.current.started_by, steps: stage.current.steps.map((s: any) => [s.name, s.state, s.exit_code]) },
    { state: 'success', trigger: 'clone', started_by: dev.auth.userId, steps: [['Install', 'success', 0]] },
  );
  const log = (await dev.get(`/workspaces/${ws}/stages/prepare/runs/${stage.current.id}/steps/1/logs`)).body;
  assert.match(JSON.stringify(log), /prepare ran as \d+/);
  const marker = await runSvc(['exec', String(ws), '--', 'cat', 'deps/marker'], svcEnv);
  assert.deepEqual([marker.code, marker.stdout], [0, 'installed\n'], marker.stderr);
  const workspace = (await dev.get(`/workspaces/${ws}`)).body;
  assert.deepEqual([workspace.state, workspace.status_detail], ['running', 'Workspace is running']);
});

test('a Sync with the same prepare steps runs no prepare; changed steps run it first, trigger sync', { skip }, async () => {
  const first = await sync(good);
  assert.equal(first.state, 'succeeded', JSON.stringify(first));
  assert.doesNotMatch(first.detail, /prepare/);
  assert.equal((await prepareOf(good)).runs.length, 1);

  await writeSvcYml(good, goodYml.replace('echo installed > deps/marker', 'echo installed again > deps/marker'));
  const second = await sync(good);
  assert.equal(second.state, 'succeeded', JSON.stringify(second));
  assert.match(second.detail, /prepare ran first/);
  const stage = await prepareOf(good);
  assert.deepEqual([stage.runs.length, stage.current.trigger, stage.current.state], [2, 'sync', 'success']);
  const marker = await runSvc(['exec', String(good), '--', 'cat', 'deps/marker'], svcEnv);
  assert.equal(marker.stdout, 'installed again\n');
});

test('a failing prepare is named in the status text while the workspace runs; a Sync tries again and a success clears it', { skip }, async () => {
  const { ws, operation } = await create('unprepared', failingYml);
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  assert.equal(operation.detail, 'Workspace is running; prepare failed: Install: exit 3 (see Stages)');
  const workspace = (await dev.get(`/workspaces/${ws}`)).body;
  assert.deepEqual([workspace.state, workspace.status_detail], ['running', 'Workspace is running; prepare failed: Install: exit 3 (see Stages)']);
  const stage = await prepareOf(ws);
  assert.deepEqual(
    { state: stage.current.state, trigger: stage.current.trigger, steps: stage.current.steps.map((s: any) => [s.name, s.state]) },
    { state: 'failure', trigger: 'clone', steps: [['Install', 'failure'], ['Build', 'skipped']] },
  );
  // the same steps again at a Sync: prepare never succeeded, so it runs (and fails) again; the Sync itself succeeds
  const again = await sync(ws);
  assert.equal(again.state, 'succeeded', JSON.stringify(again));
  assert.deepEqual([(await prepareOf(ws)).runs.length, (await prepareOf(ws)).current.trigger], [2, 'sync']);

  await writeSvcYml(ws, failingYml.replace('echo "no registry here" >&2; exit 3', 'echo fixed'));
  assert.equal((await sync(ws)).state, 'succeeded');
  assert.equal((await prepareOf(ws)).current.state, 'success');
  assert.equal((await dev.get(`/workspaces/${ws}`)).body.status_detail, 'Workspace is running');
});

test('a svc.yml without prepare steps runs no prepare at the clone', { skip }, async () => {
  const { ws, operation } = await create('plain', plainYml);
  assert.equal(operation.state, 'succeeded');
  const stage = await prepareOf(ws);
  assert.deepEqual([stage.current, stage.runs], [null, []]);
});
