// The landscape of a workspace over HTTP: banner states, plan, Sync with its hash, Teardown.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { stoppedWorkspace } from './helpers/workspaces.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const run = promisify(execFile);
let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let ws: number;
let volume: string;

const web = (port: number) => `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: npm start
    ports:
      - port: ${port}
        routes:
          - path: /
    env:
      DB_PASSWORD: \${{ secrets.DB_PASSWORD }}
`;

before(async () => {
  server = await startTestServer();
  const owner = await createPerson(server.admin, 'land-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Land' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Land' })).body.id;
  const developer = await createPerson(server.admin, 'land-dev@example.com');
  const watcher = await createPerson(server.admin, 'land-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  ({ id: ws, volume } = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: developer.id, name: 'land' }));
});
after(async () => server?.close());

const banner = async (query = '') => (await viewer.get(`/workspaces/${ws}/landscape${query}`)).body.banner;
const write = (text: string, name = 'svc.yml') => writeFile(path.join(volume, name), text);

async function sync(profile?: string): Promise<any> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan${profile ? `?profile=${profile}` : ''}`);
  assert.equal(plan.status, 200, plan.text);
  const answer = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash, ...(profile ? { profile } : {}) });
  assert.equal(answer.status, 202, answer.text);
  for (;;) {
    const operation = (await dev.get(`/operations/${answer.body.id}`)).body;
    if (operation.state === 'succeeded' || operation.state === 'failed') return operation;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('without a file: no landscape yet, and nothing to plan', async () => {
  assert.deepEqual(await banner(), { state: 'no-landscape', detail: 'No svc.yml in /data/app yet' });
  assertProblem(await dev.get(`/workspaces/${ws}/landscape/plan`), 409, 'conflict');
});

test('a file with errors: the banner lists them with their place; the plan is refused with 422', async () => {
  await write('schema: svc/v1\nservices:\n  web:\n    type: steps\n    stepz: []\n');
  const shown = await banner();
  assert.equal(shown.state, 'file-errors');
  assert.ok(shown.errors.some((e: { code: string; line: number }) => e.code === 'unknown-key' && e.line === 5));
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assertProblem(plan, 422, 'invalid-landscape');
  assert.ok(plan.body.errors[0].line >= 1);
});

test('plan, then Sync with its hash; a stale hash is refused with plan-changed; a plan names missing secrets and their Sync is refused', async () => {
  await write(web(3000));
  assert.equal((await banner()).state, 'no-landscape');
  const missing = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(missing.status, 200, missing.text);
  assert.deepEqual(missing.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['web', 'create']]);
  assert.deepEqual(missing.body.missing_secrets, [{ name: 'DB_PASSWORD', uses: [{ pointer: '/services/web/env/DB_PASSWORD', line: 12, column: 20 }] }]);
  for (const planHash of [missing.body.hash, 'a'.repeat(64)]) {
    const refused = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: planHash });
    assertProblem(refused, 409, 'missing-secrets');
    assert.deepEqual(refused.body.secrets, ['DB_PASSWORD']);
    assert.deepEqual(refused.body.errors, [
      { pointer: '/services/web/env/DB_PASSWORD', code: 'missing-secret', subject: 'DB_PASSWORD', message: 'secret DB_PASSWORD has no value', line: 12, column: 20 },
    ]);
  }
  await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'hunter2' });
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual(plan.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['web', 'create']]);
  assert.match(plan.body.hash, /^[0-9a-f]{64}$/);
  assert.equal(plan.body.missing_secrets, undefined);
  await write(web(3001));
  assertProblem(await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash }), 409, 'plan-changed');
  assertProblem(await viewer.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash }), 403, 'forbidden');
  const done = await sync();
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  const landscape = (await viewer.get(`/workspaces/${ws}/landscape`)).body;
  assert.equal(landscape.banner.state, 'in-sync');
  assert.equal(landscape.profile, null);
  // the workspace is stopped here: its services start when it runs (test/landscape-run.test.ts runs them)
  const [{ ports, ...service }, ...others] = landscape.services;
  assert.deepEqual([service, ...others], [
    { name: 'web', type: 'steps', status: 'stopped', detail: 'The workspace is stopped; its services start when it runs', availability: 'always', running: true, replicas: { ready: 0, desired: 1 } },
  ]);
  assert.match(ports?.[0]?.routes?.[0]?.url ?? '', new RegExp(`^http://w${ws}\\.localhost:\\d+/$`));
  assert.deepEqual(ports, [{ port: 3001, public: false, routes: [{ path: '/', strip: false, url: ports[0].routes[0].url }] }]);
  assert.ok(landscape.synced_at);
});

test('formatting only, a real change, changed variables', async () => {
  await write(`# a comment\n${web(3001).replace('schema: svc/v1', 'schema: "svc/v1"\nx-note: hello')}`);
  assert.equal((await banner()).state, 'formatting-only');
  await write(web(4000));
  assert.equal((await banner()).state, 'changed');
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.deepEqual(plan.body.services.map((s: { action: string }) => s.action), ['change']);
  await write(web(3001));
  assert.equal((await banner()).state, 'in-sync');
  await dev.put(`/workspaces/${ws}/variables/LOG_LEVEL`, { value: 'debug' });
  assert.equal((await banner()).state, 'variables-changed');
});

test('profiles: another profile than the deployed one is told; a bad profile name is 422', async () => {
  await write(web(3001), 'svc.staging.yml');
  assert.equal((await banner('?profile=staging')).state, 'other-profile');
  assertProblem(await viewer.get(`/workspaces/${ws}/landscape?profile=Bad!`), 422, 'validation');
});

test('a link named svc.yml is never followed', async () => {
  await unlink(path.join(volume, 'svc.yml'));
  await symlink('/etc/passwd', path.join(volume, 'svc.yml'));
  const shown = await banner();
  assert.equal(shown.state, 'not-comparable');
  assert.match(shown.detail, /symbolic link/);
  await unlink(path.join(volume, 'svc.yml'));
  await write(web(3001));
});

test('Teardown stops the services and keeps the rest; the next Sync brings them back', async () => {
  const answer = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal(answer.status, 202, answer.text);
  for (let state = ''; state !== 'succeeded'; ) {
    state = (await dev.get(`/operations/${answer.body.id}`)).body.state;
    assert.notEqual(state, 'failed');
  }
  const landscape = (await viewer.get(`/workspaces/${ws}/landscape`)).body;
  assert.equal(landscape.banner.state, 'torn-down');
  assert.equal(landscape.services[0].status, 'stopped');
  assertProblem(await dev.post(`/workspaces/${ws}/landscape/teardown`), 409, 'conflict');
  assert.equal((await dev.get(`/workspaces/${ws}/variables`)).body.items.length, 1);
  const again = await sync();
  assert.equal(again.state, 'succeeded');
  assert.equal((await banner()).state, 'in-sync');
});

test('a volume over its storage refuses the Sync with disk-over-quota; freeing space lets it through', async () => {
  const big = path.join(volume, 'big.bin');
  await run('fallocate', ['-l', `${1100 * 2 ** 20}`, big]);
  try {
    const refused = await sync();
    assert.equal(refused.state, 'failed');
    assert.equal(refused.error.type, 'urn:svc:problem:disk-over-quota');
    assert.match(refused.error.detail, /over its 1 GiB/);
  } finally {
    await unlink(big);
  }
  assert.equal((await sync()).state, 'succeeded');
});
