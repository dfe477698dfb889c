// The console's "Custom domains" section of a team (Teams page), in Debian's Chromium against a real server with
// dnsmasq on loopback: a bad name refused on its field, a domain added with its TXT record shown, the status moving
// to Verified live once the record exists (a route being edited meanwhile kept), the route saved with the routes editor, the domain removed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let dns: TestDns;
let browser: Browser;
let page: Page;
let team: number;
let workspace: number;

before(async () => {
  await ensureConsoleBuilt();
  dns = await startDns(['shop.test']);
  server = await startTestServer({ env: { SVC_DNS_RESOLVER: dns.address } });
  const org = (await server.admin.post('/orgs', { name: 'Domains Org' })).body.id;
  team = (await server.admin.post('/teams', { org_id: org, name: 'Domains Team' })).body.id;
  const userId = server.adminSession.auth.userId!;
  workspace = (await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: userId, name: 'site' })).id;
  browser = await launchBrowser();
  page = await browser.newPage();
  const link = await server.admin.post(`/users/${userId}/sign-in-links`);
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await dns?.stop();
});

test('a team admin adds a domain, sees the TXT record, watches it become Verified, saves a route and removes it', async () => {
  await page.goto(`${server.url}/teams?team=${team}`);
  const section = page.locator('section', { has: page.getByRole('heading', { name: 'Custom domains' }) });
  await section.getByText('No custom domains').waitFor();
  const form = page.getByRole('form', { name: 'Add a domain' });
  await form.getByLabel('Domain').fill('not a domain');
  await form.getByRole('button', { name: 'Add domain' }).click();
  await form.locator('.field-error').waitFor();
  await form.getByLabel('Domain').fill('Shop.Test');
  await form.getByRole('button', { name: 'Add domain' }).click();

  const detail = page.getByRole('region', { name: 'Domain shop.test' });
  await detail.getByText('_svc.shop.test', { exact: true }).waitFor();
  const [domain] = (await server.admin.get(`/teams/${team}/domains`)).body.items;
  await detail.getByText(domain.txt_record.value, { exact: true }).waitFor();
  assert.equal(await detail.getByRole('button', { name: /Copy/ }).count(), 2);
  const row = page.locator('table[aria-label="Custom domains"] tr', { hasText: 'shop.test' });
  await row.getByText('Failed').waitFor();

  // A route being edited while the status moves live stays as typed.
  const routes = detail.getByRole('form', { name: 'Routes' });
  await routes.getByRole('button', { name: 'Add route' }).click();
  await routes.getByLabel('Workspace').selectOption({ label: 'site' });
  await dns.set({ '_svc.shop.test': [domain.txt_record.value] });
  await detail.getByRole('button', { name: 'Check the record now' }).click();
  await row.getByText('Verified').waitFor();
  await detail.getByText('Not managed').waitFor();
  assert.equal(await routes.getByLabel('Workspace').inputValue(), String(workspace));
  await routes.getByRole('button', { name: 'Save routes' }).click();
  await row.locator('td', { hasText: /^1$/ }).waitFor();
  assert.deepEqual((await server.admin.get(`/teams/${team}/domains/${domain.id}`)).body.routes, [{ path: '/', workspace_id: workspace, strip: false }]);
  await screenshot(page, 'teams-custom-domains');

  await detail.getByRole('button', { name: 'Remove domain' }).click();
  await detail.getByRole('button', { name: 'Remove', exact: true }).click();
  await section.getByText('No custom domains').waitFor();
  assert.deepEqual((await server.admin.get(`/teams/${team}/domains`)).body.items, []);
});
