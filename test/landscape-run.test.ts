// A landscape running for real: a workspace cloned from a git repository with a svc.yml, its prepare stage, a Sync
// that starts `steps` services in their own pods (web needs api, api with two replicas, a server that keeps
// crashing), their logs, run switches, a stage refused while it runs, Teardown and sleep.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
prepare:
  - name: install the greeter
    run: |
      mkdir -p tools
      printf '#!/bin/sh\\necho hello from the greeter\\n' > tools/greet
      chmod +x tools/greet
      echo installed
test:
  - name: slow
    run: sleep 60
  - name: never reached
    run: echo never
services:
  api:
    type: steps
    replicas: 2
    steps:
      - name: build
        run: echo building api
      - run: node api.js
    ports:
      - port: 3000
    health:
      port: 3000
      path: /health
      mode: http-2xx
    env:
      GREETING: \${{ env.GREETING }}
      TOKEN: \${{ secrets.TOKEN }}
      COUNT: 2
  web:
    type: steps
    needs: [api]
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes:
          - path: /
  crash:
    type: steps
    steps:
      - run: echo about to fail; exit 3
    ports:
      - port: 5000
`;

const apiJs = `const http = require('node:http');
const os = require('node:os');
http.createServer((req, res) => {
  if (req.url === '/health') return res.end('ok');
  res.end(JSON.stringify({ from: 'api', host: os.hostname(), greeting: process.env.GREETING, token: process.env.TOKEN, count: process.env.COUNT }));
}).listen(Number(process.env.PORT), '0.0.0.0', () => console.log('api listening on ' + process.env.PORT));
`;

const webJs = `const http = require('node:http');
http.createServer((req, res) => {
  http.get('http://api:3000/', (answer) => {
    let body = '';
    answer.on('data', (c) => (body += c));
    answer.on('end', () => res.end('web saw ' + body));
  }).on('error', (e) => { res.statusCode = 502; res.end(e.message); });
}).listen(8080, '0.0.0.0');
`;

let server: TestServer;
let dev: ApiClient;
const finished = (operationId: string) => operationFinished(dev, operationId);
let viewer: ApiClient;
let repository: BareRepository;
let ws: number;
let driver: RuntimeDriver;

before(async () => {
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    // The short clock of the test: restarts after 10 ms instead of 1 s (the give-up window stays 2 minutes).
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, replicaTimings: { backoffBaseMs: 10, backoffMaxMs: 40, probeIntervalMs: 100 } })),
  });
  const owner = await createPerson(server.admin, 'run-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Run' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Run' })).body.id;
  const developer = await createPerson(server.admin, 'run-dev@example.com');
  const watcher = await createPerson(server.admin, 'run-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'api.js': apiJs, 'web.js': webJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'runs', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  await dev.put(`/workspaces/${ws}/variables/GREETING`, { value: 'hi' });
  await dev.put(`/workspaces/${ws}/secrets/TOKEN`, { value: 's3cret' });
});

after(async () => {
  await removeWorkspaces(driver, [ws]);
  await server?.close();
  await repository?.remove();
});



const landscape = async () => (await viewer.get(`/workspaces/${ws}/landscape`)).body;
const serviceOf = async (name: string) => (await landscape()).services.find((s: { name: string }) => s.name === name);
const logs = async (service: string, query = '') => (await viewer.get(`/workspaces/${ws}/landscape/services/${service}/logs${query}`)).body;
const texts = (page: { lines: { stream: string; text: string }[] }, stream?: string) =>
  page.lines.filter((l) => !stream || l.stream === stream).map((l) => l.text);

async function stageDone(stage: string): Promise<any> {
  return until(async () => {
    const current = (await viewer.get(`/workspaces/${ws}/stages/${stage}`)).body.current;
    return current && current.state !== 'running' && current.state !== 'waiting' ? current : undefined;
  }, `the ${stage} stage to end`);
}

test('prepare runs its steps in /data/app of the workspace; the step log is readable', async () => {
  assertProblem(await viewer.post(`/workspaces/${ws}/stages/prepare/start`, {}), 403, 'forbidden');
  const events = await EventStream.open(viewer);
  const started = await dev.post(`/workspaces/${ws}/stages/prepare/start`, {});
  assert.equal(started.status, 202, started.text);
  const run = await stageDone('prepare');
  const updates = await events.until('stage.updated', (d) => d.run_id === run.id && d.stage === 'prepare');
  assert.equal(updates.at(-1)!.data.workspace_id, ws);
  events.close();
  assert.equal(run.state, 'success', JSON.stringify(run));
  assert.deepEqual(run.steps.map((s: any) => [s.name, s.state, s.exit_code]), [['install the greeter', 'success', 0]]);
  const greeter = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', 'tools', 'greet');
  assert.match(await readFile(greeter, 'utf8'), /hello from the greeter/);
  const log = (await viewer.get(`/workspaces/${ws}/stages/prepare/runs/${run.id}/steps/1/logs`)).body;
  assert.deepEqual(texts(log, 'stdout'), ['installed']);
  assertProblem(await viewer.get(`/workspaces/${ws}/stages/prepare/runs/${run.id}/steps/2/logs`), 404, 'not-found');
  assertProblem(await viewer.get(`/workspaces/${ws}/stages/deploy`), 422, 'validation');
});

test('a stage is refused while it runs; stopping it aborts the step and the rest', async () => {
  const started = await dev.post(`/workspaces/${ws}/stages/test/start`, {});
  assert.equal(started.status, 202, started.text);
  await until(async () => ((await viewer.get(`/workspaces/${ws}/stages/test`)).body.current.steps[0].state === 'running' ? true : undefined), 'the step to run');
  const again = await dev.post(`/workspaces/${ws}/stages/test/start`, {});
  assertProblem(again, 409, 'stage-running');
  assert.equal(again.body.run_id, started.body.id);
  const stopped = await dev.post(`/workspaces/${ws}/stages/test/stop`);
  assert.equal(stopped.status, 200, stopped.text);
  const run = await stageDone('test');
  assert.equal(run.state, 'aborted');
  assert.equal(run.detail, 'Stopped by hand');
  assert.deepEqual(run.steps.map((s: any) => s.state), ['aborted', 'aborted']);
  assertProblem(await dev.post(`/workspaces/${ws}/stages/test/stop`), 409, 'conflict');
});

test('a volume over its size refuses prepare with disk-over-quota, as it refuses a Sync; freeing space lets it run', async () => {
  const big = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', 'big.bin');
  await promisify(execFile)('fallocate', ['-l', `${1100 * 2 ** 20}`, big]);
  try {
    const refused = await dev.post(`/workspaces/${ws}/stages/prepare/start`, {});
    assertProblem(refused, 409, 'disk-over-quota');
    assert.match(refused.body.detail, /over its 1 GiB: free space \(or raise its storage\) before running prepare/);
    const plan = (await dev.get(`/workspaces/${ws}/landscape/plan`)).body;
    const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.hash });
    assert.equal((await finished(sync.body.id)).error.type, 'urn:svc:problem:disk-over-quota');
  } finally {
    await unlink(big);
  }
  const started = await dev.post(`/workspaces/${ws}/stages/prepare/start`, {});
  assert.equal(started.status, 202, started.text);
  assert.equal((await stageDone('prepare')).state, 'success');
});

test('before a Sync no service serves /: the workspace has no dev_service; vault_id is the vault of its secrets', async () => {
  const shown = (await viewer.get(`/workspaces/${ws}`)).body;
  assert.equal('dev_service' in shown, false, JSON.stringify(shown));
  const secrets = (await dev.get(`/workspaces/${ws}/secrets`)).body;
  assert.equal(typeof shown.vault_id, 'number');
  assert.equal(shown.vault_id, secrets.vault_id);
});

test('Sync starts the services: web needs api, two api replicas, a crashing server gives up', async () => {
  const events = await EventStream.open(viewer);
  const plan = (await dev.get(`/workspaces/${ws}/landscape/plan`)).body;
  const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.hash });
  assert.equal(sync.status, 202, sync.text);
  assert.equal((await finished(sync.body.id)).state, 'succeeded');
  const api = await until(async () => {
    const service = await serviceOf('api');
    return service.status === 'internal' ? service : undefined;
  }, 'api to run');
  assert.deepEqual(api.replicas, { ready: 2, desired: 2 });
  const web = await until(async () => {
    const service = await serviceOf('web');
    return service.status === 'running' ? service : undefined;
  }, 'web to run');
  assert.deepEqual(web.replicas, { ready: 1, desired: 1 });
  assert.equal((await landscape()).dev_url.state, 'served');
  const crash = await until(async () => {
    const service = await serviceOf('crash');
    return service.status === 'failure' ? service : undefined;
  }, 'crash to give up');
  assert.equal(crash.detail, 'Giving up: exited with 3; 5 failures in 2m0s');
  // Sync itself, then the statuses as they changed
  await events.until('landscape.updated', (d) => d.workspace_id === ws);
  await events.until('landscape.updated', (d) => d.workspace_id === ws, 10_000);
  events.close();
});

test('the workspace names its dev_service: web serves /, with its state, wake time and needs', async () => {
  const shown = (await viewer.get(`/workspaces/${ws}`)).body;
  assert.deepEqual({ ...shown.dev_service, wake_seconds: undefined }, { name: 'web', state: 'running', wake_seconds: undefined, needs: ['api'], failing_needs: [] });
  assert.ok(Number.isInteger(shown.dev_service.wake_seconds) && shown.dev_service.wake_seconds >= 1, JSON.stringify(shown.dev_service));
});

test('each api replica answers on its own address, with the env filled at Sync; web reaches api by its name', async () => {
  const replicas = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).filter((r) => r.service === 'api');
  assert.equal(replicas.length, 2);
  assert.notEqual(replicas[0].address!.host, replicas[1].address!.host);
  for (const replica of replicas) {
    const answer = JSON.parse(await (await fetch(`http://${replica.address!.host}:3000/`)).text());
    assert.deepEqual({ ...answer, host: undefined }, { from: 'api', host: undefined, greeting: 'hi', token: 's3cret', count: '2' });
  }
  const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web')!;
  const page = await (await fetch(`http://${web.address!.host}:8080/`)).text();
  assert.match(page, /^web saw \{"from":"api"/);
});

test('logs: the needs wait, steps and restarts as `system` lines, the services own output as stdout', async () => {
  const web = await logs('web');
  assert.deepEqual(texts(web, 'system').filter((t) => /api/.test(t)), ['Waiting for api (up to 5m0s)', 'api answered, starting']);
  const api = await logs('api', '?replica=1');
  assert.ok(texts(api, 'stdout').includes('building api'), JSON.stringify(api));
  assert.ok(texts(api, 'stdout').includes('api listening on 3000'));
  const crash = texts(await logs('crash'), 'system');
  assert.equal(crash.filter((t) => /^Server exited with code 3; restarting in/.test(t)).length, 4, crash.join('\n'));
  assert.equal(crash.at(-1), 'Giving up: exited with 3; 5 failures in 2m0s');
  const tail = await logs('crash', '?tail=1');
  assert.deepEqual(texts(tail), ['Giving up: exited with 3; 5 failures in 2m0s']);
  const after = await logs('crash', `?since=${tail.next_since}`);
  assert.deepEqual(after.lines, []);
  assertProblem(await viewer.get(`/workspaces/${ws}/landscape/services/api/logs?replica=2`), 404, 'not-found');
  assertProblem(await viewer.get(`/workspaces/${ws}/landscape/services/nope/logs`), 404, 'not-found');
});

test('follow streams the log as JSON lines', async () => {
  const controller = new AbortController();
  const answer = await fetch(`${server.url}/api/v1/workspaces/${ws}/landscape/services/web/logs?follow=true`, {
    headers: { authorization: `Bearer ${viewer.auth.token}` },
    signal: controller.signal,
  });
  assert.equal(answer.status, 200);
  assert.match(answer.headers.get('content-type')!, /application\/x-ndjson/);
  const reader = answer.body!.getReader();
  let text = '';
  while (!text.includes('api answered, starting')) text += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
  assert.equal(JSON.parse(text.split('\n')[0]).stream, 'system');
});

test('the run switch: Stop stops a service for good, Start brings it back', async () => {
  assertProblem(await viewer.post(`/workspaces/${ws}/landscape/services/web/stop`), 403, 'forbidden');
  const stopped = await dev.post(`/workspaces/${ws}/landscape/services/web/stop`);
  assert.equal(stopped.status, 200, stopped.text);
  assert.equal(stopped.body.status, 'stopped');
  assert.equal(stopped.body.running, false);
  assert.equal((await serviceOf('web')).status, 'stopped');
  const started = await dev.post(`/workspaces/${ws}/landscape/services/web/start`);
  assert.equal(started.status, 200, started.text);
  await until(async () => ((await serviceOf('web')).status === 'running' ? true : undefined), 'web to run again');
  assertProblem(await dev.post(`/workspaces/${ws}/landscape/services/nope/start`), 404, 'not-found');
});

test('Teardown stops every service and keeps files, variables and secrets', async () => {
  const teardown = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  const shown = await landscape();
  assert.equal(shown.banner.state, 'torn-down');
  assert.deepEqual([shown.dev_url.state, shown.dev_url.detail], ['not-served', 'Nothing is served at / yet']);
  assert.equal((await viewer.get(`/workspaces/${ws}`)).body.dev_service, undefined);
  assert.deepEqual(shown.services.map((s: any) => s.status), ['stopped', 'stopped', 'stopped']);
  const replicas = await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 });
  assert.ok(replicas.every((r) => r.status === 'stopped'), JSON.stringify(replicas));
  assert.deepEqual((await dev.get(`/workspaces/${ws}/secrets`)).body.items.map((s: any) => s.name), ['TOKEN']);
  assert.deepEqual((await dev.get(`/workspaces/${ws}/variables`)).body.items.map((s: any) => s.name), ['GREETING']);
  await readFile(path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', 'tools', 'greet'));
});

test('going to sleep aborts a running stage; stages need a running workspace', async () => {
  const started = await dev.post(`/workspaces/${ws}/stages/test/start`, {});
  assert.equal(started.status, 202, started.text);
  await until(async () => ((await viewer.get(`/workspaces/${ws}/stages/test`)).body.current.steps[0].state === 'running' ? true : undefined), 'the step to run');
  const slept = await dev.post(`/workspaces/${ws}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  const run = await stageDone('test');
  assert.equal(run.state, 'aborted');
  assert.equal(run.detail, 'The workspace went to sleep');
  assertProblem(await dev.post(`/workspaces/${ws}/stages/prepare/start`, {}), 409, 'workspace-not-running');
});
