// Statuses that agree (issue 35, item 4), in Chromium: the landscape banner's "In sync" describes the file, so the
// services' health stands beside it, a failed service named in red; the log panel of a failed service stops
// following and says that the follow ended and why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startLandscapeWorkspace, type LandscapeWorkspace } from './helpers/landscape-workspace.ts';

const svcYml = `schema: svc/v1
services:
  idle:
    type: steps
    steps:
      - run: sleep 3600
  worker:
    type: steps
    steps:
      - run: echo crashing; exit 3
`;

let setup: LandscapeWorkspace;
let browser: Browser;
let page: Page;

before(async () => {
  await ensureConsoleBuilt();
  setup = await startLandscapeWorkspace({ team: 'Health', workspace: 'health', files: { 'svc.yml': svcYml } });
  const synced = await setup.sync();
  assert.equal(synced.state, 'succeeded', JSON.stringify(synced.error));
  await setup.reaches('worker', 'failure');
  await setup.reaches('idle', 'internal');
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(30_000);
  const link = await setup.server.admin.post(`/users/${setup.ownerId}/sign-in-links`);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});

after(async () => {
  await browser?.close();
  await setup?.close();
});

test('beside "In sync" the banner names the failed service, in red', async () => {
  await page.goto(`${setup.server.url}/workspaces/${setup.ws}`);
  const banner = page.getByTestId('banner');
  await banner.locator('strong', { hasText: 'In sync' }).waitFor();
  const health = banner.getByTestId('services-health');
  await health.filter({ hasText: 'Service failed: worker' }).waitFor();
  assert.equal(await health.getAttribute('data-health'), 'bad');
  const color = await health.evaluate((element) => getComputedStyle(element).color);
  const [red, green, blue] = color.match(/\d+/g)!.map(Number);
  assert.ok(red > 150 && green < 100 && blue < 100, `red, not ${color}`);
  assert.doesNotMatch((await health.textContent()) ?? '', /idle/, 'a service that runs is not named');
  await screenshot(page, 'health-01-banner');
});

test("the log panel of a failed service does not follow: it says the follow ended and why, and shows the last lines", async () => {
  await page.locator('tr[data-service="worker"]').getByRole('button', { name: 'Logs' }).click();
  const view = page.locator('.log-view');
  await view.locator('.follow-ended', { hasText: /^Follow ended: worker failed \(.+\)$/ }).waitFor();
  await view.locator('.line', { hasText: 'crashing' }).first().waitFor();
  assert.equal(await view.getByText('following').count(), 0);
  await screenshot(page, 'health-02-log-ended');
});
