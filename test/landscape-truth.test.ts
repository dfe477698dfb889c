// Plan tells the whole truth, on a running workspace: a variable or secret change is a change of the services whose
// environment it fills (named, never shown), and Sync restarts exactly those; an unset ${{ env.X }} is an error at
// its place in the file; saving svc.yml in the workspace sends landscape.updated and the banner moves at once (shown
// on a second workspace whose landscape has no service, so that no status change stands in for the file's event).
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  api:
    type: steps
    steps:
      - run: echo "greeting is $GREETING"; exec sleep 3600
    env:
      GREETING: \${{ env.GREETING }}
      APP_KEY: \${{ secrets.APP_KEY }}
      MODE: fixed
  web:
    type: steps
    steps:
      - run: exec sleep 3600
`;

/** A landscape without services: nothing but Sync and its file sends landscape.updated for it. */
const quietYml = 'schema: svc/v1\nprepare:\n  - run: echo ready\n';

let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let repository: BareRepository;
let quietRepository: BareRepository;
let team: number;
let ws: number;
let quiet: number | undefined;
let volume: string;

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  const owner = await createPerson(server.admin, 'truth-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Truth' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Truth' })).body.id;
  const developer = await createPerson(server.admin, 'truth-dev@example.com');
  const watcher = await createPerson(server.admin, 'truth-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  repository = await createBareRepository({ 'svc.yml': svcYml });
  quietRepository = await createBareRepository({ 'svc.yml': quietYml });
  const created = await dev.post('/workspaces', { team_id: team, name: 'truth', git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
  volume = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app');
  await dev.put(`/workspaces/${ws}/variables/GREETING`, { value: 'hello' });
  await dev.put(`/workspaces/${ws}/secrets/APP_KEY`, { value: 'first-key-c4f1' });
});

after(async () => {
  await removeWorkspaces(server.server.driver, [ws, quiet]);
  await server?.close();
  await repository?.remove();
  await quietRepository?.remove();
});

const plan = () => dev.get(`/workspaces/${ws}/landscape/plan`);
const banner = async () => (await viewer.get(`/workspaces/${ws}/landscape`)).body.banner;

async function sync(hash: string): Promise<any> {
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: hash });
  assert.equal(started.status, 202, started.text);
  return operationFinished(dev, started.body.id);
}

async function apiLogShows(text: string): Promise<void> {
  await until(async () => {
    const log = (await viewer.get(`/workspaces/${ws}/landscape/services/api/logs`)).body;
    return log.lines?.some((line: { text: string }) => line.text === text) ? true : undefined;
  }, `the api log to show "${text}"`);
}

test('after a variable and a secret change, Plan lists the service whose environment changes by name, never by value, and Sync restarts it', async () => {
  const first = await plan();
  assert.equal(first.status, 200, first.text);
  assert.equal((await sync(first.body.hash)).state, 'succeeded');
  await apiLogShows('greeting is hello');
  assert.equal((await plan()).body.changed, false);

  await dev.put(`/workspaces/${ws}/variables/GREETING`, { value: 'hello again' });
  const greeting = await plan();
  assert.deepEqual(greeting.body.services.map((s: { name: string; environment: string[] }) => [s.name, s.environment]), [['api', ['GREETING']]]);
  // The plan shown is the plan applied: a secret changed after it changes what Sync would restart, so Sync refuses.
  await dev.put(`/workspaces/${ws}/secrets/APP_KEY`, { value: 'second-key-9d2e' });
  assertProblem(await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: greeting.body.hash }), 409, 'plan-changed');

  const changed = await plan();
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.changed, true);
  assert.deepEqual(changed.body.services, [
    {
      name: 'api',
      action: 'change',
      type: 'steps',
      changes: ['/services/api/env/APP_KEY', '/services/api/env/GREETING'],
      environment: ['APP_KEY', 'GREETING'],
      restarts: true,
    },
  ]);
  assert.deepEqual(changed.body.unchanged, ['web']);
  for (const value of ['hello again', 'second-key-9d2e', 'first-key-c4f1']) assert.ok(!changed.text.includes(value), `the plan shows ${value}`);
  assert.equal((await banner()).state, 'variables-changed');
  const done = await sync(changed.body.hash);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.match(JSON.stringify(done), /Synced; 1 service\(s\) changed/);
  await apiLogShows('greeting is hello again');
  assert.equal((await plan()).body.changed, false);
  assert.equal((await banner()).state, 'in-sync');
});

test('saving svc.yml in the workspace sends landscape.updated by itself, and the banner then says it changed', async () => {
  const events = await EventStream.open(viewer);
  const fileVolume = () => path.join(server.server.config.dataDir, 'volumes', String(quiet), 'app', 'svc.yml');
  const next = async (what: string): Promise<void> => {
    try {
      await events.until('landscape.updated', (d) => d.workspace_id === quiet, 60_000);
    } catch (error) {
      const agent = await server.server.driver.landscapeFilesFingerprint({ id: quiet!, uid: 0, storageGib: 0 });
      throw new Error(`${what}: ${(error as Error).message}; the agent reports ${agent}`);
    }
  };
  const quietBanner = async () => (await viewer.get(`/workspaces/${quiet}/landscape`)).body.banner;
  try {
    await events.until('ready');
    const created = await dev.post('/workspaces', { team_id: team, name: 'quiet', git: { provider: 'git', repo: quietRepository.url } });
    assert.equal(created.status, 202, created.text);
    quiet = Number(created.body.target.split('/')[2]);
    assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
    // The first fingerprint the server reads of a running workspace is announced (it may have changed unseen).
    await next('the first reading');
    const planned = await dev.get(`/workspaces/${quiet}/landscape/plan`);
    const started = await dev.post(`/workspaces/${quiet}/landscape/sync`, { plan_hash: planned.body.hash });
    assert.equal((await operationFinished(dev, started.body.id)).state, 'succeeded');
    await next('the Sync');
    assert.equal((await quietBanner()).state, 'in-sync');

    // Nothing but the file sends landscape.updated from here on: no service, no request.
    await writeFile(fileVolume(), `${quietYml}test:\n  - run: echo edited\n`);
    await next('writing svc.yml');
    assert.deepEqual(await quietBanner(), { state: 'changed', detail: 'svc.yml changed since the last Sync' });
    // An editor's save: a new file renamed over the old one, here putting back what was synced.
    await writeFile(`${fileVolume()}.tmp`, quietYml);
    await rename(`${fileVolume()}.tmp`, fileVolume());
    await next('a save by rename');
    assert.equal((await quietBanner()).state, 'in-sync');
  } finally {
    events.close();
  }
});

test('an unset ${{ env.X }} is refused at Plan and at Sync with its place in the file', async () => {
  await writeFile(path.join(volume, 'svc.yml'), svcYml.replace('MODE: fixed', 'MODE: ${{ env.NOT_SET }}'));
  const refused = await plan();
  assertProblem(refused, 422, 'invalid-landscape');
  assert.deepEqual(refused.body.errors, [
    {
      pointer: '/services/api/env/MODE',
      code: 'missing-variable',
      subject: 'NOT_SET',
      message: '${{ env.NOT_SET }} has no value: the workspace has no variable NOT_SET; set it (it may be empty) and plan again',
      line: 10,
      column: 13,
    },
  ]);
  assertProblem(await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: 'a'.repeat(64) }), 422, 'invalid-landscape');
  await dev.put(`/workspaces/${ws}/variables/NOT_SET`, { value: '' });
  const planned = await plan();
  assert.equal(planned.status, 200, planned.text);
  assert.deepEqual(planned.body.services.map((s: { name: string; environment: string[] }) => [s.name, s.environment]), [['api', ['MODE']]]);
});
