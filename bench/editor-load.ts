// bench/workspaces' editor row: code-server's workbench in a fresh Chromium, link opened to the folder listed, driven
// over the DevTools protocol with no domain that instruments the page's JavaScript (docs/runtime.md, "How long the
// editor takes to open"). playwright-core enables the Runtime domain on every page: the inspector then records stack
// traces (console messages, exceptions), and V8 re-parses functions to give their source positions, 19 MB
// workbench.js's module function among them; that added 2.4 to 3.6 s of main-thread CPU to each load here, which no person's browser
// spends. Only Network is enabled (the router's Svc-Authorization header); the page is asked with Runtime.evaluate,
// which enables nothing, and the renderers' CPU time comes from the browser (SystemInfo).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { CHROMIUM } from '../test/helpers/browser.ts';

/** A Chromium of its own (a new profile: nothing cached) and one page of it, over the DevTools protocol. */
export interface CdpBrowser {
  /** A command to the page. */
  send(method: string, params?: Record<string, unknown>): Promise<any>;
  /** A command to the browser itself. */
  sendBrowser(method: string, params?: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function launchCdpBrowser(): Promise<CdpBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run bash scripts/setup.sh or set SVC_CHROMIUM`);
  const profile = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-chromium-'));
  const chromium: ChildProcess = spawn(CHROMIUM, [
    '--headless=new', '--remote-debugging-port=0', `--user-data-dir=${profile}`, '--no-sandbox', '--disable-gpu',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-dev-shm-usage', 'about:blank',
  ], { stdio: 'ignore' });
  const portFile = path.join(profile, 'DevToolsActivePort');
  const deadline = Date.now() + 30_000;
  while (!existsSync(portFile) || readFileSync(portFile, 'utf8').split('\n').length < 2) {
    if (Date.now() > deadline || chromium.exitCode !== null) throw new Error(`${CHROMIUM} did not open its DevTools port`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const [port, browserPath] = readFileSync(portFile, 'utf8').split('\n');
  const socket = new WebSocket(`ws://127.0.0.1:${port}${browserPath}`, { perMessageDeflate: false, maxPayload: 0 });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let lastId = 0;
  const pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void; method: string }>();
  socket.on('message', (raw) => {
    const message = JSON.parse(String(raw));
    const waiter = message.id !== undefined ? pending.get(message.id) : undefined;
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
    else waiter.resolve(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<any>((resolve, reject) => {
      const id = ++lastId;
      pending.set(id, { resolve, reject, method });
      socket.send(JSON.stringify({ id, method, params, sessionId }));
    });
  const { targetInfos } = await call('Target.getTargets');
  const page = (targetInfos as { type: string; targetId: string }[]).find((target) => target.type === 'page');
  if (!page) throw new Error('Chromium opened no page');
  const { sessionId } = await call('Target.attachToTarget', { targetId: page.targetId, flatten: true });
  return {
    send: (method, params) => call(method, params, sessionId),
    sendBrowser: (method, params) => call(method, params),
    async close() {
      socket.close();
      chromium.kill();
      await new Promise((resolve) => (chromium.exitCode !== null ? resolve(undefined) : chromium.once('exit', resolve)));
      // Chromium's helpers may still be writing the profile for a moment after it exited.
      await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** One load, in milliseconds from the link opened (Page.navigate sent). */
export interface WorkbenchLoad {
  /** The page's HTML received (its navigation entry's responseEnd). */
  page: number;
  /** workbench.js received (from the network or the browser's cache). */
  scripts: number;
  /** workbench.js parsed, compiled and run (VS Code's mark code/didLoadWorkbenchMain). */
  main: number;
  /** The workbench drawn: its parts created and restored, status bar included (code/didStartWorkbench). */
  drawn: number;
  /** The folder listed in the explorer (code/didResolveExplorer): the editor is usable. */
  usable: number;
  /** CPU time of Chromium's renderer processes during the load, every thread (background parsing included). */
  rendererCpuMs: number;
  traffic: string;
}

const evaluate = async (browser: CdpBrowser, expression: string) => {
  const answer = await browser.send('Runtime.evaluate', { expression, returnByValue: true });
  if (answer.exceptionDetails) throw new Error(`${expression}: ${answer.exceptionDetails.text}`);
  return answer.result.value;
};

/** CPU seconds of each renderer process by pid (SystemInfo.getProcessInfo, from the browser). */
const rendererCpu = async (browser: CdpBrowser) =>
  new Map(((await browser.sendBrowser('SystemInfo.getProcessInfo')).processInfo as { type: string; id: number; cpuTime: number }[])
    .filter((p) => p.type === 'renderer').map((p) => [p.id, p.cpuTime]));

/**
 * Opens `url` in the browser's page and waits until the workbench is drawn and its folder listed; the times come
 * from VS Code's own performance marks and the Resource Timing entries, placed on the clock of the navigation.
 */
export async function loadWorkbench(browser: CdpBrowser, url: string, headers?: Record<string, string>): Promise<WorkbenchLoad> {
  if (headers) {
    await browser.send('Network.enable');
    await browser.send('Network.setExtraHTTPHeaders', { headers });
  }
  await browser.send('Page.navigate', { url: 'about:blank' });
  const cpuBefore = await rendererCpu(browser);
  const openedAt = performance.timeOrigin + performance.now();
  await browser.send('Page.navigate', { url });
  const deadline = Date.now() + 120_000;
  // The explorer's mark comes after the status bar exists; both are checked, the times are the marks'.
  const done = `!!document.querySelector('.monaco-workbench .part.statusbar') && performance.getEntriesByName('code/didResolveExplorer').length > 0`;
  while (!(await evaluate(browser, done).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the workbench at ${url} did not list its folder within 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seen = await evaluate(browser, `(() => {
    const mark = (name) => performance.getEntriesByName('code/' + name)[0]?.startTime ?? NaN;
    const resources = performance.getEntriesByType('resource');
    const script = resources.find((e) => e.name.endsWith('/workbench/workbench.js'));
    const entries = [...performance.getEntriesByType('navigation'), ...resources].map((e) => ({ name: e.name.replace(/[?#].*$/, '').split('/').pop(), transfer: e.transferSize, encoded: e.encodedBodySize, decoded: e.decodedBodySize, protocol: e.nextHopProtocol }));
    const timeline = [...resources.map((e) => ({ at: e.startTime, end: e.responseEnd, what: e.name.replace(/[?#].*$/, '').split('/').pop() + ' ' + e.transferSize + 'B' })),
      ...performance.getEntriesByType('mark').filter((m) => m.name.startsWith('code/') && !m.name.includes('WorkbenchContribution/')).map((m) => ({ at: m.startTime, end: m.startTime, what: m.name }))].sort((a, b) => a.at - b.at);
    return { origin: performance.timeOrigin, page: performance.getEntriesByType('navigation')[0].responseEnd, scripts: script ? script.responseEnd : NaN,
      main: mark('didLoadWorkbenchMain'), drawn: mark('didStartWorkbench'), usable: mark('didResolveExplorer'), entries, timeline };
  })()`);
  const cpuAfter = await rendererCpu(browser);
  const rendererCpuMs = [...cpuAfter].reduce((total, [pid, cpu]) => total + cpu - (cpuBefore.get(pid) ?? 0), 0) * 1000;
  const shift = seen.origin - openedAt;
  // BENCH_TIMELINE=1: every resource (start to end) and VS Code mark of the load, from the link opened.
  if (process.env.BENCH_TIMELINE) {
    for (const e of seen.timeline as { at: number; end: number; what: string }[]) {
      console.log(`      ${s(shift + e.at)}${e.end > e.at ? `–${s(shift + e.end)}` : ''} s  ${e.what}`);
    }
  }
  return {
    page: shift + seen.page, scripts: shift + seen.scripts, main: shift + seen.main, drawn: shift + seen.drawn, usable: shift + seen.usable,
    rendererCpuMs, traffic: trafficOf(seen.entries),
  };
}

type Entry = { name: string; transfer: number; encoded: number; decoded: number; protocol: string };

/** What the page loaded until its folder was listed: requests, bytes, compression, cache. */
function trafficOf(entries: Entry[]): string {
  const sum = (pick: (e: Entry) => number) => entries.reduce((total, e) => total + pick(e), 0);
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
  const uncompressed = entries.filter((e) => e.transfer > 0 && e.decoded > 1024 && e.encoded === e.decoded && !/\.(png|jpe?g|gif|ico|woff2?)$/.test(e.name)).map((e) => e.name);
  const fromCache = entries.filter((e) => e.transfer === 0 && e.decoded > 0).length;
  const protocols = [...new Set(entries.map((e) => e.protocol).filter(Boolean))].join(', ');
  return `${entries.length} requests (${protocols || 'cache'}), ${mb(sum((e) => e.transfer))} over the wire for ${mb(sum((e) => e.decoded))}, ` +
    `${uncompressed.length} text answers over 1 KB uncompressed${uncompressed.length ? ` (${uncompressed.join(', ')})` : ''}, ${fromCache} from the browser's cache`;
}

const s = (ms: number) => (ms / 1000).toFixed(2);

/** The load's phases, each as the time it ended. */
export const phasesOf = (load: WorkbenchLoad) =>
  `page ${s(load.page)} s, workbench.js received ${s(load.scripts)} s, workbench.js parsed and run ${s(load.main)} s, ` +
  `workbench drawn ${s(load.drawn)} s, folder listed ${s(load.usable)} s; renderer CPU ${s(load.rendererCpuMs)} s`;
