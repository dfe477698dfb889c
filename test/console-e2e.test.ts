// The browser console end to end: Debian's Chromium (playwright-core) against a real server with real pods. Signs
// in with a link, creates a key and sees its token once, creates an organization and a team, creates a workspace
// from a git repository and watches it reach Running without a reload, plans and syncs its landscape until the
// services run, runs the prepare stage and reads a step's log, sets variables, and puts the workspace to sleep.
// Screenshots of the main pages go to test-output/console/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
prepare:
  - name: say hello
    run: echo prepared the workspace
services:
  web:
    type: steps
    needs: [api]
    steps:
      - run: node server.js web 8080
    ports:
      - port: 8080
        routes: [{ path: / }]
  api:
    type: steps
    steps:
      - run: node server.js api 3000
    ports:
      - port: 3000
        routes: [{ path: /api, strip: true }]
`;

const serverJs = `const http = require('node:http');
const [name, port] = process.argv.slice(2);
http.createServer((req, res) => res.end(name + ' says hello')).listen(Number(port), '0.0.0.0', () => console.log(name + ' listening on ' + port));
`;

let server: TestServer;
let repository: BareRepository;
let browser: Browser;
let page: Page;
let ws: number | undefined;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  repository = await createBareRepository({ 'svc.yml': svcYml, 'server.js': serverJs });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
});

after(async () => {
  await browser?.close();
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  await repository?.remove();
});

/** Waits until the element matched by `selector` shows `text` (live updates, no reload, no fixed sleep). */
const shows = (selector: string, text: string | RegExp, timeout = 30_000) => page.locator(selector, { hasText: text }).first().waitFor({ timeout });
const button = (name: string | RegExp) => page.getByRole('button', { name, exact: typeof name === 'string' });

test('the server serves the console: client routes get index.html (no-store, strict CSP), assets a long cache, server routes win', async () => {
  const index = await fetch(`${server.url}/workspaces/12?tab=stages`);
  assert.equal(index.status, 200);
  assert.match(index.headers.get('content-type')!, /^text\/html/);
  assert.equal(index.headers.get('cache-control'), 'no-store');
  assert.match(index.headers.get('content-security-policy')!, /script-src 'self';/);
  assert.doesNotMatch(index.headers.get('content-security-policy')!, /unsafe-inline/);
  const html = await index.text();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
  const asset = await fetch(`${server.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(asset.status, 200);
  assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(asset.headers.get('content-type')!, /javascript/);
  assert.equal((await fetch(`${server.url}/assets/missing-123.js`)).status, 404);
  const api = await fetch(`${server.url}/api/v1/nowhere`);
  assert.equal(api.status, 404);
  assert.equal((await api.json()).type, 'urn:svc:problem:not-found');
  const cliLogin = await fetch(`${server.url}/cli-login`);
  assert.match(await cliLogin.text(), /Sign in the command line/);
  assert.match((await fetch(`${server.url}/api/v1/openapi.yaml`)).headers.get('content-type')!, /yaml/);
});

test('signing in with a link lands in the console; the token leaves the address bar', async () => {
  await page.goto(`${server.url}/workspaces`);
  await page.waitForURL(/\/sign-in\?return=%2Fworkspaces$/);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await screenshot(page, '01-sign-in');
  const link = await server.admin.post(`/users/${server.adminSession.auth.userId}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  assert.equal(new URL(page.url()).hash, '');
  await shows('.empty', 'you are in none yet');
  await shows('.link-state', 'Live');
});

test('a new API key is shown once with a copy button, works, and is listed by its prefix only', async () => {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Name', { exact: true }).fill('e2e laptop');
  await button('Create key').click();
  const token = (await page.getByTestId('new-token').textContent())!.trim();
  assert.match(token, /^svc_[0-9a-f-]+_\S+$/);
  const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(me.status, 200);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await button('Copy').click();
  await button('Copied').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
  await shows('table[aria-label="API keys"] tr', 'e2e laptop');
  await screenshot(page, '02-settings-new-key');
  await page.reload();
  await shows('table[aria-label="API keys"] tr', 'e2e laptop');
  assert.equal(await page.getByTestId('new-token').count(), 0);
  assert.ok(!(await page.content()).includes(token), 'the token is not shown again');
});

test('an organization and a team are created on the Teams page', async () => {
  await page.getByRole('link', { name: 'Teams' }).click();
  await page.locator('input[name="org-name"]').fill('Acme');
  await button('Create organization').click();
  await page.locator('input[name="team-name"]').fill('Web');
  await button('Create team').click();
  await shows('table[aria-label="Teams"] tr', 'Web');
  await shows('table[aria-label="Members"] tr', 'admin@localhost');
  await screenshot(page, '03-teams');
});

test('a workspace created from a git repository reaches Running without a reload', async () => {
  await page.getByRole('link', { name: 'Workspaces' }).click();
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  await button('New workspace').click();
  await page.locator('input[name="name"]').fill('shop');
  await page.locator('input[name="repo"]').fill(repository.url);
  await button('Create workspace').click();
  await shows('tr[data-workspace="shop"]', /Creating|Cloning|Running/);
  const listed = await server.admin.get('/workspaces');
  ws = listed.body.items.find((w: { name: string }) => w.name === 'shop').id;
  await shows('tr[data-workspace="shop"] .badge', 'Running', 120_000);
  await shows('tr[data-workspace="shop"] .status-text', 'Workspace is running');
  assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'the page was not reloaded');
  await screenshot(page, '04-workspaces');
});

test('Plan shows a diff, Sync sends its hash, and the services reach Running', async () => {
  // the workspace's row (the Operations panel may still list its creation while prepare runs)
  await page.locator('tr[data-workspace="shop"]').getByRole('link', { name: 'shop', exact: true }).click();
  await shows('[data-testid="banner"]', 'No landscape yet');
  await button('Plan').click();
  await shows('[data-plan-service="web"]', 'create');
  await shows('[data-plan-service="api"]', 'create');
  await screenshot(page, '05-plan');
  await button('Sync').click();
  await shows('tr[data-service="api"] .badge', 'Running', 90_000);
  await shows('tr[data-service="web"] .badge', 'Running', 90_000);
  await shows('[data-testid="banner"]', 'In sync');
  await shows('.dev-url .badge', 'Served');
  await shows('tr[data-service="web"]', '1 / 1');
  await screenshot(page, '06-landscape');
});

test('Open dev URL signs in on the workspace address in a new tab; /workspace-sign-in does it for the router', async () => {
  const [tab] = await Promise.all([page.context().waitForEvent('page'), page.locator('.ws-head').getByRole('button', { name: 'Open dev URL' }).click()]);
  await tab.locator('body', { hasText: 'web says hello' }).waitFor();
  assert.match(tab.url(), new RegExp(`^http://w${ws}\\.localhost:\\d+/$`));
  await tab.close();
  const host = `w${ws}.localhost:${new URL(server.url).port}`;
  const visit = await page.context().newPage();
  await visit.goto(`${server.url}/workspace-sign-in?host=${encodeURIComponent(host)}&next=${encodeURIComponent('/api/hi')}`);
  await visit.locator('body', { hasText: 'api says hello' }).waitFor();
  assert.equal(visit.url(), `http://${host}/api/hi`);
  await visit.close();
  // Without a console session: the sign-in page first, then back to /workspace-sign-in, then the workspace.
  const stranger = await browser.newContext();
  const fresh = await stranger.newPage();
  await fresh.goto(`${server.url}/workspace-sign-in?host=${encodeURIComponent(host)}&next=%2F`);
  await fresh.waitForURL(/\/sign-in\?return=%2Fworkspace-sign-in%3Fhost%3D/);
  const link = new URL((await server.admin.post(`/users/${server.adminSession.auth.userId}/sign-in-links`)).body.url);
  await fresh.goto(`${server.url}/sign-in${new URL(fresh.url()).search}${link.hash}`);
  await fresh.locator('body', { hasText: 'web says hello' }).waitFor();
  assert.equal(fresh.url(), `http://${host}/`);
  await stranger.close();
});

test("a service's log and its run switch", async () => {
  await page.locator('tr[data-service="web"]').getByRole('button', { name: 'Logs' }).click();
  await shows('.log', 'web listening on 8080');
  await button('Close').click();
  await page.locator('tr[data-service="api"]').getByRole('button', { name: 'Stop' }).click();
  await shows('tr[data-service="api"] .badge', 'Stopped');
  await page.locator('tr[data-service="api"]').getByRole('button', { name: 'Start' }).click();
  await shows('tr[data-service="api"] .badge', 'Running', 60_000).catch(async (error: unknown) => {
    const landscape = await server.admin.get(`/workspaces/${ws}/landscape`);
    const row = await page.locator('tr[data-service="api"]').innerText().catch(() => '(no row)');
    throw new Error(`api did not show Running: the row reads "${row}"; the API says ${JSON.stringify(landscape.body.services?.find((s: { name: string }) => s.name === 'api'))}`, { cause: error });
  });
});

test('the prepare stage runs; its step succeeds and its log is shown', async () => {
  await page.getByRole('tab', { name: 'Stages' }).click();
  // svc ran prepare by itself after the clone; a run by hand follows it
  await shows('#stage-prepare', 'by svc after the clone');
  await button('Start prepare').click();
  await page.locator('#stage-prepare', { hasNotText: 'by svc after the clone' }).waitFor();
  await shows('#stage-prepare [data-step="say hello"] .badge', 'Succeeded', 60_000);
  await page.locator('#stage-prepare [data-step="say hello"] button.step').click();
  await shows('#stage-prepare .log', 'prepared the workspace');
  await screenshot(page, '07-stages');
});

test('variables show their value, secrets never do; the banner notices the change', async () => {
  await page.getByRole('tab', { name: 'Variables & secrets' }).click();
  const variable = page.getByRole('form', { name: 'Add a variable' });
  await variable.getByLabel('Name').fill('GREETING');
  await variable.getByLabel('Value').fill('hello there');
  await variable.getByRole('button', { name: 'Add variable' }).click();
  await shows('table[aria-label="Variables"] tr', 'hello there');
  const secret = page.getByRole('form', { name: 'Add a secret' });
  await secret.getByLabel('Name').fill('TOKEN');
  await secret.getByLabel('Value').fill('s3cret-value');
  await secret.getByRole('button', { name: 'Add secret' }).click();
  await shows('table[aria-label="Secrets"] tr', 'TOKEN');
  assert.ok(!(await page.content()).includes('s3cret-value'));
  await variable.getByLabel('Name').fill('SVC_MINE');
  await variable.getByLabel('Value').fill('x');
  await variable.getByRole('button', { name: 'Add variable' }).click();
  await shows('[role="alert"]', 'reserved for the platform');
  await screenshot(page, '08-variables');
  await page.getByRole('tab', { name: 'Landscape' }).click();
  await shows('[data-testid="banner"]', 'Variables or settings changed since the last Sync');
});

test('Sleep puts the workspace to sleep; its state follows live', async () => {
  await page.locator('.ws-head').getByRole('button', { name: 'Sleep' }).click();
  await shows('[data-testid="workspace-state"] .badge', 'Sleeping');
  await shows('[data-testid="workspace-state"] .status-text', 'Asleep');
  await page.locator('.ws-head').getByRole('button', { name: 'Wake' }).waitFor();
  await screenshot(page, '09-workspace-asleep');
  await page.getByRole('link', { name: 'Operations' }).click();
  await shows('ul[aria-label="Operations"] li', 'Sync');
  await screenshot(page, '10-operations');
});

test('from the list: rename, delete into Recently deleted, restore', async () => {
  await page.getByRole('link', { name: 'Workspaces' }).click();
  await page.locator('summary[aria-label="More actions for shop"]').click();
  await button('Rename').click();
  await page.getByLabel('New name').fill('Bad Name');
  await button('Save').click();
  await shows('.field-error', 'must have only lowercase letters, digits and dashes');
  await page.getByLabel('New name').fill('store');
  await button('Save').click();
  await shows('tr[data-workspace="store"]', 'Sleeping');
  await page.locator('summary[aria-label="More actions for store"]').click();
  await button('Delete').click();
  await page.getByRole('group', { name: /Delete store\?/ }).getByRole('button', { name: 'Delete' }).click();
  await shows('table[aria-label="Recently deleted"] tr[data-workspace="store"]', 'store', 60_000);
  await screenshot(page, '11-recently-deleted');
  await page.locator('table[aria-label="Recently deleted"] tr[data-workspace="store"]').getByRole('button', { name: 'Restore' }).click();
  await shows('table[aria-label="Workspaces"] tr[data-workspace="store"]', 'store', 60_000);
});
