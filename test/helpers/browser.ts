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

/**
 * Every visible control of the page (buttons, links, fields, tabs, menus) that a person cannot reach: once scrolled
 * into view it lies outside the viewport, or another element (a dock, a sticky header) is on top of its centre.
 * Also reports a page wider than the viewport. Empty when every control can be clicked. `within` (a CSS selector)
 * checks only the controls inside that element, such as an open menu, which lies over the rows below it by design.
 */
export async function unreachableControls(page: Page, within = 'html'): Promise<string[]> {
  // Source text, not a function: the test runner's compiler adds helpers to functions that the page does not have.
  return page.evaluate(`(() => {
    const problems = [];
    const root = document.querySelector(${JSON.stringify(within)});
    if (!root) return ['nothing matches ' + ${JSON.stringify(JSON.stringify(within))}];
    const name = (element) => element.tagName.toLowerCase() + ' "' + (element.textContent || element.getAttribute('aria-label') || element.getAttribute('name') || '').trim().slice(0, 40) + '"';
    const width = document.documentElement.scrollWidth;
    if (width > window.innerWidth + 1) problems.push('the page is ' + width + ' px wide in a ' + window.innerWidth + ' px viewport');
    const controls = [...root.querySelectorAll('button, a[href], input:not([type="hidden"]), select, textarea, summary')].filter((element) => {
      if (element.closest('.xterm')) return false; // xterm.js keeps its own input helper off-screen by design
      if (element.closest('details:not([open]) > :not(summary)')) return false; // inside a closed menu
      const style = getComputedStyle(element);
      return element.getClientRects().length > 0 && style.visibility !== 'hidden' && style.display !== 'none';
    });
    for (const control of controls) {
      control.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const box = control.getBoundingClientRect();
      const x = box.left + box.width / 2;
      const y = box.top + box.height / 2;
      if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) {
        problems.push(name(control) + ' lies outside the viewport at ' + Math.round(x) + ', ' + Math.round(y));
        continue;
      }
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(hit === control || control.contains(hit) || (hit instanceof HTMLLabelElement && hit.control === control))) {
        problems.push(name(control) + ' is covered by ' + (hit ? hit.tagName.toLowerCase() + '.' + [...hit.classList].join('.') : 'nothing'));
      }
    }
    window.scrollTo(0, 0);
    return problems;
  })()`);
}

/**
 * Text on the page whose colour stands out too little from what lies behind it: the WCAG contrast ratio of each
 * visible element's own text against its nearest painted background, below `minimum` (4.5 for body text, AA).
 * Each finding names the element, its text, both colours and the ratio. Empty when every text can be read.
 */
export async function lowContrastTexts(page: Page, minimum = 4.5): Promise<string[]> {
  return page.evaluate(`(() => {
    const minimum = ${minimum};
    const rgba = (value) => { const m = value.match(/[\\d.]+/g); if (!m) return [0, 0, 0, 0]; return [Number(m[0]), Number(m[1]), Number(m[2]), m.length > 3 ? Number(m[3]) : 1]; };
    const over = (top, bottom) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1); };
    const background = (element) => {
      const layers = [];
      for (let at = element; at; at = at.parentElement) {
        const colour = rgba(getComputedStyle(at).backgroundColor);
        if (colour[3] > 0) { layers.push(colour); if (colour[3] >= 1) break; }
      }
      let result = [255, 255, 255, 1];
      for (const layer of layers.reverse()) result = over(layer, result);
      return result;
    };
    const luminance = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const problems = [];
    for (const element of document.querySelectorAll('body *')) {
      if (element.closest('.xterm, svg, [aria-hidden="true"]')) continue;
      const own = [...element.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join(' ').trim();
      if (!own) continue;
      const style = getComputedStyle(element);
      if (element.getClientRects().length === 0 || style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
      if (element.closest('.sr-only')) continue;
      const back = background(element);
      const fore = over(rgba(style.color), back);
      const [l1, l2] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
      const ratio = (l1 + 0.05) / (l2 + 0.05);
      if (ratio < minimum) problems.push(element.tagName.toLowerCase() + '.' + [...element.classList].join('.') + ' "' + own.slice(0, 30) + '" ' + style.color + ' on ' + 'rgb(' + back.slice(0, 3).map(Math.round).join(', ') + ') ' + ratio.toFixed(2));
    }
    return [...new Set(problems)];
  })()`);
}
