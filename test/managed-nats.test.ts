// A managed NATS bound to a real landscape, and its managed-service host through the real router: Sync creates
// it on the workspace's service network, a `steps` service reaches it by `${{ services.mq.dsn }}` and keeps a
// JetStream message across Teardown and Sync; ms-<number>.<domain> refuses a request without sign-in, answers the
// monitoring JSON with a team key (or the host's cookie), and gives the paused, starting, did-not-answer and
// nothing-here pages. Needs root and Debian's nats-server.
import assert from 'node:assert/strict';
import http from 'node:http';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { isNatsInstanceRunning, installedNatsMajor, stopNatsInstance } from '../src/managed/nats-instance.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { setManagedServiceStatus } from '../src/store/managed-services.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { nodePackageFiles } from './helpers/node-packages.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { removeManagedInstances } from './helpers/managed-landscape.ts';

const skip =
  process.getuid?.() !== 0
    ? 'needs root: managed services sit on the service network'
    : (await installedNatsMajor()) === undefined
      ? 'nats-server is not installed (scripts/apt-packages.sh)'
      : false;

const webService = `  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      NATS_URL: \${{ services.mq.dsn }}
`;
const svcYml = `schema: svc/v1
services:
  mq:
    type: managed
    provider: nats
    resources: { connections: 50, storage: 512Mi }
    secrets:
      password: \${{ secrets.MQ_PASSWORD }}
${webService}`;

// nats.js in the pod (its files in the repository, see nodePackageFiles): connected with the DSN's host, port, user
// and password (decoded), one request answered through a reply inbox. JetStream's API is JSON over such requests.
const webJs = `const http = require('node:http');
const { connect } = require('@nats-io/transport-node');
const url = new URL(process.env.NATS_URL);
async function request(subject, body) {
  const connection = await connect({ servers: url.host, user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password), reconnect: false });
  try {
    return (await connection.request(subject, body, { timeout: 5000 })).string();
  } finally {
    await connection.close();
  }
}
const stream = JSON.stringify({ name: 'EVENTS', subjects: ['events.>'], storage: 'file' });
http.createServer(async (req, res) => {
  try {
    if (req.url === '/write') {
      await request('$JS.API.STREAM.CREATE.EVENTS', stream);
      return res.end(await request('events.hello', 'kept'));
    }
    res.end(String(JSON.parse(await request('$JS.API.STREAM.INFO.EVENTS', '')).state.messages));
  } catch (error) {
    res.statusCode = 500;
    res.end(error.message);
  }
}).listen(8080, '0.0.0.0');
`;

let server: TestServer;
let dev: ApiClient;
let outsiderKey: string;
let key: string;
let repository: BareRepository;
let driver: RuntimeDriver;
let dataDir: string;
let ws: number;
let routerPort: number;
const finished = (operationId: string) => operationFinished(dev, operationId);

before(async () => {
  if (skip) return;
  const tools = await mkdtemp(path.join(os.tmpdir(), 'svc-nats-tools-')); // no editor tools: the built-in editor, quick
  await chmod(tools, 0o755);
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TOOLS_DIR: tools },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  dataDir = server.server.config.dataDir;
  routerPort = Number(new URL(server.url).port);
  const owner = await createPerson(server.admin, 'nats-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Broker' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Broker' })).body.id;
  const developer = await createPerson(server.admin, 'nats-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  dev = developer.key;
  key = dev.auth.token!;
  outsiderKey = (await createPerson(server.admin, 'nats-outsider@example.com')).key.auth.token!;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': webJs, ...(await nodePackageFiles(['@nats-io/transport-node'])) });
  const created = await dev.post('/workspaces', { team_id: team, name: 'broker', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  await dev.put(`/workspaces/${ws}/secrets/MQ_PASSWORD`, { value: 'p@ss word/"x"' });
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [ws]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
});

async function sync(): Promise<void> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await finished(started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

/** web's answer for `urlPath`, once it answers (it starts after the Sync). */
async function ask(urlPath: string): Promise<string> {
  return until(async () => {
    const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.status !== 'stopped');
    if (!web?.address) return undefined;
    const answer = await fetch(`http://${web.address.host}:8080${urlPath}`).catch(() => undefined);
    if (!answer) return undefined;
    const text = await answer.text();
    assert.equal(answer.status, 200, text);
    return text;
  }, `web to answer ${urlPath}`);
}

const instance = async () =>
  (await server.server.database.pool.query<{ id: string; number: number }>('SELECT id, number FROM managed_services WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1', [ws])).rows[0];

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A request to the router (nginx in front) for `host`. */
function call(host: string, urlPath: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: routerPort, path: urlPath, headers: { host, ...headers }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

const msHost = (number: number) => `ms-${number}.localhost`;
const withKey = (token = key) => ({ 'svc-authorization': `Bearer ${token}` });

test('Sync creates the broker; web reaches it by name with the DSN and keeps a JetStream message', { skip }, async () => {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.deepEqual(plan.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['mq', 'create'], ['web', 'create']]);
  await sync();
  const { id } = await instance();
  const shown = await dev.get(`/managed-services/${id}`);
  assert.equal(shown.status, 200, shown.text);
  assert.equal(shown.body.status, 'synchronized');
  assert.deepEqual(shown.body.details, { host: 'mq', port: 4222, monitoringPort: 8222, user: 'app', jetstream: true, version: '2' });
  assert.deepEqual(JSON.parse(await ask('/write')), { stream: 'EVENTS', seq: 1 });
  assert.equal(await ask('/'), '1');
});

test('the managed-service host refuses without sign-in and answers the monitoring JSON with a team key', { skip }, async () => {
  const { number } = await instance();
  assert.equal((await call(msHost(number), '/varz')).text, '401 Sign-in required: send an API key of the team: curl -H "Svc-Authorization: Bearer <key>" URL\n');
  const browser = await call(msHost(number), '/varz', { accept: 'text/html' });
  assert.equal(browser.status, 401);
  assert.match(browser.text, new RegExp(`workspace-sign-in\\?host=ms-${number}\\.localhost&amp;next=%2Fvarz&amp;workspace=${ws}`));
  assert.equal((await call(msHost(number), '/varz', { 'svc-authorization': 'Bearer svc_1_nope' })).status, 401);
  assert.equal((await call(msHost(number), '/varz', withKey(outsiderKey))).text, '404 Nothing here\n', 'outside the team it is nothing');

  const varz = await call(msHost(number), '/varz', withKey());
  assert.equal(varz.status, 200, varz.text);
  const body = JSON.parse(varz.text);
  assert.deepEqual([body.server_name, body.port, body.http_port, body.max_connections, body.auth_required], [`ms-${number}`, 4222, 8222, 50, true]);
  assert.equal(body.jetstream.config.max_storage, 512 * 1048576);
  assert.deepEqual(JSON.parse((await call(msHost(number), '/healthz', withKey())).text), { status: 'ok' });

  assert.equal((await call(msHost(999_999), '/varz', withKey())).text, '404 Nothing here\n');
});

test('a sign-in link for the managed-service host sets its cookie, good for that host only', { skip }, async () => {
  const { number } = await instance();
  assertProblem(await dev.post(`/workspaces/${ws}/sign-in-links`, { host: msHost(999_999) }), 422, 'validation');
  const link = await dev.post(`/workspaces/${ws}/sign-in-links`, { host: msHost(number), next: '/healthz' });
  assert.equal(link.status, 201, link.text);
  const url = new URL(link.body.url);
  const used = await call(msHost(number), `${url.pathname}${url.search}`);
  assert.equal(used.status, 303, used.text);
  assert.equal(used.headers.location, '/healthz');
  const cookie = used.headers['set-cookie']![0].split(';')[0];
  const healthz = await call(msHost(number), '/healthz', { cookie });
  assert.equal(healthz.status, 200, healthz.text);
  assert.equal((await call(`w${ws}.localhost`, '/', { cookie })).status, 401, 'the cookie is for its host only');
});

test('a broker that stopped answering gives 502; the next Sync starts it again', { skip }, async () => {
  const { number } = await instance();
  await stopNatsInstance({ dataDir, toolsDir: '', log: () => undefined }, number); // as if it crashed
  assert.equal((await call(msHost(number), '/varz', withKey())).text, '502 The managed service did not answer\n');
  await sync();
  assert.equal((await call(msHost(number), '/healthz', withKey())).status, 200);
});

test('while its instance is being created, resumed or changed, the host asks to wait (503 starting); synchronized, it answers', { skip }, async () => {
  const { id, number } = await instance();
  const pool = server.server.database.pool;
  for (const status of ['creating', 'unpausing', 'updating'] as const) {
    await setManagedServiceStatus(pool, id, { status }, server.clock.now()); // as a Sync or a resume holds it meanwhile
    const waiting = await call(msHost(number), '/varz', withKey());
    assert.deepEqual([waiting.status, waiting.text], [503, '503 This service is starting\n'], status);
  }
  await setManagedServiceStatus(pool, id, { status: 'synchronized' }, server.clock.now());
  assert.equal((await call(msHost(number), '/healthz', withKey())).status, 200);
});

test('Teardown pauses the broker: its host says so and does not resume it; the next Sync resumes it with the message', { skip }, async () => {
  const { id, number } = await instance();
  const teardown = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  assert.equal((await dev.get(`/managed-services/${id}`)).body.status, 'paused');
  const paused = await call(msHost(number), '/varz', withKey());
  assert.deepEqual([paused.status, paused.text], [503, '503 This managed service is paused\n']);
  assert.equal((await dev.get(`/managed-services/${id}`)).body.status, 'paused', 'opening the host does not resume it');
  assert.equal(await isNatsInstanceRunning({ dataDir, toolsDir: '', log: () => undefined }, number), false);
  await sync();
  assert.equal((await dev.get(`/managed-services/${id}`)).body.status, 'synchronized');
  assert.equal(await ask('/'), '1');
});

test('removing the broker from the file deletes it; its host is nothing then', { skip }, async () => {
  const { id, number } = await instance();
  const volume = path.join(dataDir, 'volumes', String(ws), 'app');
  await writeFile(path.join(volume, 'svc.yml'), `schema: svc/v1\nservices:\n${webService.replace(/ {4}env:\n.*\n/, '')}`);
  await sync();
  assert.equal((await dev.get(`/managed-services/${id}`)).body.status, 'deleted');
  assert.equal((await call(msHost(number), '/varz', withKey())).text, '404 Nothing here\n');
});
