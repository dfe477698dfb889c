// Waking on request names why the workspace slept (spec 3.1 "Wake reasons shown to clients"): the waiting page for
// browsers, and for other clients the 503 with Retry-After and the reason as text once the hold is over. This
// server holds requests for 0 s (--wake-hold 0), so that other clients get the 503 at once. The on-demand service
// waits while `.hold-lazy` exists in the volume, so whether it is ready when the router looks is set by the test.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';

const svcYml = `schema: svc/v1
services:
  lazy:
    type: steps
    availability: on-demand
    idleTimeoutMinutes: 1
    steps:
      - run: while [ -e /data/app/.hold-lazy ]; do sleep 0.05; done; exec node -e "require('http').createServer((q, s) => s.end('lazy')).listen(4000, '0.0.0.0')"
    ports:
      - port: 4000
        routes: [{ path: /lazy }]
`;

let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let ws: number;
let port: number;
let dataDir: string;

before(async () => {
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_WAKE_HOLD: '0' },
    driver: (context) => ((dataDir = context.dataDir), createLocalDriver({ dataDir: context.dataDir, clock: context.clock })),
  });
  port = Number(new URL(server.url).port);
  const owner = await createPerson(server.admin, 'wake-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Wake' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Wake' })).body.id;
  dev = owner.key;
  repository = await createBareRepository({ 'svc.yml': svcYml });
  const created = await dev.post('/workspaces', { team_id: team, name: 'sleeper', git: { provider: 'git', repo: repository.url } });
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
  const plan = (await dev.get(`/workspaces/${ws}/landscape/plan`)).body;
  assert.equal((await operationFinished(dev, (await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.hash })).body.id)).state, 'succeeded');
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  await repository?.remove();
});

/** A request to the dev URL of the workspace with the developer's key (fetch cannot set Host). */
function call(path: string, accept?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const headers: Record<string, string> = { host: `w${ws}.localhost`, 'svc-authorization': `Bearer ${dev.auth.token}` };
  if (accept) headers.accept = accept;
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

const BROWSER = 'text/html,application/xhtml+xml,*/*;q=0.8';
const running = () => until(async () => ((await dev.get(`/workspaces/${ws}`)).body.state === 'running' ? true : undefined), 'the workspace to run');

async function sleepByHand(): Promise<void> {
  // the wake of the test before may still be finishing (its services start after the editor runs): 409 until then
  const slept = await until(async () => {
    const answer = await dev.post(`/workspaces/${ws}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
  assert.deepEqual([slept.body.state, slept.body.status_detail], ['sleeping', 'Asleep']);
}

test('put to sleep by hand: the waiting page names it while the workspace wakes', async () => {
  await sleepByHand();
  const page = await call('/', BROWSER);
  await running(); // the request woke it, whatever the page said
  assert.equal(page.status, 503);
  assert.equal(page.headers['retry-after'], '2');
  assert.match(page.text, /http-equiv="refresh"/);
  assert.match(page.text, /<h1>Waking up<\/h1>/);
  assert.match(page.text, /Why it slept: put to sleep by hand\./);
});

test('put to sleep by hand: other clients get 503 with Retry-After and the reason as text', async () => {
  await sleepByHand();
  const answer = await call('/');
  await running();
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers['retry-after'], '2');
  assert.equal(answer.text, '503 Waking up: put to sleep by hand\n');
});

test('an on-demand service asleep because nobody used it: woken by the request, the answer says why', async () => {
  const status = async () => (await dev.get(`/workspaces/${ws}/landscape`)).body.services[0].status;
  await until(async () => ((await status()) === 'running' ? true : undefined), 'lazy to run');
  server.clock.advance(61_000);
  assert.deepEqual(await server.server.services.sleepIdle(), [`${ws}/lazy`]);
  assert.equal(await status(), 'sleeping');
  const holdLazy = path.join(dataDir, 'volumes', String(ws), 'app', '.hold-lazy');
  await writeFile(holdLazy, '');
  const answer = await call('/lazy');
  await rm(holdLazy);
  assert.equal(answer.status, 503);
  assert.equal(answer.text, '503 Waking up: nobody used it\n');
  await until(async () => ((await status()) === 'running' ? true : undefined), 'lazy to wake');
  assert.equal((await call('/lazy')).text, 'lazy');
});

test('the waiting page opens the address once it answers: its script waits on /.svc/wait, held until the request could be served', async () => {
  await sleepByHand();
  const page = await call('/lazy', BROWSER);
  assert.equal(page.status, 503);
  assert.match(page.text, /<noscript><meta http-equiv="refresh" content="2"><\/noscript>/, 'without script it still reloads itself');
  const script = /<script>([\s\S]*?)<\/script>/.exec(page.text)?.[1];
  assert.ok(script?.includes('/.svc/wait'), page.text);
  const hash = `'sha256-${createHash('sha256').update(script!).digest('base64')}'`;
  assert.match(String(page.headers['content-security-policy']), new RegExp(`script-src ${hash.replace(/[+/]/g, '\\$&')}; connect-src 'self'`));
  // held although this server holds requests for 0 s: the page's own question waits for the wake
  const ready = await call(`/.svc/wait?path=${encodeURIComponent('/lazy')}`);
  assert.equal(ready.status, 204, ready.text);
  assert.equal((await call('/lazy')).text, 'lazy', 'the reload the 204 leads to is answered by the service');
  const nothing = await call(`/.svc/wait?path=${encodeURIComponent('/nowhere')}`);
  assert.deepEqual([nothing.status, nothing.text], [404, '404 Nothing is served at this path\n'], 'a wait for what no route serves says so at once');
});
