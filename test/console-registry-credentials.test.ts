// The console's "Container registries" section of a team (Teams page), in Debian's Chromium against a real server:
// a team admin adds credentials (the password never comes back), sees them listed, and removes them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
let team: number;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer();
  const org = (await server.admin.post('/orgs', { name: 'Images Org' })).body.id;
  team = (await server.admin.post('/teams', { org_id: org, name: 'Images Team' })).body.id;
  browser = await launchBrowser();
  page = await browser.newPage();
  const link = await server.admin.post(`/users/${server.adminSession.auth.userId}/sign-in-links`);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});
after(async () => {
  await browser?.close();
  await server?.close();
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
