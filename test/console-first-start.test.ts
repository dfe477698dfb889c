// The first screen leads somewhere (issue 35, item 5), in Chromium against a fresh server started as `npm run up`
// starts it (SVC_FIRST_TEAM on, local repositories of the starting user allowed): the first start made the
// administrator's organization and team, so the first sign-in lands on a form that creates a workspace, in one form.
// A clone that fails there is corrected beside its Retry and cloned again, and its failure leaves the dock (item 3).
// A local path of another user is refused naming the setting; the Teams page hint knows an organization exists.
import assert from 'node:assert/strict';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { assertProblem, createPerson } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

let server: TestServer;
let repository: BareRepository;
let browser: Browser;
let page: Page;
let foreign: string;
const created: number[] = [];

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer({ env: { SVC_FIRST_TEAM: 'true', SVC_ALLOW_LOCAL_REPOSITORIES: 'own' } });
  repository = await createBareRepository({ 'README.md': '# first\n' });
  foreign = await mkdtemp(path.join(os.tmpdir(), 'svc-foreign-repo-'));
  await chown(foreign, 54321, 54321);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
});

after(async () => {
  await browser?.close();
  if (server) await removeWorkspaces(server.server.driver, created);
  await server?.close();
  await repository?.remove();
  if (foreign) await rm(foreign, { recursive: true, force: true });
});

const shows = (selector: string, text: string | RegExp, timeout = 30_000) => page.locator(selector, { hasText: text }).first().waitFor({ timeout });

test('the first start made the administrator an organization and a team they administer', async () => {
  const teams = (await server.admin.get('/teams')).body.items;
  assert.deepEqual(teams.map((t: { name: string }) => t.name), ['My team']);
  assert.ok(teams[0].permissions.includes('workspace.create'));
  const orgs = (await server.admin.get('/orgs')).body.items;
  assert.deepEqual(orgs.map((o: { name: string }) => o.name), ['My organization']);
});

test('the first sign-in lands on a form that creates a workspace; a failed clone is corrected and retried there, and its failure leaves the dock', async () => {
  const link = await server.admin.post(`/users/${server.adminSession.auth.userId}/sign-in-links`);
  await page.goto(link.body.url);
  const form = page.getByRole('form', { name: 'New workspace' });
  await form.getByRole('heading', { name: 'Create a workspace in My team' }).waitFor();
  assert.equal(await page.getByText('you are in none yet').count(), 0);
  await screenshot(page, 'first-start-01-create');
  await form.locator('input[name="name"]').fill('first');
  await form.locator('input[name="repo"]').fill(repository.url);
  await form.locator('input[name="ref"]').fill('nope');
  await form.getByRole('button', { name: 'Create workspace' }).click();
  await shows('tr[data-workspace="first"] .badge', 'Error', 90_000);
  created.push((await server.admin.get('/workspaces')).body.items.find((w: { name: string }) => w.name === 'first').id);
  await shows('.dock .dock-line.state-failed', 'Create workspace');

  server.clock.advance(1000); // (the test server's clock stands still; the retry comes a second after the failure)
  const fix = page.locator('tr[data-workspace="first"]');
  await fix.getByRole('link', { name: 'first', exact: true }).click();
  const correction = page.getByRole('form', { name: 'Correct the repository' });
  await correction.getByLabel('Branch, tag or commit').fill('');
  await screenshot(page, 'first-start-02-correct');
  await correction.getByRole('button', { name: 'Save and retry' }).click();
  await shows('.ws-head .badge', 'Running', 90_000);
  await page.getByRole('link', { name: 'Workspaces', exact: true }).first().click();
  await shows('tr[data-workspace="first"] .badge', 'Running');
  assert.doesNotMatch((await fix.locator('td.source').textContent()) ?? '', /nope/, 'Source shows the corrected ref');
  assert.equal(await page.locator('.dock .dock-line.state-failed').count(), 0, `the failure left the dock once its workspace moved on: ${await page.locator('.dock').allTextContents()}`);
});

test('a failure whose workspace was retried while the page was away does not come back to the dock after the reload', async () => {
  const team = (await server.admin.get('/teams')).body.items[0].id;
  const answer = await server.admin.post('/workspaces', { team_id: team, name: 'second', git: { provider: 'git', repo: repository.url, ref: 'nope' } });
  const id = Number(answer.body.target.split('/')[2]);
  created.push(id);
  await page.goto(`${server.url}/`);
  await shows('.dock .dock-line.state-failed', 'second', 90_000);
  await page.goto('about:blank'); // away: the retry below is seen by no event stream of this page
  server.clock.advance(1000);
  const read = await server.admin.get(`/workspaces/${id}`);
  const fixed = await server.admin.patch(`/workspaces/${id}`, { git: { ref: null } }, { headers: { 'if-match': read.headers.get('etag')! } });
  assert.equal(fixed.status, 200, fixed.text);
  const retry = await server.admin.post(`/workspaces/${id}/wake`, {});
  for (const deadline = Date.now() + 90_000; ; ) {
    const state = (await server.admin.get(`/operations/${retry.body.id}`)).body.state;
    if (state === 'succeeded') break;
    assert.ok(state !== 'failed' && Date.now() < deadline, `the retry ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const workspaceRead = page.waitForResponse((response) => response.url().endsWith(`/api/v1/workspaces/${id}`));
  await page.goto(`${server.url}/`);
  await workspaceRead;
  await shows('tr[data-workspace="second"] .badge', 'Running');
  await page.locator('.dock .dock-line.state-failed', { hasText: 'second' }).waitFor({ state: 'detached' });
});

test("a local path of another user is refused naming --allow-local-repositories (the starting user's own was cloned above)", async () => {
  const team = (await server.admin.get('/teams')).body.items[0].id;
  const refused = await server.admin.post('/workspaces', { team_id: team, name: 'foreign', git: { provider: 'git', repo: foreign } });
  assertProblem(refused, 422, 'repository-not-allowed');
  assert.match(refused.body.detail, /--allow-local-repositories true/);
  assert.equal(refused.body.errors[0].pointer, '/git/repo');
});

test('the Teams page of a person with an organization but no team says to create the team, not the organization', async () => {
  const person = await createPerson(server.admin, 'org-only@example.com');
  assert.equal((await person.key.post('/orgs', { name: 'Side org' })).status, 201);
  const link = await server.admin.post(`/users/${person.id}/sign-in-links`);
  const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    const tab = await other.newPage();
    await tab.goto(link.body.url);
    await tab.getByRole('link', { name: 'Teams' }).click();
    await tab.locator('.empty', { hasText: 'No teams yet in Side org' }).waitFor();
    assert.equal(await tab.getByText('create an organization').count(), 0);
  } finally {
    await other.close();
  }
});
