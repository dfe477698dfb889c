// The router on the server's own listener: workspace hosts, sign-in (key and single-use links), routes with strip,
// public ports, a WebSocket, forward targets behind the SSRF guard, wake on request and the router pages.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node echo.js web 8080 9000
    ports:
      - port: 8080
        routes: [{ path: / }]
      - port: 9000
        public: true
      - port: 9001
        public: true
    health: { port: 8080 }
  api:
    type: steps
    steps:
      - run: node echo.js api 3000
    ports:
      - port: 3000
        routes: [{ path: /api, strip: true }]
  lazy:
    type: steps
    availability: on-demand
    idleTimeoutMinutes: 1
    needs: [helper]
    steps:
      - run: node echo.js lazy 4000
    ports:
      - port: 4000
        routes: [{ path: /lazy, strip: true }]
  helper:
    type: steps
    availability: on-demand
    idleTimeoutMinutes: 1
    steps:
      - run: node echo.js helper 4100
    ports:
      - port: 4100
  allowed:
    type: forward
    target: http://127.0.0.1:\${{ env.EXT_PORT }}/base
    routes: [{ path: /ext }]
  private:
    type: forward
    target: http://10.255.255.1/
    routes: [{ path: /private }]
`;

// Answers every request with what it saw; answers WebSocket upgrades and echoes the bytes.
const echoJs = `const http = require('node:http');
const crypto = require('node:crypto');
const [name, ...ports] = process.argv.slice(2);
for (const port of ports) {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    if (req.url === '/slow') return; // never answers
    req.on('end', () => res.end(JSON.stringify({ name, port, method: req.method, url: req.url, headers: req.headers, body })));
  });
  server.on('upgrade', (req, socket) => {
    const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
    socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: ' + accept + '\\r\\n\\r\\n');
    socket.on('data', (chunk) => socket.write(chunk));
  });
  server.listen(Number(port), '0.0.0.0');
}
`;

let server: TestServer;
let dev: ApiClient;
let devSession: ApiClient;
const finished = (operationId: string) => operationFinished(dev, operationId);
let key: string;
let viewerKey: string;
let repository: BareRepository;
let external: http.Server;
let ws: number;
let port: number;

interface RouterAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json?: any;
}

/** A request to the router for `host` (fetch cannot set Host). */
function call(host: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RouterAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (c: string) => (text += c));
      response.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode!, headers: response.headers, text, json });
      });
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

const dev_ = () => `w${ws}.localhost`;
const withKey = (extra: Record<string, string> = {}) => ({ 'svc-authorization': `Bearer ${key}`, ...extra });



before(async () => {
  external = http.createServer((req, res) => res.end(`external saw ${req.url}`));
  await new Promise<void>((resolve) => external.listen(0, '127.0.0.1', resolve));
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_FORWARD_ALLOW: '127.0.0.1/32', SVC_UPSTREAM_TIMEOUT: '2' } });
  port = Number(new URL(server.url).port);
  const owner = await createPerson(server.admin, 'router-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Router' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Router' })).body.id;
  const developer = await createPerson(server.admin, 'router-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  dev = developer.key;
  devSession = developer.session;
  key = dev.auth.token!;
  const watcher = await createPerson(server.admin, 'router-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  viewerKey = watcher.key.auth.token!;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'echo.js': echoJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'routed', git: { provider: 'git', repo: repository.url } });
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await finished(created.body.id)).state, 'succeeded');
  await dev.put(`/workspaces/${ws}/variables/EXT_PORT`, { value: String((external.address() as AddressInfo).port) });
  const plan = (await dev.get(`/workspaces/${ws}/landscape/plan`)).body;
  assert.equal((await finished((await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.hash })).body.id)).state, 'succeeded');
  await until(async () => ((await dev.get(`/workspaces/${ws}/landscape`)).body.dev_url.state === 'served' ? true : undefined), 'the dev URL to be served');
  // With nginx in front (the default data plane), every case below takes nginx's direct path where it can.
  const nginx = server.server.dataPlane;
  if (nginx) {
    await call(dev_(), '/', { headers: withKey() });
    await until(async () => (nginx.servesDirectly(ws) ? true : undefined), 'nginx to serve the workspace itself');
  }
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  await repository?.remove();
  external?.close();
});

test('a private address needs sign-in: the page for browsers, one line for other clients', async () => {
  const plain = await call(dev_(), '/');
  assert.equal(plain.status, 401);
  assert.equal(plain.text, '401 Sign-in required: send an API key: curl -H "Svc-Authorization: Bearer <key>" URL\n');
  const browser = await call(dev_(), '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  assert.equal(browser.status, 401);
  assert.match(browser.headers['content-type']!, /text\/html/);
  assert.match(browser.text, /Sign-in required/);
  assert.match(browser.text, /workspace-sign-in\?host=/);
  const badKey = await call(dev_(), '/', { headers: { 'svc-authorization': 'Bearer svc_1_nope' } });
  assert.equal(badKey.status, 401);
});

test('Svc-Authorization is read and removed; Authorization reaches the application; X-Forwarded-* are set', async () => {
  const answer = await call(dev_(), '/hello?x=1', { headers: withKey({ authorization: 'Basic YXBwOnNlY3JldA==' }) });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.name, 'web');
  assert.equal(answer.json.url, '/hello?x=1');
  assert.equal(answer.json.headers['svc-authorization'], undefined);
  assert.equal(answer.json.headers.authorization, 'Basic YXBwOnNlY3JldA==');
  assert.equal(answer.json.headers['x-forwarded-host'], dev_());
  assert.equal(answer.json.headers['x-forwarded-proto'], 'http');
  assert.ok(answer.json.headers['x-forwarded-for']);
});

test('routes: strip, segment boundaries, a body streamed through', async () => {
  const api = await call(dev_(), '/api/items?page=2', { headers: withKey() });
  assert.deepEqual([api.json.name, api.json.url], ['api', '/items?page=2']);
  assert.deepEqual([(await call(dev_(), '/api', { headers: withKey() })).json.url], ['/']);
  const apix = await call(dev_(), '/apix', { headers: withKey() });
  assert.deepEqual([apix.json.name, apix.json.url], ['web', '/apix']);
  const posted = await call(dev_(), '/api/echo', { method: 'POST', headers: withKey({ 'content-type': 'text/plain' }), body: 'x'.repeat(200_000) });
  assert.equal(posted.json.body.length, 200_000);
});

test('a public port has its own host; an unpublished one serves nothing; unknown hosts are nothing', async () => {
  const published = await call(`w${ws}-9000.localhost`, '/p', { headers: withKey() });
  assert.deepEqual([published.json.name, published.json.port], ['web', '9000']);
  const unpublished = await call(`w${ws}-8080.localhost`, '/', { headers: withKey() });
  assert.equal(unpublished.text, '404 Nothing is served here yet\n');
  assert.equal((await call('nothing.localhost', '/')).text, '404 Nothing here\n');
  assert.equal((await call('w999999.localhost', '/', { headers: withKey() })).text, '404 Nothing here\n');
});

test('a WebSocket goes through the router both ways', async () => {
  const socketKey = randomBytes(16).toString('base64');
  const { socket, response } = await new Promise<{ socket: import('node:net').Socket; response: http.IncomingMessage }>((resolve, reject) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      path: '/socket',
      headers: { host: dev_(), connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': socketKey, 'sec-websocket-version': '13', ...withKey() },
    });
    request.on('upgrade', (answer, upgraded) => resolve({ socket: upgraded, response: answer }));
    request.on('response', (answer) => reject(new Error(`no upgrade: ${answer.statusCode}`)));
    request.on('error', reject);
    request.end();
  });
  assert.equal(response.statusCode, 101);
  assert.equal(response.headers['sec-websocket-accept'], createHash('sha1').update(`${socketKey}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64'));
  const echoed = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(chunk.toString())));
  socket.write('ping through the router');
  assert.equal(await echoed, 'ping through the router');
  socket.destroy();
});

test('forward targets (filled at Sync): an allowed one is reached at its base path; a private one is refused by the guard', async () => {
  const allowed = await call(dev_(), '/ext/page?q=1', { headers: withKey() });
  assert.equal(allowed.text, 'external saw /base/ext/page?q=1');
  const refused = await call(dev_(), '/private', { headers: withKey() });
  assert.equal(refused.text, '502 This forward target is not allowed\n');
});

test('sign-in links: used once, they set the host cookie; a cross-site change is refused; a deleted key stops at once', async () => {
  assertProblem(await dev.post(`/workspaces/${ws}/sign-in-links`, { host: 'w1.example.com' }), 422, 'validation');
  const link = await dev.post(`/workspaces/${ws}/sign-in-links`, { next: '/after' });
  assert.equal(link.status, 201, link.text);
  const url = new URL(link.body.url);
  assert.equal(url.host, `${dev_()}:${port}`);
  const used = await call(dev_(), `${url.pathname}${url.search}`);
  assert.equal(used.status, 303);
  assert.equal(used.headers.location, '/after');
  const cookie = used.headers['set-cookie']![0].split(';')[0];
  assert.match(used.headers['set-cookie']![0], /HttpOnly; SameSite=Lax/);
  const again = await call(dev_(), `${url.pathname}${url.search}`);
  assert.equal(again.text, '403 This link has expired\n');
  const page = await call(dev_(), '/after', { headers: { cookie } });
  assert.equal(page.json.url, '/after');
  assert.equal(page.json.headers.cookie, undefined, 'the router keeps its own cookie');
  assert.equal((await call(`ide-w${ws}.localhost`, '/', { headers: { cookie } })).status, 401, 'the cookie is for its host only');
  const crossSite = await call(dev_(), '/form', { method: 'POST', headers: { cookie, origin: 'https://evil.example' } });
  assert.equal(crossSite.text, '403 Request from another site refused\n');
  assert.equal((await call(dev_(), '/form', { method: 'POST', headers: { cookie, origin: `http://${dev_()}:${port}` } })).status, 200);
  // Admitted twice (with nginx in front, the second admission is its cached one), then deleted: refused at once.
  const extra = await devSession.post('/me/api-keys', { name: 'short-lived' });
  assert.equal(extra.status, 201, extra.text);
  const withExtra = { 'svc-authorization': `Bearer ${extra.body.token}` };
  assert.equal((await call(dev_(), '/', { headers: withExtra })).status, 200);
  assert.equal((await call(dev_(), '/', { headers: withExtra })).status, 200);
  assert.equal((await dev.delete(`/me/api-keys/${extra.body.id}`)).status, 204);
  assert.equal((await call(dev_(), '/', { headers: withExtra })).status, 401);
});

test('a restricted workspace admits only those who may use it', async () => {
  const asViewer = { 'svc-authorization': `Bearer ${viewerKey}` };
  assert.equal((await call(dev_(), '/', { headers: asViewer })).status, 200);
  const current = await dev.get(`/workspaces/${ws}`);
  const patched = await dev.patch(`/workspaces/${ws}`, { restricted: true }, { headers: { 'if-match': current.headers.get('etag')! } });
  assert.equal(patched.status, 200, patched.text);
  await until(async () => ((await call(dev_(), '/', { headers: asViewer })).status === 404 ? true : undefined), 'the viewer to be refused');
  assert.equal((await call(dev_(), '/', { headers: asViewer })).text, '404 Nothing here\n');
  assert.equal((await call(dev_(), '/', { headers: withKey() })).status, 200);
  const again = await dev.get(`/workspaces/${ws}`);
  await dev.patch(`/workspaces/${ws}`, { restricted: false }, { headers: { 'if-match': again.headers.get('etag')! } });
});

test('limits: too large a body 413, too long an address 414', async () => {
  assert.equal((await call(dev_(), '/', { method: 'POST', headers: withKey({ 'content-length': String(200 * 2 ** 20) }) })).text, '413 Request too large\n');
  assert.equal((await call(dev_(), `/${'a'.repeat(9000)}`, { headers: withKey() })).text, '414 Address too long\n');
});

test('an upstream that does not answer in time 504; one that refuses 502', async () => {
  assert.equal((await call(dev_(), '/slow', { headers: withKey() })).text, '504 The site did not answer in time\n');
  assert.equal((await call(`w${ws}-9001.localhost`, '/', { headers: withKey() })).text, '502 Workspace did not answer\n');
});

test('the editor answers on its host', async () => {
  const editor = await call(`ide-w${ws}.localhost`, '/', { headers: withKey() });
  assert.equal(editor.status, 200);
});

test('idle on-demand services sleep with their needs; a request wakes them both and is answered', async () => {
  const statuses = async () => Object.fromEntries((await dev.get(`/workspaces/${ws}/landscape`)).body.services.map((s: any) => [s.name, s.status]));
  await until(async () => ((await statuses()).helper === 'internal' && (await statuses()).lazy === 'running' ? true : undefined), 'lazy and helper to run');
  assert.equal((await call(dev_(), '/lazy/first', { headers: withKey() })).json.name, 'lazy');
  server.clock.advance(61_000);
  assert.deepEqual((await server.server.services.sleepIdle()).sort(), [`${ws}/helper`, `${ws}/lazy`]);
  const asleep = await statuses();
  assert.deepEqual([asleep.lazy, asleep.helper, asleep.web], ['sleeping', 'sleeping', 'running']);
  const replicas = await server.server.driver.replicaStates({ id: ws, uid: 0, storageGib: 0 });
  assert.ok(replicas.filter((r) => r.service === 'lazy' || r.service === 'helper').every((r) => r.status === 'stopped'));
  const woken = await call(dev_(), '/lazy/again', { headers: withKey() });
  assert.equal(woken.status, 200, woken.text);
  assert.deepEqual([woken.json.name, woken.json.url], ['lazy', '/again']);
  await until(async () => ((await statuses()).helper === 'internal' ? true : undefined), 'helper, which lazy needs, to wake too');
});

test('a stopped service says so; a request to a sleeping workspace wakes it and is answered', async () => {
  await dev.post(`/workspaces/${ws}/landscape/services/api/stop`);
  assert.equal((await call(dev_(), '/api/x', { headers: withKey() })).text, '503 This service is stopped\n');
  await dev.post(`/workspaces/${ws}/landscape/services/api/start`);
  assert.equal((await dev.post(`/workspaces/${ws}/sleep`)).status, 200);
  // A browser is held up to 1.5 s: a wake quicker than that answers at once, a slower one shows the waiting page.
  const browser = await call(dev_(), '/', { headers: withKey({ accept: 'text/html' }) });
  if (browser.status !== 200) {
    assert.equal(browser.status, 503);
    assert.match(browser.text, /http-equiv="refresh"/);
  }
  const held = await call(dev_(), '/woken', { headers: withKey() });
  assert.equal(held.status, 200, held.text);
  assert.equal(held.json.url, '/woken');
  // served as soon as web was ready, maybe before the editor answered (test/router-wake-services.test.ts)
  await until(async () => ((await dev.get(`/workspaces/${ws}`)).body.state === 'running' ? true : undefined), 'the workspace to run');
});

test('a stopped workspace is not woken by requests', async () => {
  assert.equal((await dev.post(`/workspaces/${ws}/stop`)).status, 200);
  const answer = await call(dev_(), '/', { headers: withKey() });
  assert.equal(answer.text, '503 Workspace is not running\n');
  assert.ok(answer.headers['retry-after']);
});
