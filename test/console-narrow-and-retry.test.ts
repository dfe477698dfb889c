// The console on a 390 px wide phone while things happen, and what issue 16 asks beyond the first look, in Debian's
// Chromium against a real server with a real pod: the dock during a Sync keeps every control reachable
// (element-from-point), on a wide screen too with another workspace's operations over this one's page; so do the forms and menus that open (New workspace, More actions, Rename, Plan, a variable),
// Retry starts a workspace in Error again until it runs (and only then offers Sleep), the Operations page pages to
// older operations, and a variable's name is checked in words. Screenshots go to test-output/console/ (narrow-*.png).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { publishEvent } from '../src/events/publish.ts';
import { operationView } from '../src/operations/view.ts';
import { withTransaction } from '../src/store/database.ts';
import { insertOperation } from '../src/store/operations.ts';
import { ensureConsoleBuilt, launchBrowser, lowContrastTexts, screenshot, unreachableControls } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace, stoppedWorkspace, WEB_FILES, type ServedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let served: ServedWorkspace;
let team: number;
let ownerId: number;
let browser: Browser;
let phone: { context: BrowserContext; page: Page };
let page: Page;

async function signedInPage(options: Parameters<Browser['newContext']>[0]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(options);
  const opened = await context.newPage();
  opened.setDefaultTimeout(30_000);
  const link = await server.admin.post(`/users/${ownerId}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  await opened.goto(link.body.url);
  await opened.getByRole('heading', { name: 'Workspaces' }).waitFor();
  return { context, page: opened };
}

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  served = await servedWorkspace(server, 'narrow', {
    ...WEB_FILES,
    'svc.yml': `${WEB_FILES['svc.yml']}    env:\n      ROLE: web-replica\n`,
  });
  team = (await served.owner.get(`/workspaces/${served.id}`)).body.team_id;
  ownerId = (await served.owner.get('/me')).body.id;
  browser = await launchBrowser();
  phone = await signedInPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  page = phone.page;
});

after(async () => {
  await browser?.close();
  if (server) await removeWorkspaces(server.server.driver, [served?.id]);
  await server?.close();
  await served?.repository.remove();
});

const workspacePath = (tab?: string) => `${server.url}/workspaces/${served.id}${tab ? `?tab=${tab}` : ''}`;

/** Operations of the workspace in the given state, announced by event; running ones hold a lease elsewhere. */
async function operationsOf(
  state: 'running' | 'failed' | 'succeeded',
  count: number,
  fill: { kind?: string; detail?: string; error?: object; workspace?: number } = {},
): Promise<string[]> {
  const workspace = fill.workspace ?? served.id;
  return withTransaction(server.server.database.pool, async (db) => {
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      const id = randomUUID();
      const at = new Date(Date.now() - (count - n) * 60_000);
      await insertOperation(db, { id, kind: fill.kind ?? 'landscape.sync', target: `/workspaces/${workspace}`, teamId: team, createdBy: ownerId, input: {}, detail: fill.detail, at });
      const row = (
        await db.query(
          `UPDATE operations SET state = $2, error = $3, finished_at = CASE WHEN $2 = 'running' THEN NULL ELSE $4::timestamptz END,
             lease_owner = 'elsewhere', lease_until = now() + interval '1 hour'
           WHERE id = $1 RETURNING *`,
          [id, state, fill.error ?? null, new Date(at.getTime() + 5_000)],
        )
      ).rows[0];
      await publishEvent(db, { type: 'operation.updated', at: new Date().toISOString(), team_id: team, workspace_id: workspace, operation: operationView(row) });
      ids.push(id);
    }
    return ids;
  });
}

test('at 390 px during a Sync with a failure beside it, the dock keeps every control of every page reachable', async () => {
  await page.goto(`${server.url}/?team=${team}`);
  await page.locator('tr[data-workspace="narrow"]').waitFor();
  const detail = `Starting web (1 of 1): pulling the image and waiting for its health check on port 8080, ${'then its routes, '.repeat(6)}`;
  const running = await operationsOf('running', 1, { detail });
  const failed = await operationsOf('failed', 1, {
    error: { type: 'urn:svc:problem:plan-changed', title: 'The landscape changed since it was planned, so this Sync was not applied to any service', status: 409, detail: 'Plan again.' },
  });
  await page.locator('.dock .dock-line[data-state="running"]').waitFor();
  await page.locator('.dock .dock-line[data-state="failed"]').waitFor();
  assert.deepEqual(await unreachableControls(page), [], 'on the workspace list');
  await screenshot(page, 'narrow-01-dock-workspaces');
  for (const path of ['/operations', '/teams', '/settings']) {
    await page.goto(`${server.url}${path}`);
    await page.locator('.dock .dock-line[data-state="running"]').waitFor();
    await page.locator('main button, main a[href], main input, main select').first().waitFor();
    assert.deepEqual(await unreachableControls(page), [], `on ${path}`);
  }
  await screenshot(page, 'narrow-02-dock-settings');
  await page.goto(workspacePath());
  await page.locator('.ws-operations li[data-state="running"]').waitFor();
  await page.locator('tr[data-service="web"]').waitFor();
  assert.deepEqual(await unreachableControls(page), [], "on the workspace's page");
  await screenshot(page, 'narrow-03-dock-workspace');
  await server.server.database.pool.query("UPDATE operations SET state = 'failed', finished_at = now() WHERE id = ANY($1)", [[...running, ...failed]]);
});

test("on a wide screen the dock with another workspace's Syncs covers none of this workspace's controls (Stop, Logs, Plan, Teardown) nor the list's row actions", async () => {
  const other = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: ownerId, name: 'other' });
  const desk = await signedInPage({ viewport: { width: 1280, height: 720 } });
  try {
    const held = await operationsOf('running', 5, { workspace: other.id, detail: 'Starting web (1 of 3): waiting for its health check on port 8080' });
    await desk.page.goto(workspacePath());
    await desk.page.locator('tr[data-service="web"]').getByRole('button', { name: 'Logs' }).waitFor();
    await desk.page.locator('.dock .dock-line[data-state="running"]').nth(2).waitFor();
    await desk.page.locator('.dock a', { hasText: '2 more' }).waitFor();
    await desk.page.locator('.dock .dock-line a', { hasText: /^other$/ }).first().waitFor();
    assert.equal(await desk.page.locator('.dock .dock-line', { hasText: `workspace ${other.id}` }).count(), 0, 'each line names its workspace');
    for (const name of ['Stop', 'Logs', 'Plan', 'Teardown']) assert.equal(await desk.page.getByRole('button', { name, exact: true }).count(), 1, name);
    assert.deepEqual(await unreachableControls(desk.page), [], 'on the landscape tab');
    await screenshot(desk.page, 'narrow-10-wide-dock-landscape');
    await desk.page.getByRole('tab', { name: 'Stages' }).click();
    await desk.page.locator('#stage-run').waitFor();
    await until(async () => ((await desk.page.locator('.loading').count()) === 0 ? true : undefined), 'the stages to load');
    assert.deepEqual(await unreachableControls(desk.page), [], 'on the stages tab');
    await desk.page.goto(`${server.url}/?team=${team}`);
    const row = desk.page.locator('tr[data-workspace="narrow"]');
    await row.getByRole('button', { name: 'Sleep' }).waitFor();
    assert.deepEqual(await unreachableControls(desk.page), [], 'on the list');
    await row.locator('summary[aria-label="More actions for narrow"]').click();
    await row.getByRole('button', { name: 'Delete' }).waitFor();
    assert.deepEqual(await unreachableControls(desk.page, 'details.menu[open]'), [], 'in the open row menu');
    await screenshot(desk.page, 'narrow-11-wide-dock-list');
    for (const [path, ready] of [['/teams', 'table[aria-label="Members"]'], ['/settings', 'table[aria-label="API keys"]'], ['/operations', 'ul[aria-label="Operations"] li']]) {
      await desk.page.goto(`${server.url}${path}`);
      await desk.page.locator(ready).first().waitFor();
      await desk.page.locator('.dock .dock-line').nth(2).waitFor();
      await desk.page.locator('.dock a', { hasText: / more$/ }).waitFor();
      await until(async () => ((await desk.page.locator('.loading').count()) === 0 ? true : undefined), `${path} to load`);
      assert.deepEqual(await unreachableControls(desk.page), [], `on ${path}`);
    }
    await server.server.database.pool.query("UPDATE operations SET state = 'succeeded', finished_at = now() WHERE id = ANY($1)", [held]);
  } finally {
    await desk.context.close();
  }
});

test('at 390 px the forms and menus that open keep their controls on screen: New workspace, More, Rename, Plan, a variable', async () => {
  await page.goto(`${server.url}/?team=${team}`);
  const row = page.locator('tr[data-workspace="narrow"]');
  await page.getByRole('button', { name: 'New workspace' }).click();
  await page.getByRole('form', { name: 'New workspace' }).locator('select[name="plan"]').waitFor();
  assert.deepEqual(await unreachableControls(page), [], 'with the New workspace form open');
  await screenshot(page, 'narrow-04-new-workspace');
  await page.getByRole('form', { name: 'New workspace' }).getByRole('button', { name: 'Cancel' }).click();
  await row.locator('summary[aria-label="More actions for narrow"]').click();
  await row.getByRole('button', { name: 'Rename' }).waitFor();
  assert.deepEqual(await unreachableControls(page, 'details.menu[open]'), [], 'in the open More menu');
  await screenshot(page, 'narrow-05-more-menu');
  await row.getByRole('button', { name: 'Rename' }).click();
  await page.locator('input[value="narrow"]').waitFor();
  assert.deepEqual(await unreachableControls(page), [], 'with the Rename form open');

  await page.goto(workspacePath());
  await page.locator('tr[data-service="web"]').waitFor();
  await page.getByRole('button', { name: 'Plan', exact: true }).click();
  await page.getByRole('button', { name: /^Sync/ }).waitFor();
  assert.deepEqual(await unreachableControls(page), [], 'with the plan open');
  await screenshot(page, 'narrow-06-plan');

  await page.goto(workspacePath('variables'));
  const form = page.getByRole('form', { name: 'Add a variable' });
  await form.locator('input[placeholder="NAME"]').fill('1BAD');
  await form.getByRole('button', { name: 'Add variable' }).click();
  const message = await form.locator('input[placeholder="NAME"]').evaluate((input: HTMLInputElement) => input.validationMessage);
  assert.equal(message, 'Use letters, digits and underscores, not starting with a digit (for example API_URL).');
  assert.deepEqual(await unreachableControls(page), [], 'on the variables tab');
  await screenshot(page, 'narrow-07-variables');
});

test('in the light and the dark theme every text can be read: contrast at least 4.5 (WCAG AA) on every page, with a Sync in the dock', async () => {
  const held = await operationsOf('running', 1, { workspace: 999_999, detail: 'Starting web (1 of 1)' });
  const desk = await signedInPage({ viewport: { width: 1280, height: 860 } });
  try {
    for (const scheme of ['light', 'dark'] as const) {
      await desk.page.emulateMedia({ colorScheme: scheme });
      const pages: [string, string][] = [
        ['/', 'tr[data-workspace="narrow"]'],
        [`/workspaces/${served.id}`, 'tr[data-service="web"]'],
        [`/workspaces/${served.id}?tab=stages`, '#stage-run'],
        [`/workspaces/${served.id}?tab=variables`, 'form[aria-label="Add a variable"]'],
        ['/operations', 'ul[aria-label="Operations"] li'],
        ['/teams', 'table[aria-label="Members"]'],
        ['/settings', 'table[aria-label="API keys"]'],
      ];
      for (const [path, ready] of pages) {
        await desk.page.goto(`${server.url}${path}`);
        await desk.page.locator(ready).first().waitFor();
        await desk.page.locator('.dock .dock-line[data-state="running"]').waitFor();
        await until(async () => ((await desk.page.locator('.loading').count()) === 0 ? true : undefined), `${path} to load`);
        assert.deepEqual(await lowContrastTexts(desk.page), [], `${path} in the ${scheme} theme`);
        if (!path.startsWith('/workspaces/')) await desk.page.locator('.dock .dock-line[data-state="failed"] a', { hasText: /^narrow$/ }).first().waitFor();
      }
      await desk.page.goto(workspacePath());
      await desk.page.getByRole('button', { name: 'Plan', exact: true }).click();
      await desk.page.getByRole('button', { name: 'Sync', exact: true }).waitFor();
      assert.deepEqual(await lowContrastTexts(desk.page), [], `the plan in the ${scheme} theme`);
    }
    await screenshot(desk.page, 'narrow-13-dark-settings');
  } finally {
    await server.server.database.pool.query("UPDATE operations SET state = 'succeeded', finished_at = now() WHERE id = ANY($1)", [held]);
    await desk.context.close();
  }
});

test('the sign-in page at 390 px: every control reachable, every text readable in both themes', async () => {
  const visitor = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const signIn = await visitor.newPage();
    for (const scheme of ['light', 'dark'] as const) {
      await signIn.emulateMedia({ colorScheme: scheme });
      await signIn.goto(server.url);
      await signIn.getByRole('heading', { name: 'Sign in' }).waitFor();
      assert.deepEqual(await unreachableControls(signIn), [], `in the ${scheme} theme`);
      assert.deepEqual(await lowContrastTexts(signIn), [], `in the ${scheme} theme`);
    }
    await screenshot(signIn, 'narrow-14-sign-in-dark');
  } finally {
    await visitor.close();
  }
});

test('the Operations page shows older operations page by page', async () => {
  await operationsOf('succeeded', 60, { kind: 'workspace.archive' });
  await page.goto(`${server.url}/operations?kind=workspace.archive`);
  const rows = page.locator('ul[aria-label="Operations"] li[data-operation="workspace.archive"]');
  await until(async () => ((await rows.count()) === 50 ? true : undefined), 'the first 50 operations');
  await page.getByRole('button', { name: 'Show older' }).click();
  await until(async () => ((await rows.count()) === 60 ? true : undefined), 'all 60 operations');
  assert.equal(await page.getByRole('button', { name: 'Show older' }).count(), 0, 'nothing older is left');
  assert.deepEqual(await unreachableControls(page), []);
});

test('a workspace in Error offers Retry and no Sleep; Retry starts it again until it runs, and then it offers Sleep', async () => {
  const slept = await served.owner.post(`/workspaces/${served.id}/sleep`, {});
  assert.equal(slept.status, 200, slept.text);
  // As a failed wake leaves it: the pod gone, the state Error with the reason.
  await server.server.database.pool.query("UPDATE workspaces SET state = 'error', status_detail = 'Starting the editor failed: it exited with code 1' WHERE id = $1", [served.id]);
  await page.goto(workspacePath());
  const head = page.locator('.ws-head');
  await head.getByRole('button', { name: 'Retry' }).waitFor();
  assert.equal(await head.getByRole('button', { name: 'Sleep' }).count(), 0);
  assert.match(await page.getByTestId('workspace-state').innerText(), /Error[\s\S]*Starting the editor failed/);
  assert.deepEqual(await unreachableControls(page), []);
  await screenshot(page, 'narrow-08-error');
  await head.getByRole('button', { name: 'Retry' }).click();
  await head.getByRole('button', { name: 'Sleep' }).waitFor({ timeout: 120_000 }).catch(async (error: Error) => {
    const now = (await served.owner.get(`/workspaces/${served.id}`)).body;
    const operations = (await served.owner.get(`/operations?workspace=${served.id}&limit=5`)).body.items;
    throw new Error(`${error.message}\nthe workspace: ${now.state} ${now.status_detail}\nits operations: ${JSON.stringify(operations)}\nthe page: ${await page.locator('main').innerText()}`);
  });
  assert.equal(await head.getByRole('button', { name: 'Retry' }).count(), 0);
  const workspace = (await served.owner.get(`/workspaces/${served.id}`)).body;
  assert.equal(workspace.state, 'running');
  const wakes = (await served.owner.get(`/operations?kind=workspace.wake&workspace=${served.id}`)).body.items;
  assert.equal(wakes.length, 1, 'Retry woke the workspace by an operation');
  assert.equal((await operationFinished(served.owner, wakes[0].id)).state, 'succeeded');
  await until(async () => ((await served.owner.get(`/workspaces/${served.id}/landscape`)).body.services[0]?.status === 'running' ? true : undefined), 'web to run again');
  await screenshot(page, 'narrow-09-retried');
});

test('the terminal tab wakes a sleeping workspace first, and opens a shell in a replica of a service when chosen', async () => {
  const slept = await served.owner.post(`/workspaces/${served.id}/sleep`, {});
  assert.equal(slept.status, 200, slept.text);
  assert.equal(slept.body.state, 'sleeping');
  const desk = await signedInPage({ viewport: { width: 1280, height: 860 } });
  try {
    await desk.page.goto(workspacePath('terminal'));
    const state = desk.page.getByTestId('terminal-state');
    await desk.page.locator('[data-testid="terminal-state"][data-state="open"]').waitFor({ timeout: 120_000 });
    const screen = () => desk.page.getByTestId('terminal').locator('.xterm-rows').innerText();
    const seen = (pattern: RegExp) => until(async () => (pattern.test(await screen()) ? true : undefined), `${pattern} on the terminal`, 30_000);
    await desk.page.getByTestId('terminal').click();
    await desk.page.keyboard.type('echo "in [$PWD] role=[$ROLE]"\n');
    await seen(/in \[\/data\/app\] role=\[\]/);
    assert.equal((await served.owner.get(`/workspaces/${served.id}`)).body.state, 'running');
    await until(async () => ((await served.owner.get(`/workspaces/${served.id}/landscape`)).body.services[0]?.status === 'running' ? true : undefined), 'web to run again');
    await desk.page.reload();
    await desk.page.getByLabel('Shell in').locator('option', { hasText: /^web$/ }).waitFor({ state: 'attached' });
    await desk.page.getByLabel('Shell in').selectOption({ label: 'web' });
    await desk.page.locator('[data-testid="terminal-state"][data-state="open"]', { hasText: 'of web, replica 0' }).waitFor();
    await desk.page.getByTestId('terminal').click();
    await desk.page.keyboard.type('echo "in [$PWD] role=[$ROLE]"\n');
    await seen(/in \[\/data\/app\] role=\[web-replica\]/);
    await screenshot(desk.page, 'narrow-12-terminal-replica');
    await desk.page.keyboard.type('exit 2\n');
    await state.filter({ hasText: 'exit code 2' }).waitFor();
  } finally {
    await desk.context.close();
  }
});
