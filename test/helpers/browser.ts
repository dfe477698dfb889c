// A real browser for console tests: Debian's Chromium (installed by scripts/setup.sh) driven by playwright-core,
// headless. Chromium treats http://127.0.0.1 as a secure context, so the session cookie `__Host-svc_session`
// (Secure) sticks on the test server's plain-HTTP address as it does behind HTTPS.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(root, 'test-output', 'console');

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run bash scripts/setup.sh (it installs Debian's chromium) or set SVC_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Builds console/dist unless it is newer than its sources (console/build.sh), so tests never see a stale build. */
export async function ensureConsoleBuilt(): Promise<void> {
  await promisify(execFile)('bash', [path.join(root, 'console', 'build.sh')], { cwd: root });
}

/** Saves a full-page screenshot as test-output/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  // From the top, so the sticky header does not land in the middle of a full-page picture.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
