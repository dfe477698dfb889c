// A waking workspace's services answer before its editor does (issue 17, docs/router.md "Waking"): services start
// together with the editor, and a request to the dev URL or a public port goes on as soon as its service has a
// ready replica, while the workspace is still `waking_up`; the editor's host waits until the editor answers, and a
// service still starting holds its request as before. The editor here waits while `.hold-editor` exists in the
// volume, a service while `.hold-slow` does, so the order is set by the test, not by timing. A wake for a request
// to a service runs the editor pod at the background CPU share until the services answer (its cgroup's share, read
// when the server runs as root with cgroups); a wake for the editor's host does not.
// test/router-wake-services-node.test.ts runs it again with svc alone as the data plane.
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { cgroupNames, hostCgroups } from '../src/runtime/local/cgroups.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

const HOLD_EDITOR = '/data/app/.hold-editor';
const HOLD_SLOW = '/data/app/.hold-slow';
// The editor: answers HTTP once nothing holds it (the agent sees the workspace Running then).
const HELD_EDITOR = `while [ -e ${HOLD_EDITOR} ]; do sleep 0.05; done; exec python3 -m http.server "$PORT" --bind "$HOST"`;

const FILES = {
  'svc.yml': `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node serve.js web 8080
    ports:
      - port: 8080
        public: true
        routes: [{ path: / }]
  slow:
    type: steps
    steps:
      - run: while [ -e ${HOLD_SLOW} ]; do sleep 0.05; done; exec node serve.js slow 8081
    ports:
      - port: 8081
        routes: [{ path: /slow }]
`,
  'serve.js': `const [name, port] = process.argv.slice(2);
require('node:http').createServer((req, res) => res.end(name + ' saw ' + req.url)).listen(Number(port), '0.0.0.0');
`,
};

let server: TestServer;
let driver: RuntimeDriver;
let dataDir: string;
let ws: ServedWorkspace;
let port: number;

before(async () => {
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: (context) => {
      dataDir = context.dataDir;
      driver = createLocalDriver({ dataDir: context.dataDir, clock: context.clock, editorCommand: HELD_EDITOR });
      return driver;
    },
  });
  port = Number(new URL(server.url).port);
  ws = await servedWorkspace(server, 'early', FILES);
});

after(async () => {
  if (ws) await removeWorkspaces(driver, [ws.id]);
  await server?.close();
  await ws?.repository.remove();
});

/** A file of the volume, as the host sees `/data/app/<name>` of the pods. */
const inVolume = (podPath: string) => path.join(dataDir, 'volumes', String(ws.id), 'app', path.relative('/data/app', podPath));

/** A request to a workspace host with the owner's key (fetch cannot set Host); `browser` asks for HTML. */
function call(host: string, target: string, browser = false): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { host: `${host}.localhost`, 'svc-authorization': `Bearer ${ws.key}` };
  if (browser) headers.accept = 'text/html,application/xhtml+xml,*/*;q=0.8';
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: target, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

const state = async () => (await ws.owner.get(`/workspaces/${ws.id}`)).body.state as string;

const cgroups = hostCgroups(process.getuid?.() === 0);
/** The editor pod's CPU share (`background` or `normal`); undefined without cgroups or before its cgroup exists. */
const editorShare = () => cgroups?.cpuShare(cgroupNames(dataDir).editor(ws.id));

async function sleepNow(): Promise<void> {
  const slept = await until(async () => {
    const answer = await ws.owner.post(`/workspaces/${ws.id}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
}

/** Lets the editor and slow start, and waits until the workspace runs. */
async function release(): Promise<void> {
  await rm(inVolume(HOLD_SLOW), { force: true });
  await rm(inVolume(HOLD_EDITOR), { force: true });
  await until(async () => ((await state()) === 'running' ? true : undefined), 'the workspace to run once its editor answers');
}

test('a sleeping dev URL is answered by its service while the editor still starts; the editor host waits for the editor', async () => {
  await sleepNow();
  await writeFile(inVolume(HOLD_EDITOR), '');
  await writeFile(inVolume(HOLD_SLOW), '');

  // held (up to 60 s) until web is ready, not until the editor answers: the editor is held, so it has not
  const served = await call(`w${ws.id}`, '/first');
  assert.deepEqual([served.status, served.text], [200, 'web saw /first']);
  assert.equal(await state(), 'waking_up', 'the API shows the workspace waking up until the editor answers');
  if (cgroups) assert.equal(await editorShare(), 'background', 'the editor pod runs in the background while a service (slow) still starts');
  assert.deepEqual(await call(`w${ws.id}-8080`, '/port'), { status: 200, text: 'web saw /port' }, 'its public port too');

  // the editor's host still waits for the editor: a browser gets the waiting page after its short hold
  const editor = await call(`ide-w${ws.id}`, '/', true);
  assert.equal(editor.status, 503, editor.text);
  assert.match(editor.text, /<h1>Waking up<\/h1>/);
  // a service not ready yet still holds its request: the waiting page for a browser
  const slow = await call(`w${ws.id}`, '/slow', true);
  assert.equal(slow.status, 503, slow.text);
  assert.match(slow.text, /<h1>Waking up<\/h1>/);
  assert.equal(await state(), 'waking_up');

  await rm(inVolume(HOLD_SLOW));
  assert.deepEqual(await call(`w${ws.id}`, '/slow/x'), { status: 200, text: 'slow saw /slow/x' }, 'held until slow is ready');
  assert.equal(await state(), 'waking_up', 'slow was served before the editor answered too');
  if (cgroups) await until(async () => ((await editorShare()) === 'normal' ? true : undefined), 'the editor pod back at its normal CPU share once the services answer');

  await release();
  const opened = await call(`ide-w${ws.id}`, '/');
  assert.equal(opened.status, 200, opened.text);
  assert.deepEqual(await call(`w${ws.id}`, '/again'), { status: 200, text: 'web saw /again' });
});

test('a wake for the editor host runs the editor at its normal CPU share, services or not', { skip: !cgroups && 'needs root and cgroups' }, async () => {
  await sleepNow();
  await writeFile(inVolume(HOLD_EDITOR), '');
  await writeFile(inVolume(HOLD_SLOW), '');
  try {
    const editor = await call(`ide-w${ws.id}`, '/', true);
    assert.equal(editor.status, 503, editor.text);
    // web answering: the wake has started the pods, the editor's among them, and slow still starts
    assert.deepEqual(await call(`w${ws.id}`, '/web'), { status: 200, text: 'web saw /web' });
    assert.equal(await state(), 'waking_up');
    assert.equal(await editorShare(), 'normal');
  } finally {
    await release();
  }
});
