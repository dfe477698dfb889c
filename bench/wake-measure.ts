// What bench/workspaces measures of a wake, from the outside (HTTP through the router, a real browser) and from the
// server's own account of each wake (its log line `wake of workspace N took T ms: phase ms, ...`).
import { execFile } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { parsePhases, type Phase } from '../src/core/phases.ts';
import type { ApiClient } from '../test/helpers/client.ts';

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Milliseconds `node -e ''` takes from spawn to exit: the reference of the same run. A wake starts two node
 * processes (agent, editor) and several others, so on a loaded machine it grows with this.
 */
export function nodeStartMs(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', ''], (error) => (error ? reject(error) : resolve(performance.now() - started)));
  });
}

export async function until(check: () => Promise<boolean>, timeoutMs: number, what: () => string, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export async function finish(key: ApiClient, operationId: string): Promise<void> {
  await until(async () => {
    const operation = (await key.get(`/operations/${operationId}`)).body;
    if (operation.state === 'failed') throw new Error(JSON.stringify(operation.error));
    return operation.state === 'succeeded';
  }, 180_000, () => `operation ${operationId}`, 5);
}

/**
 * Puts the workspace to sleep once nothing else is under way on it: a dev URL answers while its wake may still be
 * finishing (the editor starting), and a sleep is refused (409, busy) until then.
 */
export async function sleepWhenIdle(key: ApiClient, id: number): Promise<void> {
  await until(async () => {
    const answer = await key.post(`/workspaces/${id}/sleep`);
    if (answer.status === 200) return true;
    if (answer.status === 409 && /busy/.test(String(answer.body?.detail))) return false;
    throw new Error(`the sleep of workspace ${id} answered ${answer.status}: ${answer.text}`);
  }, 180_000, () => `workspace ${id} to take a sleep`, 20);
}

/** Milliseconds to the first byte of an answer of `url` (held by the router while the workspace wakes), which must not be a 5xx. */
export function firstByte(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (response) => {
      const at = performance.now() - started;
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => ((response.statusCode ?? 500) < 500 ? resolve(at) : reject(new Error(`${url} answered ${response.statusCode}: ${text}`))));
    });
    request.on('error', reject);
  });
}

export function answers(url: string, headers: Record<string, string>): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** A browser's way to a sleeping address: to the service's answer, and to the waiting page if it got one. */
export interface BrowserWake {
  ms: number;
  /** When the router's waiting page (503) arrived, if the browser was held longer than its hold. */
  waitingPageMs?: number;
}

/**
 * Milliseconds from opening `url` in a fresh browser page to an answer of the service (status 200 from it, past
 * the router's waiting page and whatever that page does to get there), and when the waiting page came if it did.
 */
export async function browserFirstAnswer(browser: Browser, url: string, headers: Record<string, string>): Promise<BrowserWake> {
  const context = await browser.newContext({ extraHTTPHeaders: headers });
  try {
    const page = await context.newPage();
    let waitingPageMs: number | undefined;
    const started = performance.now();
    page.on('response', (response) => {
      if (response.url() === url && response.status() === 503 && waitingPageMs === undefined) waitingPageMs = performance.now() - started;
    });
    const answered = page.waitForResponse((response) => response.url() === url && response.status() === 200, { timeout: 120_000 });
    await page.goto(url, { waitUntil: 'commit' });
    await answered;
    return { ms: performance.now() - started, waitingPageMs };
  } finally {
    await context.close();
  }
}

/** The phases the server logged for wakes of workspace `id`. */
export function loggedWakes(serverLog: string, id: number): Phase[][] {
  return loggedTimelines(serverLog, `wake of workspace ${id} took `);
}

/** The timelines of the server's log lines whose message starts with `prefix` (followed by `T ms: phase ms, ...`). */
function loggedTimelines(serverLog: string, prefix: string): Phase[][] {
  const timelines: Phase[][] = [];
  for (const line of serverLog.split('\n')) {
    if (!line.includes(prefix)) continue;
    const message = (JSON.parse(line) as { msg: string }).msg;
    timelines.push(parsePhases(message.slice(message.indexOf(prefix) + prefix.length)));
  }
  return timelines;
}

/**
 * The phases of the services of each wake of workspace `id` for a request to a service (the server's log line
 * `services of workspace N answered after T ms: web queue 5, ...`, from the wake queued): the editor runs in the
 * background until their last phase, `services ready`.
 */
export function loggedServiceStarts(serverLog: string, id: number): Phase[][] {
  return loggedTimelines(serverLog, `services of workspace ${id} answered after `);
}

/** Median of each phase over the wakes (in the order of the first), with the median total. */
export function phaseMedians(wakes: Phase[][]): { name: string; ms: number }[] {
  if (wakes.length === 0) return [];
  const names = wakes[0].map((p) => p.name);
  const rows = names.map((name) => ({ name, ms: median(wakes.map((w) => w.find((p) => p.name === name)?.ms ?? 0)) }));
  return [...rows, { name: 'total (server side)', ms: median(wakes.map((w) => w.reduce((sum, p) => sum + p.ms, 0))) }];
}

export function phaseTable(rows: { name: string; ms: number }[]): string {
  return rows.map((row) => `    ${row.name.padEnd(24)} ${row.ms.toFixed(0).padStart(6)} ms`).join('\n');
}

/** What the bench saw of one wake from the outside, in wall-clock milliseconds of this machine (the server's clock). */
export interface WakeSeen {
  /** Just before `POST /wake` was sent. */
  sentAt: number;
  /** The operation's `created_at`: where the server's timeline of the wake starts. */
  queuedAt: number;
  /** The first byte of the held request to the editor's host. */
  answeredAt: number;
}

/** Milliseconds since the epoch with the precision of performance.now() (as the server's timelines are). */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * The whole wake as the bench saw it, phase by phase: the API request up to the operation's creation, then the
 * server's phases up to Running saved (all of them, as logged), then what the router took from there to the held
 * request's first byte (seeing Running, going on, the editor's answer). The server's last phase, its services'
 * start, runs after Running and is not on this path. The rows add up to the measured time.
 */
export function itemisedWake(phases: Phase[], seen: WakeSeen): Phase[] {
  const untilRunning = phases.slice(0, phases.findIndex((p) => p.name === 'running saved') + 1);
  const runningAt = seen.queuedAt + untilRunning.reduce((sum, p) => sum + p.ms, 0);
  return [
    { name: 'POST /wake to queued', ms: seen.queuedAt - seen.sentAt },
    ...untilRunning,
    { name: 'Running to first byte', ms: seen.answeredAt - runningAt },
  ];
}

/** Median of each row over the itemised wakes, with the median of their totals (the measured time). */
export function itemisedMedians(wakes: Phase[][]): { name: string; ms: number }[] {
  if (wakes.length === 0) return [];
  const names = wakes[0].map((p) => p.name);
  const rows = names.map((name) => ({ name, ms: median(wakes.map((w) => w.find((p) => p.name === name)?.ms ?? 0)) }));
  return [...rows, { name: 'total (as measured)', ms: median(wakes.map((w) => w.reduce((sum, p) => sum + p.ms, 0))) }];
}

/** Workspaces (and so their pods and pod networks) take ids from `id` on: clear of tests and other servers here. */
export async function setFirstWorkspaceId(databaseUrl: string, id: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${id}`);
  } finally {
    await client.end();
  }
}
