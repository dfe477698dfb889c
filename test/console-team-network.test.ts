// The console's "Network" section of a team (Teams page), in Debian's Chromium against a real server: a team admin
// turns the team's egress off and on again; the API says the same.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
let team: number;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer();
  const org = (await server.admin.post('/orgs', { name: 'Network Org' })).body.id;
  team = (await server.admin.post('/teams', { org_id: org, name: 'Network Team' })).body.id;
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

test("a team admin turns the team's egress off and on in the console", async () => {
  await page.goto(`${server.url}/teams?team=${team}`);
  const section = page.getByLabel('Egress');
  await section.getByText('Egress on:').waitFor();
  await section.getByRole('button', { name: 'Turn egress off' }).click();
  await section.getByText('Egress off:').waitFor();
  await until(async () => ((await server.admin.get(`/teams/${team}/network-settings`)).body.egress === 'off' ? true : undefined), 'the API to say off', 10_000);
  await section.getByRole('button', { name: 'Turn egress on' }).click();
  await section.getByText('Egress on:').waitFor();
  assert.equal((await server.admin.get(`/teams/${team}/network-settings`)).body.egress, 'on');
});
