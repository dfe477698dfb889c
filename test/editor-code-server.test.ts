// code-server as the workspace editor: a server whose tools directory holds the install of scripts/setup-editor.sh
// runs VS Code in the browser at urls.ide, as the workspace UID, on /data/app, reached through the router, with the
// svc-yaml extension (scripts/setup-editor-yaml.sh) built in. Skipped,
// saying why, when the tools are not installed (`npm test` does not install them; `npm run up` and .ci/run do).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { svcSchema } from '../src/landscape/schema.ts';
import { codeServerWebFiles, DEFAULT_TOOLS_DIR, installedCodeServer } from '../src/runtime/local/editor-tools.ts';
import { processesInNamespace } from '../src/runtime/local/processes.ts';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import type { ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const skip = installedCodeServer(toolsDir) ? false : `code-server is not installed in ${toolsDir}; run scripts/setup-editor.sh (npm run up and .ci/run do)`;

let server: TestServer | undefined;
let owner: ApiClient;
let ws: number;
let ideHost: string;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request to the router for the editor's host, signed in with the owner's key (fetch cannot set Host). */
function callEditor(pathname: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: pathname, headers: { host: ideHost, 'svc-authorization': `Bearer ${owner.auth.token}`, ...headers }, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

before(async () => {
  if (skip) return;
  server = await startTestServer({ env: { SVC_TOOLS_DIR: toolsDir } });
  owner = server.admin;
  const org = (await owner.post('/orgs', { name: 'Editors' })).body.id;
  const team = (await owner.post('/teams', { org_id: org, name: 'Editors' })).body.id;
  const created = await owner.post('/workspaces', { team_id: team, name: 'vscode' });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const operation = (await owner.get(`/operations/${created.body.id}`)).body;
    if (operation.state === 'succeeded') break;
    if (operation.state === 'failed' || Date.now() > deadline) throw new Error(`workspace creation: ${JSON.stringify(operation)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const workspace = (await owner.get(`/workspaces/${ws}`)).body;
  assert.equal(workspace.state, 'running', JSON.stringify(workspace));
  ideHost = new URL(workspace.urls.ide).host;
});

after(async () => {
  if (!server) return;
  await removeWorkspaces(server.server.driver, [ws]);
  await server.close();
});

test('urls.ide serves the VS Code workbench on /data/app, and the assets it references load', { skip }, async () => {
  const start = await callEditor('/');
  assert.equal(start.status, 302);
  assert.equal(start.headers.location, './?folder=/data/app');
  const page = await callEditor('/?folder=/data/app');
  assert.equal(page.status, 200);
  assert.match(page.headers['content-type'] ?? '', /text\/html/);
  const html = page.body.toString();
  assert.match(html, /vscode-workbench-web-configuration/);
  assert.match(html, /workbench\.js/);
  assert.match(html, /codeServerVersion&quot;:&quot;\d+\.\d+\.\d+/);
  const scripts = [...html.matchAll(/<script[^>]* src="([^"]+\.js)"/g)].map((match) => match[1]);
  assert.ok(scripts.length > 0, 'the page references its scripts');
  for (const script of scripts) {
    const asset = await callEditor(`/${script}`);
    assert.equal(asset.status, 200, `${script} loads`);
    assert.match(asset.headers['content-type'] ?? '', /javascript/);
    assert.ok(asset.body.length > 0);
  }
});

test("the workbench's WebSocket reaches code-server through the router, with the browser's Origin", { skip }, async () => {
  const key = randomBytes(16).toString('base64');
  const url = new URL(server!.url);
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: '/?reconnectionToken=a1b2c3&reconnection=false&skipWebSocketFrames=false',
      headers: {
        host: ideHost,
        origin: `http://${ideHost}`,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-key': key,
        'sec-websocket-version': '13',
        'svc-authorization': `Bearer ${owner.auth.token}`,
      },
    });
    request.on('upgrade', (answer, socket) => {
      socket.destroy();
      resolve(answer.statusCode!);
    });
    request.on('response', (answer) => resolve(answer.statusCode!));
    request.on('error', reject);
    request.end();
  });
  assert.equal(status, 101);
});

test('code-server runs as the workspace UID with /data/app as its folder; its settings live in the volume', { skip }, async () => {
  const dataDir = server!.server.config.dataDir;
  const record = JSON.parse(await readFile(path.join(dataDir, 'pods', `${ws}.json`), 'utf8')) as { uid: number; pidNamespace: string };
  const processes = await Promise.all(
    (await processesInNamespace(record.pidNamespace)).map(async (pid) => ({
      cmdline: (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean),
      uid: Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1]),
    })),
  );
  const editor = processes.find((p) => p.cmdline[1]?.endsWith('/code-server.mjs'));
  assert.ok(editor, `a code-server process runs in the pod: ${JSON.stringify(processes.map((p) => p.cmdline.join(' ')))}`);
  const throughEntry = processes.filter((p) => p.cmdline.some((arg) => arg.endsWith('code-server/out/node/entry.js')));
  assert.deepEqual(throughEntry, [], 'code-server runs in the launcher, not as its own entry\'s parent and child');
  const asRoot = process.getuid?.() === 0;
  assert.equal(editor.uid, asRoot ? record.uid : process.getuid?.());
  assert.ok(record.uid >= 1000, 'not root, not a system user');
  assert.equal(editor.cmdline.at(-1), '/data/app');
  assert.match(editor.cmdline[0], /^\/opt\/svc-tools\/.*\/bin\/node$/, 'Node 24 from the tools directory, bound into the pod');

  const volume = path.join(dataDir, 'volumes', String(ws));
  const userData = await stat(path.join(volume, '.svc/code-server/user-data'));
  assert.ok(userData.isDirectory());
  if (asRoot) assert.equal(userData.uid, record.uid);
  assert.equal(await readFile(path.join(volume, '.svc/.gitignore'), 'utf8'), '*\n', 'the settings stay out of git status');
});

test("the workspace names code-server, its version and why; the console's workspace page shows it", { skip }, async () => {
  const version = installedCodeServer(toolsDir)!;
  const workspace = (await owner.get(`/workspaces/${ws}`)).body;
  assert.deepEqual(workspace.editor, { kind: 'code-server', version, reason: `code-server ${version} is installed in ${path.resolve(toolsDir)}` });
  await ensureConsoleBuilt();
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    const link = await owner.post(`/users/${(await owner.get('/me')).body.id}/sign-in-links`);
    assert.equal(link.status, 201, link.text);
    await page.goto(link.body.url);
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await page.goto(`${server!.url}/workspaces/${ws}`);
    const editor = page.getByTestId('editor-kind');
    await editor.waitFor();
    assert.equal(await editor.getAttribute('data-kind'), 'code-server');
    assert.equal(await editor.innerText(), `code-server ${version} (VS Code in the browser) — code-server ${version} is installed in ${path.resolve(toolsDir)}`);
    await screenshot(page, 'editor-code-server');
  } finally {
    await browser.close();
  }
});

test('the running editor has the svc-yaml extension built in: code-server serves its manifest, its language server and the svc.yml schema', { skip }, async () => {
  const extension = '/_static/lib/vscode/extensions/svc-yaml';
  const manifest = await callEditor(`${extension}/package.json`);
  assert.equal(manifest.status, 200, manifest.body.toString());
  const { name, main, activationEvents } = JSON.parse(manifest.body.toString()) as { name: string; main: string; activationEvents: string[] };
  assert.equal(name, 'svc-yaml');
  assert.ok(activationEvents.includes('workspaceContains:svc.yml'), JSON.stringify(activationEvents));
  assert.equal((await callEditor(`${extension}/${main.replace(/^\.\//, '')}`)).status, 200, 'its entry point is there');
  const server = await callEditor(`${extension}/node_modules/yaml-language-server/package.json`);
  assert.equal(server.status, 200, 'the YAML language server it starts is installed beside it');
  const schema = await callEditor(`${extension}/svc.schema.json`);
  assert.equal(schema.status, 200);
  assert.deepEqual(JSON.parse(schema.body.toString()), JSON.parse(JSON.stringify(svcSchema)), 'the schema the API serves');
  assert.equal((await callEditor(`${extension}/no-such-file.json`)).status, 404, 'a file the extension does not have is not found');
});

test("code-server's web files come from the data plane, compressed and cached for good; the rest from the editor", { skip }, async () => {
  const files = codeServerWebFiles(toolsDir)!;
  const html = (await callEditor('/?folder=/data/app')).body.toString();
  const script = [...html.matchAll(/<script[^>]* src="([^"]+workbench\.js)"/g)].map((match) => match[1])[0];
  assert.ok(script?.startsWith(files.urlPrefix.slice(1)), `the page loads its workbench under ${files.urlPrefix}: ${script}`);
  const onDisk = await readFile(path.join(files.dir, script.slice(files.urlPrefix.length - 1)));

  const compressed = await callEditor(`/${script}`, { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(compressed.status, 200);
  assert.equal(compressed.headers['content-encoding'], 'gzip');
  assert.equal(compressed.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.match(compressed.headers['content-type'] ?? '', /^text\/javascript/);
  assert.ok(compressed.headers['svc-version'], 'svc names its release as on every answer');
  assert.ok(gunzipSync(compressed.body).equals(onDisk), 'the file as code-server has it');
  const plain = await callEditor(`/${script}`);
  assert.equal(plain.headers['content-encoding'], undefined, 'a client that takes no gzip gets the file as it is');
  assert.ok(plain.body.equals(onDisk));

  const withQuery = await callEditor(`/${script}?v=1`);
  assert.equal(withQuery.status, 200);
  assert.notEqual(withQuery.headers['cache-control'], 'public, max-age=31536000, immutable', 'a query is for code-server to answer');
  assert.equal((await callEditor(`${files.urlPrefix}out/no-such-file.js`)).status, 404, "a missing file: code-server's own answer");
  const signedOut = await callEditor(`/${script}`, { 'svc-authorization': '' });
  assert.notEqual(signedOut.status, 200, 'the files are admitted as the rest of the editor host');
  assert.ok(!signedOut.body.includes(onDisk.subarray(0, 200)));
});

test('a fresh browser gets a calm workbench (no welcome page, panel or side bars it did not ask for); code-server keeps its files out of /data/app', { skip }, async () => {
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ extraHTTPHeaders: { 'svc-authorization': `Bearer ${owner.auth.token}` } });
    const page = await context.newPage();
    page.setDefaultTimeout(120_000);
    await page.goto(`http://${ideHost}/`);
    await page.locator('.monaco-workbench .part.statusbar').waitFor();
    await page.locator('.monaco-workbench .part.sidebar .explorer-folders-view').waitFor();
    await screenshot(page, 'editor-code-server-workbench');
    assert.equal(await page.locator('.monaco-workbench .part.editor .tabs-container .tab').count(), 0, 'no editor opened by itself');
    assert.equal(await page.locator('.monaco-workbench .part.panel').isVisible(), false, 'no panel');
    assert.equal(await page.locator('.monaco-workbench .part.auxiliarybar').isVisible(), false, 'no secondary side bar');
  } finally {
    await browser.close();
  }
  const volume = path.join(server!.server.config.dataDir, 'volumes', String(ws));
  for (const name of ['.cache', '.local', '.config', '.code-server', '.vscode-server-oss', '.svc']) {
    await assert.rejects(access(path.join(volume, 'app', name)), `${name} is not in /data/app`);
  }
  await access(path.join(volume, '.svc/code-server/user-data/User/settings.json'));
  // terminals of the editor are bash as a login shell, like the console's and svc ssh
  const machine = JSON.parse(await readFile(path.join(volume, '.svc/code-server/user-data/Machine/settings.json'), 'utf8'));
  assert.equal(machine['terminal.integrated.defaultProfile.linux'], 'bash');
  assert.deepEqual(machine['terminal.integrated.profiles.linux'].bash, { path: 'bash', args: ['-c', '[ -r /tmp/svc/managed-services.env ] && . /tmp/svc/managed-services.env; exec bash -l'] });
});

/** Waits for the operation to succeed (fails on its failure or after a minute). */
async function finished(operationId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const operation = (await owner.get(`/operations/${operationId}`)).body;
    if (operation.state === 'succeeded') return;
    if (operation.state === 'failed' || Date.now() > deadline) throw new Error(`operation: ${JSON.stringify(operation)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The files of code-server's compile cache in the volume (Node writes them under a directory named by its version). */
async function compileCacheFiles(volume: string): Promise<string[]> {
  const root = path.join(volume, '.svc/code-server/cache/node-compile-cache');
  const versions = await readdir(root).catch(() => []);
  return (await Promise.all(versions.map(async (v) => (await readdir(path.join(root, v))).map((f) => `${v}/${f}`)))).flat().sort();
}

test("code-server's compile cache is written once it served its page, though a sleep kills the pod; the woken editor finds it", { skip }, async () => {
  const volume = path.join(server!.server.config.dataDir, 'volumes', String(ws));
  // Written right after the first answer of its page (the probe's), while the editor keeps running: Node alone
  // writes it only at a normal exit, which a pod's editor never has.
  const deadline = Date.now() + 30_000;
  while ((await compileCacheFiles(volume)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const written = await compileCacheFiles(volume);
  const podLog = await readFile(path.join(server!.server.config.dataDir, 'pods', `${ws}.log`), 'utf8').catch(() => '');
  assert.ok(written.length > 0, `the running editor wrote its compile cache into the volume; the pod's log:\n${podLog.slice(-3000)}`);

  const slept = await owner.post(`/workspaces/${ws}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  assert.equal((await owner.get(`/workspaces/${ws}`)).body.state, 'sleeping');
  const wake = await owner.post(`/workspaces/${ws}/wake`);
  assert.equal(wake.status, 202, wake.text);
  await finished(wake.body.id);
  const page = await callEditor('/');
  assert.ok(page.status < 400, `the woken editor answers its page (${page.status})`);
  assert.deepEqual(await compileCacheFiles(volume), written, 'the woken editor found the cache and had nothing new to write');
});

test("the editor loads code-server's Node side from the bundle scripts/setup-editor.sh wrote beside it", { skip: skip || (existsSync(path.join(toolsDir, 'code-server-bundle/server.json')) ? false : `no bundle in ${toolsDir}; run scripts/setup-editor.sh`) }, async () => {
  const podLog = await readFile(path.join(server!.server.config.dataDir, 'pods', `${ws}.log`), 'utf8');
  assert.match(podLog, /code-server-launch: code-server's Node side from \/opt\/svc-tools\/code-server-bundle\/server\.cjs/);
  assert.doesNotMatch(podLog, /loading code-server's own modules/);
});
