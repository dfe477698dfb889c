// Custom domains on the router (issue 20) with a real workspace behind nginx: nothing is served before the TXT
// record is verified (dnsmasq on loopback); then the domain's routes reach the dev URL and a service, the domain's
// timeout gives the 504 page, its body limit the 413 page, a restricted domain refuses requests without the team's
// credentials, and a lapsed domain serves the 404 page.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { DAY, HOUR } from '../src/core/clock.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace } from './helpers/workspaces.ts';

const files = {
  'svc.yml': `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node echo.js web 8080
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080 }
  api:
    type: steps
    steps:
      - run: node echo.js api 3000
    ports:
      - port: 3000
        routes: [{ path: /api, strip: true }]
`,
  // Answers with what it saw; /slow answers after 3 s (past the domain's timeout of 1 s).
  'echo.js': `const [name, port] = process.argv.slice(2);
require('node:http').createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const answer = () => res.end(JSON.stringify({ name, url: req.url, authorization: req.headers.authorization, svc: req.headers['svc-authorization'], length: body.length }));
    if (req.url === '/slow') setTimeout(answer, 3000); else answer();
  });
}).listen(Number(port), '0.0.0.0');
`,
};

let server: TestServer;
let dns: TestDns;
let owner: ApiClient;
let key: string;
let workspace: number;
let domainPath: string;
let token: string;
let port: number;

function call(host: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; text: string; json?: any; headers: http.IncomingHttpHeaders }> {
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
        resolve({ status: response.statusCode!, text, json, headers: response.headers });
      });
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

before(async () => {
  dns = await startDns(['shop.test']);
  server = await startTestServer({ env: { SVC_DNS_RESOLVER: dns.address, SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  port = Number(new URL(server.url).port);
  const served = await servedWorkspace(server, 'domainsite', files);
  ({ owner, key } = served);
  workspace = served.id;
  const team = (await owner.get(`/workspaces/${workspace}`)).body.team_id;
  const added = await owner.post(`/teams/${team}/domains`, {
    name: 'shop.test',
    routes: [{ path: '/', workspace_id: workspace }, { path: '/svc', workspace_id: workspace, service: 'api', strip: true }],
    timeout_seconds: 1,
    body_limit_bytes: 1000,
  });
  assert.equal(added.status, 201, added.text);
  domainPath = `/teams/${team}/domains/${added.body.id}`;
  token = added.body.txt_record.value;
});
after(async () => {
  await removeWorkspaces(server.server.driver, [workspace]);
  await server?.close();
  await dns?.stop();
});

test('before verification the domain serves the 404 page, and a request for it never reaches the console', async () => {
  const answer = await call('shop.test', '/');
  assert.equal(answer.status, 404);
  assert.match(answer.text, /Nothing here/);
  assert.equal((await call('shop.test', '/api/v1/version')).status, 404);
});

test('verified, the routes serve: the dev URL at /, a service at /svc (strip), the dev URL\'s own routes below', async () => {
  await dns.set({ '_svc.shop.test': [token] });
  assert.equal((await owner.post(`${domainPath}/check`)).status, 202);
  const root = await until(async () => {
    const answer = await call('shop.test', '/');
    return answer.status === 200 ? answer : undefined;
  }, 'the verified domain to serve', 15_000);
  assert.equal(root.json.name, 'web');
  assert.equal(root.json.url, '/');
  const service = await call('shop.test', '/svc/items?x=1', { headers: { authorization: 'Basic app' } });
  assert.deepEqual([service.status, service.json.name, service.json.url, service.json.authorization], [200, 'api', '/items?x=1', 'Basic app']);
  const throughDev = await call('shop.test', '/api/y');
  assert.deepEqual([throughDev.json.name, throughDev.json.url], ['api', '/y']);
  assert.equal((await call('shop.test', '/svcx')).json.name, 'web', 'prefixes match on segment boundaries');
});

test('a service slower than the domain\'s timeout: 504; a body over the domain\'s limit: 413', async () => {
  const slow = await call('shop.test', '/slow');
  assert.equal(slow.status, 504);
  assert.match(slow.text, /The site did not answer in time/);
  const large = await call('shop.test', '/upload', { method: 'POST', body: 'x'.repeat(2000), headers: { 'content-type': 'text/plain' } });
  assert.equal(large.status, 413);
  assert.match(large.text, /Request too large/);
  const small = await call('shop.test', '/upload', { method: 'POST', body: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
  assert.deepEqual([small.status, small.json.length], [200, 1000]);
});

test('a restricted domain refuses requests without the team\'s credentials; a member\'s key in Svc-Authorization passes and is removed', async () => {
  const etag = (await owner.get(domainPath)).headers.get('etag')!;
  assert.equal((await owner.patch(domainPath, { restricted: true }, { headers: { 'if-match': etag } })).status, 200);
  const refused = await until(async () => {
    const answer = await call('shop.test', '/');
    return answer.status === 401 ? answer : undefined;
  }, 'the restriction to reach the router', 15_000);
  assert.match(refused.text, /Sign-in required/);
  const stranger = (await createPerson(server.admin, 'domain-stranger@example.com')).key;
  assert.equal((await call('shop.test', '/', { headers: { 'svc-authorization': `Bearer ${stranger.auth.token}` } })).status, 401);
  const member = await call('shop.test', '/', { headers: { 'svc-authorization': `Bearer ${key}`, authorization: 'Bearer app-token' } });
  assert.equal(member.status, 200, member.text);
  assert.equal(member.json.svc, undefined);
  assert.equal(member.json.authorization, 'Bearer app-token');
});

test("a restricted domain admits the team's sign-in: a link minted for the domain's host sets its cookie there", async () => {
  const link = await owner.post(`/workspaces/${workspace}/sign-in-links`, { host: 'shop.test', next: '/after' });
  assert.equal(link.status, 201, link.text);
  const url = new URL(link.body.url);
  assert.equal(url.hostname, 'shop.test');
  const opened = await call('shop.test', `${url.pathname}${url.search}`);
  assert.equal(opened.status, 303, opened.text);
  assert.equal(opened.headers.location, '/after');
  const cookie = String(opened.headers['set-cookie']).split(';')[0];
  const answer = await call('shop.test', '/after', { headers: { cookie } });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.url, '/after');
  assert.equal((await call('shop.test', '/after', { headers: { cookie: 'svc_ws_session=forged' } })).status, 401);
});

test('the record removed: the domain lapses after the lapse period and serves the 404 page', async () => {
  await dns.set({});
  server.clock.advance(HOUR);
  await server.server.domains.checker.checkDue();
  assert.equal((await call('shop.test', '/', { headers: { 'svc-authorization': `Bearer ${key}` } })).status, 200, 'still served while the lapse period runs');
  server.clock.advance(7 * DAY);
  await server.server.domains.checker.checkDue();
  assert.equal((await owner.get(domainPath)).body.verification.status, 'lapsed');
  const gone = await until(async () => {
    const answer = await call('shop.test', '/', { headers: { 'svc-authorization': `Bearer ${key}` } });
    return answer.status === 404 ? answer : undefined;
  }, 'the lapsed domain to serve nothing', 15_000);
  assert.match(gone.text, /Nothing here/);
});
