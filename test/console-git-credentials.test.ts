// The console's Settings: "Git credentials" (add a token for a host, listed without it, removed) and "SSH key" (made,
// shown as its public half with its fingerprint, rotated), in Debian's Chromium against a real server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let browser: Browser;
let page: Page;

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer();
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

test('a git credential is added (the token never shown), listed with its host and username, and removed', async () => {
  await page.goto(`${server.url}/settings`);
  const section = page.locator('section', { has: page.getByRole('heading', { name: 'Git credentials' }) });
  await section.getByText('No git credentials').waitFor();
  const form = page.getByRole('form', { name: 'Add a git credential' });
  await form.getByLabel('Host').fill('https://github.com');
  await form.getByLabel('Token or password').fill('ghp_console-secret-token');
  await form.getByRole('button', { name: 'Save credential' }).click();
  await form.locator('.field-error', { hasText: 'must be a host or host:port' }).waitFor();
  await form.getByLabel('Host').fill('GitHub.com');
  await form.getByRole('button', { name: 'Save credential' }).click();
  const row = page.locator('table[aria-label="Git credentials"] tr', { hasText: 'github.com' });
  await row.waitFor();
  assert.match((await row.textContent())!, /x-access-token/);
  assert.ok(!(await page.content()).includes('ghp_console-secret-token'), 'the token is not shown');
  await screenshot(page, 'settings-git-credentials');
  await row.getByRole('button', { name: 'Remove' }).click();
  await section.getByRole('button', { name: 'Remove' }).last().click();
  await section.getByText('No git credentials').waitFor();
  assert.deepEqual((await server.admin.get('/me/git-credentials')).body.items, []);
});

test('the SSH key is made, shown as its public key and fingerprint, and rotated to another', async () => {
  await page.goto(`${server.url}/settings`);
  const section = page.locator('section', { has: page.getByRole('heading', { name: 'SSH key' }) });
  await section.getByRole('button', { name: 'Make my SSH key' }).click();
  const shown = section.getByLabel('Public key');
  await shown.waitFor();
  const first = (await shown.textContent())!.trim();
  assert.equal(first, (await server.admin.get('/me/ssh-key')).body.public_key);
  assert.match(first, /^ssh-ed25519 AAAA\S+ \S+@\S+$/);
  await section.getByText(/Fingerprint SHA256:/).waitFor();
  await screenshot(page, 'settings-ssh-key');
  await section.getByRole('button', { name: 'Rotate' }).click();
  await section.getByRole('button', { name: 'Rotate' }).last().click();
  await section.getByLabel('Public key').filter({ hasNotText: first }).waitFor();
  assert.notEqual((await server.admin.get('/me/ssh-key')).body.public_key, first);
});
