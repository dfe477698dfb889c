// The console's workspace page says what keeps the workspace awake (issue 40), in Debian's Chromium against a real
// server with a real pod: the activity line (when it sleeps if nobody uses it; once asleep, since when and why),
// and the keep-awake with who asked, asked for and ended from the page. Screenshot: test-output/console/activity.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot, unreachableControls } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let served: ServedWorkspace;
let browser: Browser;
let page: Page;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  served = await servedWorkspace(server, 'lively');
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const ownerId = (await served.owner.get('/me')).body.id;
  const link = await server.admin.post(`/users/${ownerId}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});

after(async () => {
  await browser?.close();
  if (served) await removeWorkspaces(server.server.driver, [served.id]);
  await served?.repository.remove();
  await server?.close();
});

test('the workspace page shows the activity line and the keep-awake with who asked; Keep awake and End work', async () => {
  await page.goto(`${server.url}/workspaces/${served.id}`);
  const activity = page.getByTestId('workspace-activity');
  await activity.waitFor();
  assert.match((await activity.textContent()) ?? '', /^Awake: sleeps at .+ if nobody uses it; last use: /);
  const keepAwake = page.getByTestId('keep-awake');
  await page.getByLabel('Keep awake for').selectOption({ label: '4 hours' });
  await keepAwake.getByRole('button', { name: 'Keep awake' }).click();
  await keepAwake.getByText('(asked by lively-owner@example.com)').waitFor();
  assert.match((await keepAwake.textContent()) ?? '', /^until .+ \(asked by lively-owner@example\.com\)/);
  const listed = (await served.owner.get(`/workspaces/${served.id}`)).body.keep_awake;
  assert.equal(new Date(listed.until).getTime() - new Date(listed.asked_at).getTime(), 4 * 3600_000);
  assert.deepEqual(await unreachableControls(page), []);
  await screenshot(page, 'activity');

  await keepAwake.getByRole('button', { name: 'End' }).click();
  await keepAwake.getByRole('button', { name: 'Keep awake' }).waitFor();
  assert.equal((await served.owner.get(`/workspaces/${served.id}`)).body.keep_awake, undefined);

  // asleep: the line says since when and why (the page follows the workspace's events)
  const slept = await served.owner.post(`/workspaces/${served.id}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  await page.getByText(/^Asleep since .+: put to sleep by hand; last use: /).waitFor();
  assert.equal(await keepAwake.count(), 0, 'a sleeping workspace offers no keep-awake');
});
