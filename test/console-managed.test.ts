// The console's landscape view shows a workspace's managed services with their status and details, live, and a
// developer pauses and resumes one there, and a failed nightly backup shows on its row as it happens: Debian's Chromium against a real server with a real PostgreSQL instance.
// Needs root, scripts/setup-postgres.sh's PostgreSQL 16 and Chromium. Screenshots go to test-output/console/.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { recordNightlyBackup } from '../src/managed/dumps.ts';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { managedSkip as skip, startManagedLandscape, type ManagedLandscape } from './helpers/managed-landscape.ts';

let m: ManagedLandscape;
let browser: Browser;
let page: Page;

before(async () => {
  if (skip) return;
  await ensureConsoleBuilt();
  m = await startManagedLandscape();
  await m.sync();
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  page.setDefaultTimeout(30_000);
  const me = (await m.dev.get('/me')).body;
  const link = await m.server.admin.post(`/users/${me.id}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});

after(async () => {
  await browser?.close();
  if (!skip) await m?.close();
});

const row = (status: string) => page.locator(`table[aria-label="Managed services"] tr[data-managed-service="db"][data-status="${status}"]`);

test('the landscape view lists the managed service with its status and details; Pause and Resume move it live', { skip }, async () => {
  await page.goto(`${m.server.url}/workspaces/${m.ws}`);
  await row('synchronized').waitFor({ timeout: 60_000 });
  const text = await row('synchronized').innerText();
  for (const shown of ['postgres 16', 'Synchronized', 'host', 'db', '5432', 'database', 'app']) assert.ok(text.includes(shown), `${shown} in ${JSON.stringify(text)}`);
  await page.locator('tr[data-service="db"] .badge', { hasText: 'Running' }).waitFor();
  // a managed service has no run switch (spec 7): web's row has Stop, db's none
  await page.locator('tr[data-service="db"]', { hasText: 'none: runs while synced' }).waitFor();
  assert.equal(await page.locator('tr[data-service="db"]').getByRole('button', { name: 'Stop' }).count(), 0);
  assert.equal(await page.locator('tr[data-service="web"]').getByRole('button', { name: 'Stop' }).count(), 1);
  await screenshot(page, 'managed-01-landscape');

  await row('synchronized').getByRole('button', { name: 'Pause', exact: true }).click();
  await row('synchronized').getByRole('button', { name: 'Pause', exact: true }).click(); // the confirmation
  await row('paused').waitFor({ timeout: 60_000 });
  await page.locator('tr[data-service="db"]', { hasText: 'paused; its data is kept' }).waitFor();
  await screenshot(page, 'managed-02-paused');

  await row('paused').getByRole('button', { name: 'Resume' }).click();
  await row('synchronized').waitFor({ timeout: 60_000 });
  assert.equal((await m.dev.get(`/teams/${m.team}/managed-services?workspace=${m.ws}`)).body.items[0].status, 'synchronized');
});

test('a Plan whose secret has no value shows the plan and names the secret; Sync waits until it has one', { skip }, async () => {
  assert.equal((await m.dev.delete(`/workspaces/${m.ws}/secrets/DB_PASSWORD`)).status, 204);
  try {
    await page.goto(`${m.server.url}/workspaces/${m.ws}`);
    await page.getByRole('button', { name: 'Plan', exact: true }).click();
    await page.locator('[data-plan-missing-secrets] [data-missing-secret="DB_PASSWORD"]', { hasText: /line \d+/ }).waitFor();
    // nothing else changed: the password a Sync cannot apply yet is no change of db or web
    await page.locator('.plan', { hasText: 'Nothing changes' }).waitFor();
    assert.equal(await page.locator('.plan').getByRole('button', { name: 'Sync', exact: true }).isDisabled(), true);
    await screenshot(page, 'managed-03-plan-missing-secret');
  } finally {
    await m.dev.put(`/workspaces/${m.ws}/secrets/DB_PASSWORD`, { value: 'p@ss word' });
  }
});

test('a failed nightly backup shows on the managed service\'s row with its reason, live', { skip }, async () => {
  await page.goto(`${m.server.url}/workspaces/${m.ws}`);
  await row('synchronized').waitFor({ timeout: 60_000 });
  const [instance] = (await m.dev.get(`/teams/${m.team}/managed-services?workspace=${m.ws}`)).body.items;
  // As the nightly chore records a dump that could not be made (managed-dumps-generated.test.ts makes a real one fail).
  await recordNightlyBackup(m.server.server.database.pool, instance.id, { state: 'failed', at: new Date().toISOString(), reason: 'The managed service db does not run now' });
  const failed = row('synchronized').locator('[data-backup="failed"]');
  await failed.waitFor();
  assert.match(await failed.innerText(), /^Nightly backup failed .*: The managed service db does not run now$/);
  await screenshot(page, 'managed-03-backup-failed');
});

test('Show password reveals the managed service\'s password and URL on its row (audited); Hide takes them away', { skip }, async () => {
  await page.goto(`${m.server.url}/workspaces/${m.ws}`);
  await row('synchronized').waitFor({ timeout: 60_000 });
  assert.equal(await row('synchronized').locator('[data-secret]').count(), 0);
  await row('synchronized').getByRole('button', { name: 'Show password' }).click();
  const password = row('synchronized').locator('[data-secret="password"]');
  await password.waitFor();
  assert.equal(await password.innerText(), 'p@ss word');
  assert.equal(await row('synchronized').locator('[data-secret="url"]').innerText(), 'postgresql://app:p%40ss%20word@db:5432/app');
  await screenshot(page, 'managed-04-password-shown');
  const me = (await m.dev.get('/me')).body;
  const entries = (await m.server.admin.get('/audit-log?action=managed_service.reveal&limit=50')).body.items as Array<{ actor_id: number; outcome: number }>;
  assert.ok(entries.some((e) => e.actor_id === me.id && e.outcome === 200), JSON.stringify(entries));
  await row('synchronized').getByRole('button', { name: 'Hide' }).click();
  await row('synchronized').getByRole('button', { name: 'Show password' }).waitFor();
  assert.equal(await row('synchronized').locator('[data-secret]').count(), 0);
});
