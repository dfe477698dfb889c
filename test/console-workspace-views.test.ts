// What the console shows of a running workspace, in Debian's Chromium against a real server with a real pod: the
// terminal tab (a shell over the exec WebSocket with the session cookie), the Operations history, a failed stage
// step's log, ports and routes with their URLs, the editor, the dock that never covers a control, Retry for a
// workspace in Error, the forms' new fields and messages, the dark theme and a 390 px wide screen.
// Screenshots of every page go to test-output/console/ (views-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import WebSocket from 'ws';
import { publishEvent } from '../src/events/publish.ts';
import { operationView } from '../src/operations/view.ts';
import { withTransaction } from '../src/store/database.ts';
import { insertOperation } from '../src/store/operations.ts';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { ensureConsoleBuilt, launchBrowser, lowContrastTexts, screenshot, unreachableControls } from './helpers/browser.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

const FILES = {
  'svc.yml': `schema: svc/v1
prepare:
  - name: install
    run: echo installed
  - name: build
    run: echo the build broke >&2; exit 3
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes: [{ path: / }]
      - port: 9090
        public: true
    health: { port: 8080 }
`,
  'web.js': `const http = require('node:http');
for (const port of [8080, 9090]) http.createServer((req, res) => res.end('web ' + port)).listen(port, '0.0.0.0');
`,
};

let server: TestServer;
let served: ServedWorkspace;
let team: number;
let ownerId: number;
let browser: Browser;
let context: BrowserContext;
let page: Page;

async function signedInPage(userId: number, options: Parameters<Browser['newContext']>[0] = {}): Promise<{ context: BrowserContext; page: Page }> {
  const made = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
  const opened = await made.newPage();
  opened.setDefaultTimeout(30_000);
  const link = await server.admin.post(`/users/${userId}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  await opened.goto(link.body.url);
  await opened.getByRole('heading', { name: 'Workspaces' }).waitFor();
  return { context: made, page: opened };
}

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  served = await servedWorkspace(server, 'views', FILES);
  const workspace = (await served.owner.get(`/workspaces/${served.id}`)).body;
  team = workspace.team_id;
  ownerId = (await served.owner.get('/me')).body.id;
  const prepare = await served.owner.post(`/workspaces/${served.id}/stages/prepare/start`, {});
  assert.equal(prepare.status, 202, prepare.text);
  await until(async () => ((await served.owner.get(`/workspaces/${served.id}/stages/prepare`)).body.current?.state === 'failure' ? true : undefined), 'prepare to fail');
  browser = await launchBrowser();
  ({ context, page } = await signedInPage(ownerId));
});

after(async () => {
  await browser?.close();
  if (server) await removeWorkspaces(server.server.driver, [served?.id]);
  await server?.close();
  await served?.repository.remove();
});

const shows = (selector: string, text: string | RegExp, on = page) => on.locator(selector, { hasText: text }).first().waitFor();
const workspacePath = (tab?: string) => `${server.url}/workspaces/${served.id}${tab ? `?tab=${tab}` : ''}`;

test('the Operations page lists operations that finished before it was opened, and filters them', async () => {
  await page.goto(`${server.url}/operations`);
  await shows('ul[aria-label="Operations"] li[data-operation="workspace.create"][data-state="succeeded"]', 'views');
  await shows('ul[aria-label="Operations"] li[data-operation="landscape.sync"][data-state="succeeded"]', /took \d+/);
  await screenshot(page, 'views-01-operations');
  await page.getByLabel('State').selectOption('failed');
  await shows('.empty', 'No operation matches these filters.');
  assert.match(page.url(), /\/operations\?state=failed$/);
  await page.getByLabel('State').selectOption('succeeded');
  await page.getByLabel('Kind').selectOption('landscape.sync');
  await shows('ul[aria-label="Operations"] li[data-operation="landscape.sync"]', 'Sync');
  assert.equal(await page.locator('ul[aria-label="Operations"] li[data-operation="workspace.create"]').count(), 0);
});

test('the workspace page names its editor, and each service its routes and public ports with URLs to copy, the editor and dev URL too', async () => {
  await page.goto(workspacePath());
  const editor = page.getByTestId('editor-kind');
  assert.equal(await editor.getAttribute('data-kind'), 'built-in', 'the test server has no code-server');
  assert.match(await editor.innerText(), /built-in editor.*code-server is not installed/);
  const port = new URL(server.url).port;
  const addresses = page.locator('ul[aria-label="Addresses of web"]');
  await addresses.locator('a', { hasText: `http://w${served.id}.localhost:${port}/` }).waitFor();
  await addresses.locator('a', { hasText: `http://w${served.id}-9090.localhost:${port}/` }).waitFor();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await addresses.getByTitle(`Copy http://w${served.id}-9090.localhost:${port}/`).click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `http://w${served.id}-9090.localhost:${port}/`);
  await page.locator('.facts').getByTitle('Copy the dev URL').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `http://w${served.id}.localhost:${port}/`);
  await page.locator('.facts').getByTitle('Copy the editor URL').click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `http://ide-w${served.id}.localhost:${port}/`);
  // the SSH endpoint (issue 38): the one-line command and the VS Code link
  const ssh = page.getByTestId('ssh-command');
  assert.match(await ssh.locator('code').first().innerText(), /^ssh [a-z0-9-]+\.[a-z0-9-]+\.svc$/);
  assert.match((await ssh.getByRole('link', { name: 'Open in VS Code' }).getAttribute('href')) ?? '', /^vscode:\/\/vscode-remote\/ssh-remote\+[a-z0-9-]+\.[a-z0-9-]+\.svc\/data\/app$/);
  await screenshot(page, 'views-02-workspace');
});

test('the terminal tab runs a shell in /data/app with HOME at /data/home: echo $HOME; pwd, and a resize reaches the shell', async () => {
  await page.goto(workspacePath('terminal'));
  await page.locator('[data-testid="terminal-state"][data-state="open"]').waitFor();
  const terminal = page.getByTestId('terminal');
  const screen = () => terminal.locator('.xterm-rows').innerText();
  const seen = (pattern: RegExp) => until(async () => (pattern.test(await screen()) ? true : undefined), `${pattern} on the terminal`, 30_000);
  await page.keyboard.type('echo $HOME; pwd\n');
  await seen(/echo \$HOME; pwd\s*\n\s*\/data\/home\s*\n\s*\/data\/app/);
  const size = async () => ({ cols: Number(await terminal.getAttribute('data-cols')), rows: Number(await terminal.getAttribute('data-rows')) });
  const before = await size();
  await page.keyboard.type('echo size=$(stty size)\n');
  await seen(new RegExp(`size=${before.rows} ${before.cols}\\b`));
  await screenshot(page, 'views-03-terminal');
  await page.setViewportSize({ width: 900, height: 700 });
  const after = await until(async () => {
    const now = await size();
    return now.cols !== before.cols ? now : undefined;
  }, 'the terminal to fit the narrower window');
  await page.keyboard.type('echo size=$(stty size)\n');
  await seen(new RegExp(`size=${after.rows} ${after.cols}\\b`));
  await page.keyboard.type('exit 4\n');
  await shows('[data-testid="terminal-state"][data-state="ended"]', 'exit code 4');
  await page.setViewportSize({ width: 1280, height: 860 });
});

test("the exec WebSocket takes the session cookie from the console's origin only", async () => {
  const cookie = (await context.cookies(server.url)).map((c) => `${c.name}=${c.value}`).join('; ');
  const url = `${server.url.replace(/^http/, 'ws')}/api/v1/workspaces/${served.id}/exec?command=true`;
  const attempt = (origin: string) =>
    new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(url, ['v5.channel.k8s.io'], { headers: { cookie, origin } });
      socket.on('open', () => (socket.close(), resolve(101)));
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('error', reject);
    });
  assert.equal(await attempt('http://evil.example'), 403);
  assert.equal(await attempt(`http://w${served.id}.localhost:${new URL(server.url).port}`), 403, 'a page of the workspace itself is another origin');
  assert.equal(await attempt(new URL(server.url).origin), 101);
});

test('a viewer sees no terminal tab', async () => {
  const viewer = await createPerson(server.admin, 'views-viewer@example.com');
  await server.admin.put(`/teams/${team}/members/${viewer.id}`, { role: 'viewer' });
  const signed = await signedInPage(viewer.id);
  await signed.page.goto(workspacePath());
  await signed.page.getByRole('tab', { name: 'Stages' }).waitFor();
  assert.equal(await signed.page.getByRole('tab', { name: 'Terminal' }).count(), 0);
  await signed.page.goto(workspacePath('terminal'));
  await signed.page.getByRole('tab', { name: 'Landscape', selected: true }).waitFor();
  await signed.context.close();
});

test("a failed stage step's log is open without a click, and every step shows its duration", async () => {
  await page.goto(workspacePath('stages'));
  const build = page.locator('#stage-prepare [data-step="build"]');
  await shows('#stage-prepare [data-step="build"] .badge', 'Failed');
  await build.locator('.log', { hasText: 'the build broke' }).waitFor();
  assert.equal(await page.locator('#stage-prepare [data-step="install"] .log').count(), 0);
  for (const step of ['install', 'build']) assert.match(await page.locator(`#stage-prepare [data-step="${step}"] [data-testid="step-duration"]`).innerText(), /^\d+ s$/);
  await screenshot(page, 'views-04-stages');
});

/** An operation of the workspace held running (its lease is elsewhere, so no worker takes it), announced by event. */
async function heldOperation(state: 'running' | 'failed', error?: object): Promise<string> {
  const pool = server.server.database.pool;
  return withTransaction(pool, async (db) => {
    const id = randomUUID();
    await insertOperation(db, { id, kind: 'landscape.sync', target: `/workspaces/${served.id}`, teamId: team, createdBy: ownerId, input: {}, detail: 'Starting web (1 of 1)', at: new Date() });
    const row = (
      await db.query(
        `UPDATE operations SET state = $2, error = $3, finished_at = CASE WHEN $2 = 'failed' THEN now() END, lease_owner = 'elsewhere', lease_until = now() + interval '1 hour'
         WHERE id = $1 RETURNING *`,
        [id, state, error ?? null],
      )
    ).rows[0];
    await publishEvent(db, { type: 'operation.updated', at: new Date().toISOString(), team_id: team, workspace_id: served.id, operation: operationView(row) });
    return id;
  });
}

test('during a Sync the dock is part of the header: no control is covered, and a failure shows once', async () => {
  await page.goto(`${server.url}/?team=${team}`);
  await page.locator('tr[data-workspace="views"]').waitFor();
  const running = await heldOperation('running');
  const failed = await heldOperation('failed', { type: 'urn:svc:problem:plan-changed', title: 'The landscape changed since it was planned', status: 409, detail: 'Plan again.' });
  await shows('.dock .dock-line[data-state="running"]', 'Starting web');
  await shows('.dock .dock-line[data-state="failed"]', 'The landscape changed since it was planned');
  assert.deepEqual(await unreachableControls(page), []);
  await screenshot(page, 'views-05-dock');
  for (const tab of ['', 'stages']) {
    await page.goto(workspacePath(tab));
    await shows('.ws-operations li[data-state="running"]', 'Starting web');
    await page.locator('[role="alert"]', { hasText: 'The landscape changed since it was planned' }).first().waitFor();
    assert.equal(await page.locator('.dock').count(), 0, "the workspace's page lists its operations itself");
    assert.equal(await page.getByText('The landscape changed since it was planned').count(), 1, 'the error shows once');
    assert.deepEqual(await unreachableControls(page), []);
  }
  await page.locator('.ws-operations li[data-state="failed"]').getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await page.getByText('The landscape changed since it was planned').count(), 0);
  await server.server.database.pool.query("UPDATE operations SET state = 'failed', finished_at = now() WHERE id = ANY($1)", [[running, failed]]);
});

test('a workspace in Error offers Retry and no Sleep; a long error keeps the list in its layout', async () => {
  const reason = `IDE failed: ${'the editor exited before it answered; '.repeat(12)}${'x'.repeat(200)}`;
  await insertWorkspace(server.server.database.pool, {
    teamId: team, name: 'broken', plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
    idleTimeoutMinutes: 30, state: 'error', statusDetail: reason, createdBy: ownerId, at: new Date(),
  });
  await page.goto(`${server.url}/?team=${team}`);
  const row = page.locator('tr[data-workspace="broken"]');
  await row.getByRole('button', { name: 'Retry' }).waitFor();
  assert.equal(await row.getByRole('button', { name: 'Sleep' }).count(), 0);
  assert.equal(await row.locator('.status-text').getAttribute('title'), reason);
  const table = await page.locator('table[aria-label="Workspaces"]').boundingBox();
  const section = await page.locator('table[aria-label="Workspaces"]').locator('xpath=..').boundingBox();
  assert.ok(table!.width <= section!.width, `the table (${table!.width} px) fits its section (${section!.width} px)`);
  assert.ok((await row.locator('.status-text').boundingBox())!.height < 60, 'the error keeps to two lines');
  assert.deepEqual(await unreachableControls(page), []);
  await screenshot(page, 'views-06-workspaces-error');
});

test('the new-workspace form takes plan, storage and idle timeout, and says in words what a name must look like', async () => {
  await page.getByRole('button', { name: 'New workspace' }).click();
  const form = page.getByRole('form', { name: 'New workspace' });
  await form.locator('input[name="name"]').fill('-bad-');
  await form.getByRole('button', { name: 'Create workspace' }).click();
  const message = await form.locator('input[name="name"]').evaluate((input: HTMLInputElement) => input.validationMessage);
  assert.match(message, /^Use lowercase letters, digits and dashes/);
  assert.doesNotMatch(message, /requested format/);
  await form.locator('input[name="name"]').fill('sized');
  await form.getByRole('radio', { name: /empty workspace/ }).check();
  assert.equal(await form.locator('select[name="plan"]').inputValue(), 'standard');
  await form.locator('input[name="storage"]').fill('0');
  await form.getByRole('button', { name: 'Create workspace' }).click();
  assert.equal(await form.locator('input[name="storage"]').evaluate((input: HTMLInputElement) => input.validationMessage), 'Storage (GiB) must be at least 1.');
  await form.locator('input[name="storage"]').fill('5');
  await form.locator('input[name="idle"]').fill('45');
  let sent: unknown;
  await page.route('**/api/v1/workspaces', async (route) => {
    sent = route.request().postDataJSON();
    await route.fulfill({ status: 409, contentType: 'application/problem+json', body: JSON.stringify({ type: 'urn:svc:problem:quota-exceeded', title: 'Quota exceeded', status: 409, detail: 'Not in this test.' }) });
  });
  await form.getByRole('button', { name: 'Create workspace' }).click();
  await shows('[role="alert"]', 'Quota exceeded');
  assert.deepEqual(sent, { team_id: team, name: 'sized', plan: 'standard', storage_gib: 5, idle_timeout_minutes: 45 });
  await page.unroute('**/api/v1/workspaces');
  await screenshot(page, 'views-07-new-workspace');
});

test('organizations are listed and a new one is confirmed; a new API key gets an expiry', async () => {
  await page.goto(`${server.url}/teams`);
  await page.locator('table[aria-label="Organizations"] tr[data-org="views"]').waitFor();
  await page.locator('input[name="org-name"]').fill('Second org');
  await page.getByRole('button', { name: 'Create organization' }).click();
  await shows('[role="status"]', 'Organization “Second org” created');
  await page.locator('table[aria-label="Organizations"] tr[data-org="Second org"]').waitFor();
  await screenshot(page, 'views-08-teams');
  await page.goto(`${server.url}/settings`);
  await page.locator('input[name="key-name"]').fill('short-lived');
  await page.locator('select[name="key-expiry"]').selectOption('7');
  await page.getByRole('button', { name: 'Create key' }).click();
  await shows('[aria-label="New API key"]', /It stops working in 7 days/);
  const key = (await served.owner.get('/me/api-keys')).body.items.find((k: { name: string }) => k.name === 'short-lived');
  const days = (new Date(key.expires_at).getTime() - Date.now()) / 86_400_000;
  assert.ok(days > 6.9 && days <= 7, `expires in ${days} days`);
  await screenshot(page, 'views-09-settings');
});

test('Settings → Dotfiles: a URL with a password is refused with the reason; a repository is set', async () => {
  await page.goto(`${server.url}/settings`);
  const field = page.locator('input[name="dotfiles-url"]');
  await field.fill('https://me:secret@git.example.com/me/dotfiles.git');
  await page.getByRole('button', { name: 'Set', exact: true }).click();
  await page.getByText('carries a password', { exact: true }).waitFor();
  assert.deepEqual((await served.owner.get('/me/dotfiles')).body, { url: null });
  await field.fill('https://git.example.com/me/dotfiles.git');
  await page.getByRole('button', { name: 'Set', exact: true }).click();
  await shows('[data-testid="dotfiles-url"]', 'https://git.example.com/me/dotfiles.git');
  assert.deepEqual((await served.owner.get('/me/dotfiles')).body, { url: 'https://git.example.com/me/dotfiles.git' });
  await served.owner.delete('/me/dotfiles');
});

test('with prefers-color-scheme: dark the console is dark', async () => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(workspacePath());
  await page.locator('tr[data-service="web"]').waitFor();
  const luminance = (selector: string) =>
    page.locator(selector).first().evaluate((element) => {
      const [r, g, b] = getComputedStyle(element).backgroundColor.match(/\d+/g)!.map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    });
  assert.ok((await luminance('html')) < 0.15, 'a dark page');
  assert.ok((await luminance('.section')) < 0.2, 'dark panels');
  const text = await page.locator('h1').evaluate((element) => getComputedStyle(element).color.match(/\d+/g)!.map(Number));
  assert.ok(text[0] > 180, 'light text');
  await screenshot(page, 'views-10-dark-workspace');
  await page.goto(workspacePath('stages'));
  await page.locator('#stage-prepare [data-step="build"] .log', { hasText: 'the build broke' }).waitFor();
  assert.deepEqual(await lowContrastTexts(page), [], "a failed step's log and the stages read well in the dark");
  await page.goto(`${server.url}/operations`);
  await page.locator('ul[aria-label="Operations"] li').first().waitFor();
  await screenshot(page, 'views-11-dark-operations');
  await page.emulateMedia({ colorScheme: 'light' });
});

test('at 390 px every control of every page can be reached and clicked', async () => {
  const phone = await signedInPage(ownerId, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const pages: [string, string, string][] = [
    ['/', 'tr[data-workspace="views"]', 'workspaces'],
    [`/workspaces/${served.id}`, 'tr[data-service="web"]', 'workspace'],
    [`/workspaces/${served.id}?tab=stages`, '#stage-prepare [data-step="build"] .log', 'stages'],
    [`/workspaces/${served.id}?tab=variables`, 'table, .empty', 'variables'],
    [`/workspaces/${served.id}?tab=terminal`, '[data-testid="terminal-state"][data-state="open"]', 'terminal'],
    ['/teams', 'table[aria-label="Members"]', 'teams'],
    ['/operations', 'ul[aria-label="Operations"] li', 'operations'],
    ['/settings', 'table[aria-label="API keys"]', 'settings'],
  ];
  for (const [path, ready, name] of pages) {
    await phone.page.goto(`${server.url}${path}`);
    await phone.page.locator(ready).first().waitFor();
    assert.deepEqual(await unreachableControls(phone.page), [], `on ${path}`);
    await screenshot(phone.page, `views-12-phone-${name}`);
  }
  await phone.context.close();
});
