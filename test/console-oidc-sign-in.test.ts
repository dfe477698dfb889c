// Single sign-on in the console, in Debian's Chromium against a real server and a real OpenID Provider on loopback
// (oidc-provider): the sign-in page offers the provider; its round trip lands signed in, in the team its group
// gives; someone outside the allowed domains reads why they are refused; signing out goes through the provider's
// sign-out and back to the sign-in page. Screenshots go to test-output/console/ (oidc-*.png).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { createPerson } from './helpers/client.ts';
import { startTestProvider, type TestProvider } from './helpers/oidc-provider.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let provider: TestProvider;
let browser: Browser;

before(async () => {
  await ensureConsoleBuilt();
  provider = await startTestProvider();
  const providers = [
    {
      id: 'corp',
      name: 'Corp SSO',
      issuer: provider.issuer,
      clientId: 'svc',
      clientSecret: 'corp-secret',
      scopes: ['openid', 'email', 'profile', 'groups'],
      allowedDomains: ['corp.example'],
      roleRules: [{ name: 'web', value: 'web-devs', team: 'Acme/Web', role: 'developer' }],
    },
  ];
  server = await startTestServer({ env: { SVC_OIDC_PROVIDERS: JSON.stringify(providers) } });
  provider.configure({ clientId: 'svc', clientSecret: 'corp-secret', redirectUris: [`${server.url}/api/v1/auth/oidc/corp/callback`], postLogoutRedirectUris: [`${server.url}/sign-in`] });
  const org = await server.admin.post('/orgs', { name: 'Acme' });
  assert.equal((await server.admin.post('/teams', { org_id: org.body.id, name: 'Web' })).status, 201);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await provider?.close();
});

async function freshPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return page;
}

async function throughProvider(page: Page, login: string): Promise<void> {
  await page.goto(`${server.url}/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
  await page.getByPlaceholder('User').fill(login);
  await page.getByPlaceholder('Password').fill('any');
  await page.getByRole('button', { name: 'Sign in at the provider' }).click();
}

test('the provider button signs a person in, in the team their group gives; sign-out goes through the provider', async () => {
  provider.users.set('lin', { email: 'lin@corp.example', name: 'Lin Corp', groups: ['web-devs'] });
  const page = await freshPage();
  await page.goto(`${server.url}/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Corp SSO' }).waitFor();
  await screenshot(page, 'oidc-sign-in-page');
  await throughProvider(page, 'lin');
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  await screenshot(page, 'oidc-signed-in');
  const me = await page.evaluate(() => fetch('/api/v1/me').then((r) => r.json()));
  assert.equal(me.email, 'lin@corp.example');
  const teams = await page.evaluate(() => fetch('/api/v1/teams').then((r) => r.json()));
  assert.deepEqual(teams.items.map((t: { name: string }) => t.name), ['Web']);

  const visited: string[] = [];
  // Navigations the browser makes, redirects included.
  page.on('request', (request) => {
    if (request.isNavigationRequest()) visited.push(request.url());
  });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.origin === server.url && url.pathname === '/sign-in');
  assert.ok(visited.some((url) => url.startsWith(`${provider.issuer}/session/end`)), visited.join('\n'));
  await page.getByRole('link', { name: 'Sign in with Corp SSO' }).waitFor();
  const after = await page.evaluate(() => fetch('/api/v1/me').then((r) => r.status));
  assert.equal(after, 401);
});

test('someone outside the allowed domains reads why they are refused', async () => {
  provider.users.set('eve', { email: 'eve@elsewhere.example' });
  const page = await freshPage();
  await throughProvider(page, 'eve');
  await page.getByRole('heading', { name: 'This account may not sign in here' }).waitFor();
  assert.match((await page.locator('#detail').textContent())!, /eve@elsewhere\.example may not make an account here: Corp SSO admits addresses of corp\.example/);
  await screenshot(page, 'oidc-refused');
});

test('a person signed in by a link links the provider in Settings, then signs in with it', async () => {
  const person = await createPerson(server.admin, 'linked@elsewhere.example');
  const link = await server.admin.post(`/users/${person.id}/sign-in-links`);
  const page = await freshPage();
  await page.goto(link.body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  await page.goto(`${server.url}/settings`);
  provider.users.set('linked-sub', { email: 'other-address@corp.example' });
  await page.getByRole('button', { name: 'Link Corp SSO' }).click();
  await page.getByPlaceholder('User').fill('linked-sub');
  await page.getByPlaceholder('Password').fill('any');
  await page.getByRole('button', { name: 'Sign in at the provider' }).click();
  await page.waitForURL(`${server.url}/settings`);
  await page.locator('ul[aria-label="Linked providers"] li[data-provider="corp"]').waitFor();
  await screenshot(page, 'oidc-linked');
  const other = await freshPage();
  await throughProvider(other, 'linked-sub');
  await other.getByRole('heading', { name: 'Workspaces' }).waitFor();
  const me = await other.evaluate(() => fetch('/api/v1/me').then((r) => r.json()));
  assert.equal(me.id, person.id);
});
