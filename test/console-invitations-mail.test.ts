// The console's invitations with a real SMTP server on loopback (the test helper's smtp-server): the inviter is not
// shown the link (it goes by mail), the pending list follows the mail state live (Sent; Bounced with the server's
// reason), and the link from the received mail, opened in a fresh Chromium, signs the new person in while the
// inviter's pending row goes away. Screenshots go to test-output/console/ (people-mail-*.png).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from './helpers/browser.ts';
import { createPerson } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { TestSmtpServer, linkIn } from './helpers/smtp.ts';

let smtp: TestSmtpServer;
let server: TestServer;
let browser: Browser;
let page: Page;
let teamId: number;

before(async () => {
  await ensureConsoleBuilt();
  smtp = await TestSmtpServer.start();
  server = await startTestServer({ env: { SVC_SMTP_URL: smtp.url(), SVC_MAIL_FROM: 'svc <invites@svc.test>' } });
  const lead = await createPerson(server.admin, 'lead@example.com');
  const orgId = (await lead.key.post('/orgs', { name: 'Mailers' })).body.id;
  teamId = (await lead.key.post('/teams', { org_id: orgId, name: 'Ops' })).body.id;
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto((await server.admin.post(`/users/${lead.id}/sign-in-links`)).body.url);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await smtp?.close();
});

const row = (email: string) => page.locator(`table[aria-label="Pending invitations"] tr[data-invitation="${email}"]`);

async function invite(email: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Invite someone' });
  await form.getByLabel('E-mail').fill(email);
  await form.getByRole('button', { name: 'Send invitation' }).click();
  await row(email).waitFor();
}

test('with a mail server the link goes by mail; the mail state moves live; the mailed link signs the person in', async () => {
  await page.goto(`${server.url}/teams?team=${teamId}`);
  await invite('mailed@example.com');
  assert.equal(await page.getByTestId('invitation-link').count(), 0, 'the inviter is not shown the link');
  await row('mailed@example.com').locator('.badge', { hasText: 'Sent' }).waitFor();
  await smtp.until(() => smtp.received.some((m) => m.to.includes('mailed@example.com')), 'the invitation mail');

  smtp.mode = 'bounce';
  await invite('nobody@example.com');
  await row('nobody@example.com').locator('.badge', { hasText: 'Bounced' }).waitFor();
  assert.match((await row('nobody@example.com').textContent())!, /bounced: .*550/);
  smtp.mode = 'accept';
  await screenshot(page, 'people-mail-01-states');

  const mail = smtp.received.find((m) => m.to.includes('mailed@example.com'))!;
  const fresh = await browser.newContext();
  const visitor = await fresh.newPage();
  await visitor.goto(linkIn(mail));
  await visitor.getByRole('heading', { name: 'Welcome, mailed' }).waitFor();
  assert.match((await visitor.getByTestId('invitation-joined').textContent())!, /You joined Mailers and its teams:.*Ops as developer/);
  await row('mailed@example.com').waitFor({ state: 'detached' });
  await fresh.close();
});
