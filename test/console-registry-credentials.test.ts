// The console's "Container registries" section of a team (Teams page) and its container images, in Debian's
// Chromium against a real server and a real registry (docker-registry with basic auth, test/helpers/oci.ts): a team
// admin adds credentials (the password never comes back), sees them listed, and removes them; a private image
// cannot be resolved in the Plan until the team's credentials are added in the console, then the Plan shows
// `image -> digest`, and after Sync the landscape view shows the pinned digest, which stays when the tag moves until
// the next Sync (the Plan says which digest runs now).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { RESOLVE_CACHE_MS } from '../src/images/index.ts';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { pushImage, startRegistry, type TestRegistry } from './helpers/oci.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const credentials = { username: 'puller', password: 'console-pull-secret' };
const busybox = { 'bin/busybox': { busybox: true as const }, 'bin/httpd': { symlink: 'busybox' } };
const httpd = { entrypoint: ['/bin/httpd'], cmd: ['-f', '-p', '8080', '-h', '/www'], credentials };
const short = (digest: string) => digest.slice(0, 'sha256:'.length + 12);

let server: TestServer;
let registry: TestRegistry;
let repository: BareRepository;
let browser: Browser;
let page: Page;
let team: number;
let ws: number;
let first: string;

before(async () => {
  await ensureConsoleBuilt();
  registry = await startRegistry({ basicAuth: credentials });
  first = await pushImage(registry, 'team/web:1', { layers: [busybox, { 'www/index.html': 'version 1\n' }], ...httpd });
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_INSECURE_REGISTRIES: registry.host } });
  const org = (await server.admin.post('/orgs', { name: 'Images Org' })).body.id;
  team = (await server.admin.post('/teams', { org_id: org, name: 'Images Team' })).body.id;
  const yml = `schema: svc/v1\nservices:\n  web:\n    type: container\n    image: ${registry.host}/team/web:1\n    ports:\n      - port: 8080\n        routes: [{ path: / }]\n    health: { port: 8080, mode: http-2xx }\n`;
  repository = await createBareRepository({ 'svc.yml': yml });
  const created = await server.admin.post('/workspaces', { team_id: team, name: 'boxes', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(server.admin, created.body.id)).state, 'succeeded');
  browser = await launchBrowser();
  page = await browser.newPage();
  const link = await server.admin.post(`/users/${server.adminSession.auth.userId}/sign-in-links`);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});
after(async () => {
  await browser?.close();
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  await repository?.remove();
  await registry?.close();
});

test('a team admin adds registry credentials, sees them without the password, and removes them', async () => {
  await page.goto(`${server.url}/teams?team=${team}`);
  const section = page.locator('section', { has: page.getByRole('heading', { name: 'Container registries' }) });
  await section.getByText('No registry credentials').waitFor();
  const form = page.getByRole('form', { name: 'Add registry credentials' });
  await form.getByLabel('Registry').fill('a..b');
  await form.getByLabel('Username').fill('robot');
  await form.getByLabel('Password or token').fill('console-secret');
  await form.getByRole('button', { name: 'Save credentials' }).click();
  await form.locator('.field-error', { hasText: 'must be a host or host:port' }).waitFor();
  await form.getByLabel('Registry').fill('registry.example.com:5000');
  await form.getByRole('button', { name: 'Save credentials' }).click();
  const row = page.locator('table[aria-label="Registry credentials"] tr', { hasText: 'registry.example.com:5000' });
  await row.waitFor();
  assert.match((await row.textContent())!, /robot/);
  assert.ok(!(await page.content()).includes('console-secret'), 'the password is not shown');
  await screenshot(page, 'teams-registry-credentials');
  await row.getByRole('button', { name: 'Remove' }).click();
  await page.getByRole('button', { name: 'Remove' }).last().click();
  await section.getByText('No registry credentials').waitFor();
  assert.deepEqual((await server.admin.get(`/teams/${team}/registry-credentials`)).body.items, []);
});

test("a private image: the Plan cannot resolve it until the team's credentials are added; then image -> digest, and the landscape shows the pinned digest until the next Sync", async () => {
  const plan = page.locator('.plan[aria-label="Plan"]');
  const planImage = page.locator('[data-plan-image="web"]');
  await page.goto(`${server.url}/workspaces/${ws}`);
  await page.getByRole('button', { name: 'Plan', exact: true }).click();
  await planImage.filter({ hasText: 'cannot be resolved' }).waitFor();
  assert.match((await planImage.textContent())!, /unauthorized|401/);

  await page.goto(`${server.url}/teams?team=${team}`);
  const form = page.getByRole('form', { name: 'Add registry credentials' });
  await form.getByLabel('Registry').fill(registry.host);
  await form.getByLabel('Username').fill(credentials.username);
  await form.getByLabel('Password or token').fill(credentials.password);
  await form.getByRole('button', { name: 'Save credentials' }).click();
  await page.locator('table[aria-label="Registry credentials"] tr', { hasText: registry.host }).waitFor();

  await page.goto(`${server.url}/workspaces/${ws}`);
  await page.getByRole('button', { name: 'Plan', exact: true }).click();
  await planImage.filter({ hasText: short(first) }).waitFor();
  assert.equal(await planImage.locator('code').getAttribute('title'), first);
  await screenshot(page, 'landscape-plan-image');
  await plan.getByRole('button', { name: 'Sync' }).click();
  const row = page.locator('tr[data-service="web"]');
  await row.locator('.badge', { hasText: 'Running' }).waitFor({ timeout: 120_000 });
  const shown = row.locator('[data-service-image]');
  assert.equal((await shown.textContent())!.trim(), `${registry.host}/team/web:1 ${short(first)}`);
  assert.equal(await shown.getAttribute('title'), `${registry.host}/team/web:1@${first}`);
  await screenshot(page, 'landscape-pinned-digest');

  const second = await pushImage(registry, 'team/web:1', { layers: [busybox, { 'www/index.html': 'version 2\n' }], ...httpd });
  server.clock.advance(RESOLVE_CACHE_MS);
  await page.reload();
  await page.getByRole('button', { name: 'Plan', exact: true }).click();
  await planImage.filter({ hasText: `runs ${short(first)} now` }).waitFor();
  assert.match((await planImage.textContent())!, new RegExp(`→ ${short(second)} \\(runs ${short(first)} now\\)`));
  assert.equal((await shown.textContent())!.trim(), `${registry.host}/team/web:1 ${short(first)}`, 'the landscape still shows the digest that runs');
  await plan.getByRole('button', { name: 'Sync' }).click();
  await row.locator('[data-service-image]', { hasText: short(second) }).waitFor({ timeout: 120_000 });
  assert.equal(await shown.getAttribute('title'), `${registry.host}/team/web:1@${second}`);
});
