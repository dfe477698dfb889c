// Opening any address of a sleeping workspace wakes it (spec 3.1), also when nothing is served there: a workspace
// without a landscape put to sleep by hand, opened on its dev URL by a browser, gets the waiting page naming why it
// slept; the page's wait (/.svc/wait) is answered once the workspace runs, and the reload then gets what the dev URL
// serves ("Nothing is served here yet"). A client that is not a browser gets 503 with the reason as text. This
// server holds requests for 0 s (--wake-hold 0), so the first answer is the waiting page whatever the wake's speed.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';

let server: TestServer;
let dev: ApiClient;
let ws: number;
let port: number;

before(async () => {
  server = await startTestServer({
    env: { SVC_WAKE_HOLD: '0' },
    driver: (context) => createLocalDriver({ dataDir: context.dataDir, clock: context.clock }),
  });
  port = Number(new URL(server.url).port);
  const owner = await createPerson(server.admin, 'wake-empty@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Empty' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Empty' })).body.id;
  dev = owner.key;
  const created = await dev.post('/workspaces', { team_id: team, name: 'bare' });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
});

/** A request to the dev URL with the developer's key (fetch cannot set Host). */
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
const state = async () => (await dev.get(`/workspaces/${ws}`)).body.state as string;

async function sleepByHand(): Promise<void> {
  const slept = await until(async () => {
    const answer = await dev.post(`/workspaces/${ws}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
  assert.equal(slept.body.state, 'sleeping');
}

test('a browser on the dev URL of a sleeping workspace without a landscape: the waiting page with the reason, then Running and what the URL serves', async () => {
  assert.equal((await dev.get(`/workspaces/${ws}/landscape`)).body.banner.state, 'no-landscape');
  await sleepByHand();
  const page = await call('/', BROWSER);
  assert.equal(page.status, 503, page.text);
  assert.match(page.text, /<h1>Waking up<\/h1>/);
  assert.match(page.text, /Why it slept: put to sleep by hand\./);
  // the page's script waits for its address: held while the workspace wakes (nothing serves / while it does), then
  // answered with what / answers once it runs; the script reloads on any answer but 503
  const waited = await until(async () => {
    const answer = await call('/.svc/wait?path=%2F', '*/*');
    return answer.status === 503 ? undefined : answer; // a hold ended while still waking: the script asks again
  }, 'the wait to be answered');
  assert.deepEqual([waited.status, waited.text], [404, '404 Nothing is served here yet\n']);
  assert.equal(await state(), 'running');
  const reloaded = await call('/', BROWSER);
  assert.equal(reloaded.status, 404);
  assert.match(reloaded.text, /Nothing is served here yet/);
});

test('another client on any address of a sleeping workspace without a landscape: 503 with the reason as text, and the workspace wakes', async () => {
  await sleepByHand();
  const answer = await call('/some/path');
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers['retry-after'], '2');
  assert.equal(answer.text, '503 Waking up: put to sleep by hand\n');
  await until(async () => ((await state()) === 'running' ? true : undefined), 'the workspace to run');
  assert.equal((await call('/some/path')).status, 404);
});
