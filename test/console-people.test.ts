// Invitations and ownership transfers in the console, in Debian's Chromium against a real server without a mail
// server: a team admin invites by e-mail and is shown the link once (with a copy button); the link opened in a
// fresh browser makes the account, signs the person in and says what they joined, while the inviter's pending list
// and members follow live; a used or revoked link says "This link has expired". A workspace is offered to the new
// member, who accepts it from the workspaces page; an owner who leaves leaves it needing an owner until the team
// admin takes it.
// Screenshots go to test-output/console/ (people-*.png).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot, unreachableControls } from './helpers/browser.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let browser: Browser;
let lead: { key: ApiClient; id: number };
let leadPage: Page;
let newcomer: { context: BrowserContext; page: Page } | undefined;
let orgId: string;
let teamId: number;
let ws: number;

async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return { context, page };
}

before(async () => {
  await ensureConsoleBuilt();
  server = await startTestServer();
  lead = await createPerson(server.admin, 'lead@example.com');
  orgId = (await lead.key.post('/orgs', { name: 'Acme' })).body.id;
  teamId = (await lead.key.post('/teams', { org_id: orgId, name: 'Web' })).body.id;
  ws = (await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId, createdBy: lead.id, name: 'handed-on' })).id;
  browser = await launchBrowser();
  const { context, page } = await freshPage();
  leadPage = page;
  const link = await server.admin.post(`/users/${lead.id}/sign-in-links`);
  await leadPage.goto(link.body.url);
  await leadPage.getByRole('heading', { name: 'Workspaces' }).waitFor();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const pendingRow = (page: Page, email: string) => page.locator(`table[aria-label="Pending invitations"] tr[data-invitation="${email}"]`);

async function invite(email: string): Promise<string> {
  const form = leadPage.getByRole('form', { name: 'Invite someone' });
  await form.getByLabel('E-mail').fill(email);
  await form.getByRole('button', { name: 'Send invitation' }).click();
  const url = (await leadPage.getByTestId('invitation-url').textContent())!.trim();
  assert.match(url, new RegExp(`^${server.url}/sign-in#invitation=[\\w-]+$`));
  return url;
}

test('a team admin invites by e-mail; without a mail server the link is shown once with a copy button and the mail state says why', async () => {
  await leadPage.goto(`${server.url}/teams?team=${teamId}`);
  await leadPage.getByRole('heading', { name: 'Invitations to Acme' }).waitFor();
  const form = leadPage.getByRole('form', { name: 'Invite someone' });
  assert.equal(await form.getByLabel('Into Web').isChecked(), true, 'the selected team is preselected');
  await form.getByLabel('Role in Web').selectOption('viewer');
  const url = await invite('newbie@example.com');
  await leadPage.getByTestId('invitation-link').getByRole('button', { name: 'Copy' }).click();
  await leadPage.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await leadPage.evaluate(() => navigator.clipboard.readText()), url);
  const row = pendingRow(leadPage, 'newbie@example.com');
  await row.filter({ hasText: 'not sent: no mail server configured' }).waitFor();
  assert.match((await row.textContent())!, /Web \(viewer\)/);
  assert.match((await row.locator('.badge').allTextContents()).join(' '), /Pending.*Not sent/);
  assert.deepEqual(await unreachableControls(leadPage), []);
  await screenshot(leadPage, 'people-01-invited');
  await leadPage.getByTestId('invitation-link').getByRole('button', { name: 'Done' }).click();
  assert.equal(await leadPage.getByTestId('invitation-url').count(), 0);
  await leadPage.reload();
  await pendingRow(leadPage, 'newbie@example.com').waitFor();
  assert.ok(!(await leadPage.content()).includes(url), 'the link is not shown again');

  // The link in a fresh browser: the account is made, the person signed in and told what they joined.
  newcomer = await freshPage();
  await newcomer.page.goto(url);
  await newcomer.page.getByRole('heading', { name: 'Welcome, newbie' }).waitFor();
  assert.equal(new URL(newcomer.page.url()).hash, '', 'the token leaves the address bar');
  const joined = newcomer.page.getByTestId('invitation-joined');
  assert.match((await joined.textContent())!, /You joined Acme and its teams:/);
  assert.match((await joined.getByRole('list', { name: 'Teams you joined' }).textContent())!, /Web as viewer/);
  assert.match((await joined.textContent())!, /Your account \(newbie@example\.com\) was made just now/);
  await screenshot(newcomer.page, 'people-02-joined');

  // The inviter's pending list and the team's members follow without a reload.
  await pendingRow(leadPage, 'newbie@example.com').waitFor({ state: 'detached' });
  await leadPage.locator('table[aria-label="Members"] tr', { hasText: 'newbie@example.com' }).waitFor();

  await joined.getByRole('button', { name: 'Open the console' }).click();
  await newcomer.page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  await newcomer.page.locator('tr[data-workspace="handed-on"]').waitFor();

  // The link worked once.
  const again = await freshPage();
  await again.page.goto(url);
  await again.page.getByRole('heading', { name: 'This link has expired' }).waitFor();
  assert.match((await again.page.getByTestId('invitation-problem').textContent())!, /used already/);
  await again.context.close();
});

test('renew gives a new link (the old one stops working); revoke asks once, removes the row, and its link has expired', async () => {
  const first = await invite('later@example.com');
  await leadPage.getByTestId('invitation-link').getByRole('button', { name: 'Done' }).click();
  const row = pendingRow(leadPage, 'later@example.com');
  await row.getByRole('button', { name: 'Renew' }).click();
  await leadPage.getByTestId('invitation-url').waitFor();
  const second = (await leadPage.getByTestId('invitation-url').textContent())!.trim();
  assert.notEqual(second, first);
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.getByRole('group', { name: /Revoke the invitation of later@example.com\?/ }).getByRole('button', { name: 'Revoke' }).click();
  await row.waitFor({ state: 'detached' });
  const visitor = await freshPage();
  for (const [link, reason] of [
    [first, /replaced by a newer one/],
    [second, /revoked/],
  ] as const) {
    await visitor.page.goto(link);
    await visitor.page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    assert.match((await visitor.page.getByTestId('invitation-problem').textContent())!, reason);
    await visitor.page.goto('about:blank');
  }
  await screenshot(visitor.page, 'people-03-expired');
  await visitor.context.close();
});

test('an invitation for someone who has an account signs nobody in: they sign in by their own means, then it is accepted', async () => {
  const person = await server.admin.post('/users', { email: 'known@example.com', name: 'Known' });
  assert.equal(person.status, 201, person.text);
  const created = await lead.key.post(`/orgs/${orgId}/invitations`, { email: 'known@example.com', teams: [{ team_id: teamId, role: 'developer' }] });
  assert.equal(created.status, 201, created.text);
  const visitor = await freshPage();
  await visitor.page.goto(created.body.url);
  await visitor.page.getByRole('heading', { name: 'Sign in to accept this invitation' }).waitFor();
  assert.match((await visitor.page.getByTestId('invitation-sign-in').textContent())!, /sign in as known@example\.com/);
  assert.equal((await visitor.context.cookies()).length, 0, 'the link alone gave no session');
  await visitor.page.getByRole('button', { name: 'Sign in' }).click();
  await visitor.page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const link = await server.admin.post(`/users/${person.body.id}/sign-in-links`);
  await visitor.page.goto(link.body.url);
  await visitor.page.getByRole('heading', { name: 'Welcome, Known' }).waitFor();
  const joined = visitor.page.getByTestId('invitation-joined');
  assert.match((await joined.textContent())!, /You are signed in as known@example\.com/);
  assert.match((await joined.getByRole('list', { name: 'Teams you joined' }).textContent())!, /Web as developer/);
  await screenshot(visitor.page, 'people-04-existing-account');
  await visitor.context.close();
});

test('the owner offers the workspace; the person offered accepts it live; an owner who leaves leaves it needing an owner', async () => {
  assert.ok(newcomer, 'the invitation test signed the newcomer in');
  const me = newcomer.page;
  await leadPage.goto(`${server.url}/workspaces/${ws}`);
  await leadPage.getByTestId('workspace-owner').filter({ hasText: 'Owned by you' }).waitFor();
  const toNewbie = leadPage.getByRole('form', { name: 'Offer ownership' });
  await toNewbie.getByLabel('Offer to').selectOption({ label: 'newbie (newbie@example.com)' });
  await toNewbie.getByRole('button', { name: 'Offer ownership' }).click();
  await leadPage.getByTestId('open-transfer').filter({ hasText: 'Offered to newbie by you' }).waitFor();
  await screenshot(leadPage, 'people-04-offered');

  // The person offered sees it on the workspaces page without a reload, and accepts.
  const offered = me.locator('ul[aria-label="Ownership offers"] li[data-transfer="handed-on"]');
  await offered.filter({ hasText: 'You are offered the workspace handed-on' }).waitFor();
  await offered.getByRole('button', { name: 'Accept' }).click();
  await offered.waitFor({ state: 'detached' });
  await leadPage.getByTestId('workspace-owner').filter({ hasText: 'Owned by newbie' }).waitFor();
  await leadPage.getByTestId('open-transfer').waitFor({ state: 'detached' });
  assert.equal((await lead.key.get(`/workspaces/${ws}`)).body.owner_id, (await server.admin.get('/users?limit=200')).body.items.find((u: { email: string }) => u.email === 'newbie@example.com').id);

  // The new owner leaves the team: the workspace needs an owner, in the list and on its page.
  const newbieId = (await lead.key.get(`/workspaces/${ws}`)).body.owner_id;
  assert.equal((await lead.key.delete(`/teams/${teamId}/members/${newbieId}`)).status, 204);
  await leadPage.getByTestId('needs-owner').waitFor();
  await leadPage.locator('[data-testid="workspace-state"] .badge', { hasText: 'Needs an owner' }).waitFor();
  await screenshot(leadPage, 'people-05-needs-owner');
  await leadPage.getByRole('link', { name: 'Workspaces', exact: true }).first().click();
  await leadPage.locator('tr[data-workspace="handed-on"] .badge', { hasText: 'Needs an owner' }).waitFor();
  await me.context().close();

  // The team admin takes it: offered to themselves, accepted from the workspace page; the notice goes.
  await leadPage.getByRole('link', { name: 'handed-on', exact: true }).click();
  const offer = leadPage.getByRole('form', { name: 'Offer ownership' });
  await offer.getByLabel('Offer to').selectOption({ label: 'lead (lead@example.com)' });
  await offer.getByRole('button', { name: 'Offer ownership' }).click();
  await leadPage.getByTestId('open-transfer').getByRole('button', { name: 'Accept ownership' }).click();
  await leadPage.getByTestId('needs-owner').waitFor({ state: 'detached' });
  await leadPage.getByTestId('workspace-owner').filter({ hasText: 'Owned by you' }).waitFor();
  assert.equal((await lead.key.get(`/workspaces/${ws}`)).body.needs_owner, false);
});
