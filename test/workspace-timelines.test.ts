// Timelines of issue 40: a create, a Sync and a wake of a workspace record their phases against a running server,
// every phase present and the phases on the operation's line adding up to its wall time (within 10 %); a service's
// first healthy answer still awaited shows as running; `svc ws timings` prints the table.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ensureConsoleBuilt, launchBrowser, screenshot, unreachableControls } from './helpers/browser.ts';
import { assertProblem } from './helpers/client.ts';
import { startLandscapeWorkspace, type LandscapeWorkspace } from './helpers/landscape-workspace.ts';
import { runSvc } from './helpers/process.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { operationFinished, until } from './helpers/wait.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080 }
  slow:
    type: steps
    steps:
      - run: node slow.js
    ports:
      - port: 8081
    health: { port: 8081 }
`;
const webJs = `require('node:http').createServer((req, res) => res.end('web')).listen(8080, '0.0.0.0');\n`;
// answers its health check only once the test lets it (a file on the volume), so its first healthy answer is awaited
const slowJs = `const fs = require('node:fs');
const timer = setInterval(() => {
  if (!fs.existsSync('release-slow')) return;
  clearInterval(timer);
  require('node:http').createServer((req, res) => res.end('slow')).listen(8081, '0.0.0.0');
}, 50);
`;

let lw: LandscapeWorkspace;
let configHome: string;
let createSeenMs: number;

before(async () => {
  const began = performance.now();
  lw = await startLandscapeWorkspace({ team: 'Timelines', workspace: 'timed', files: { 'svc.yml': svcYml, 'web.js': webJs, 'slow.js': slowJs } });
  createSeenMs = performance.now() - began;
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-timings-'));
});

after(async () => {
  await lw?.close();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

interface Phase { name: string; beside: boolean; state: string; offset_ms: number; duration_ms: number; detail?: string; summary: string }

const names = (timeline: { phases: Phase[] }, beside: boolean) => timeline.phases.filter((p) => p.beside === beside).map((p) => p.name);

/**
 * The phases on the line follow one another from the moment it was queued and add up to its wall time within 10 %;
 * that wall time is at most what the test saw from asking to seeing it done (`seenMs`).
 */
function assertAddsUp(timeline: { wall_ms: number; phases_ms: number; phases: Phase[] }, seenMs: number): void {
  assert.ok(timeline.wall_ms > 0 && timeline.wall_ms <= seenMs, `wall time ${timeline.wall_ms} ms, seen ${seenMs} ms`);
  const line = timeline.phases.filter((p) => !p.beside);
  const sum = line.reduce((total, p) => total + p.duration_ms, 0);
  assert.equal(timeline.phases_ms, sum);
  assert.ok(Math.abs(sum - timeline.wall_ms) <= timeline.wall_ms * 0.1, `phases ${sum} ms, wall time ${timeline.wall_ms} ms: ${JSON.stringify(line)}`);
  assert.equal(line[0].offset_ms, 0, 'the first phase begins when the operation was queued');
  for (let i = 1; i < line.length; i++) {
    assert.ok(Math.abs(line[i].offset_ms - (line[i - 1].offset_ms + line[i - 1].duration_ms)) <= 2, `${line[i].name} follows ${line[i - 1].name}`);
  }
}

function assertIncludes(actual: string[], expected: string[], what: string): void {
  const missing = expected.filter((name) => !actual.includes(name));
  assert.deepEqual(missing, [], `${what} lacks ${missing.join(', ')}; it has ${actual.join(', ')}`);
}

const editorPhases = ['managed instances', 'base image', 'networks', 'pod preparation', 'sandbox start', 'agent start', 'editor start', 'running saved', 'services started'];

test('a create records queue, volume, clone with its size, the pod, agent and editor phases and prepare, adding up to its wall time', async () => {
  const answer = await lw.owner.get(`/workspaces/${lw.ws}/timings`);
  assert.equal(answer.status, 200, answer.text);
  const timeline = answer.body;
  assert.equal(timeline.kind, 'workspace.create');
  assert.equal(timeline.operation_state, 'succeeded');
  assertIncludes(names(timeline, false), ['queue and claim', 'volume', 'clone', ...editorPhases, 'prepare'], 'the create');
  assert.deepEqual(timeline.phases.filter((p: Phase) => p.state !== 'done'), []);
  assertAddsUp(timeline, createSeenMs);
  const clone = timeline.phases.find((p: Phase) => p.name === 'clone');
  assert.match(clone.detail, /^cloned .+ \([\d.]+ [kMG]?B on the volume\)$/);
  assert.match(clone.summary, /^cloned .+ on the volume\): [\d.]+ m?s$/);
  assert.match(timeline.phases.find((p: Phase) => p.name === 'base image').detail, /the installation's base image/);
  const same = await lw.owner.get(`/operations/${timeline.operation_id}/timeline`);
  assert.equal(same.status, 200, same.text);
  assert.deepEqual(same.body.phases, timeline.phases);
});

test('a Sync records its phases and each service\'s start; a first healthy answer still awaited shows as running, with its start, until it comes', async () => {
  const began = performance.now();
  const synced = await lw.sync();
  const seen = performance.now() - began;
  assert.equal(synced.state, 'succeeded', JSON.stringify(synced.error));
  await lw.reaches('web', 'running');
  const read = async () => (await lw.owner.get(`/operations/${synced.id}/timeline`)).body;
  const waiting = await until(async () => {
    const timeline = await read();
    return timeline.phases.find((p: Phase) => p.name === 'web healthy')?.state === 'done' ? timeline : undefined;
  }, 'web\'s first healthy answer on the timeline');
  assert.equal(waiting.kind, 'landscape.sync');
  assertIncludes(names(waiting, false), ['queue and claim', 'prepare', 'plan', 'images and volume size', 'save', 'managed services', 'services started', 'shell file'], 'the Sync');
  assertIncludes(names(waiting, true), ['web start', 'web healthy', 'slow start', 'slow healthy'], 'the Sync\'s services');
  assertAddsUp(waiting, seen);
  const slow = waiting.phases.find((p: Phase) => p.name === 'slow healthy');
  assert.equal(slow.state, 'running');
  assert.equal(slow.beside, true);
  assert.ok(Date.parse(slow.started_at) > Date.parse(waiting.started_at));
  assert.match(slow.summary, /^waiting for slow's first healthy answer: running for [\d.]+ m?s$/);
  const timings = await lw.owner.get(`/workspaces/${lw.ws}/timings`);
  assert.equal(timings.body.operation_id, synced.id, 'the latest timed operation is the Sync');

  await writeFile(lw.volumeFile('release-slow'), 'go\n');
  const answered = await until(async () => {
    const timeline = await read();
    return timeline.phases.find((p: Phase) => p.name === 'slow healthy')?.state === 'done' ? timeline : undefined;
  }, 'slow\'s first healthy answer on the timeline');
  const done = answered.phases.find((p: Phase) => p.name === 'slow healthy');
  assert.equal(done.detail, 'slow answered its health check');
  assert.equal(done.started_at, slow.started_at, 'the phase keeps its start');
});

test('a wake records the pod gate, the editor pod\'s phases and the services beside them, adding up to its wall time', async () => {
  const slept = await lw.owner.post(`/workspaces/${lw.ws}/sleep`, {});
  assert.equal(slept.status, 200, slept.text);
  const began = performance.now();
  const woken = await lw.owner.post(`/workspaces/${lw.ws}/wake`, {});
  assert.equal(woken.status, 202, woken.text);
  const finished = await operationFinished(lw.owner, woken.body.id);
  const seen = performance.now() - began;
  assert.equal(finished.state, 'succeeded', JSON.stringify(finished.error));
  const timeline = await until(async () => {
    const answer = (await lw.owner.get(`/workspaces/${lw.ws}/timings`)).body;
    return answer.phases.filter((p: Phase) => p.beside && p.name.endsWith('healthy')).every((p: Phase) => p.state === 'done') ? answer : undefined;
  }, 'the services\' first healthy answers after the wake');
  assert.equal(timeline.operation_id, woken.body.id);
  assert.equal(timeline.kind, 'workspace.wake');
  assertIncludes(names(timeline, false), ['queue and claim', 'pod gate', 'waking up saved', ...editorPhases], 'the wake');
  assertIncludes(names(timeline, true), ['web start', 'web healthy', 'slow start', 'slow healthy'], 'the wake\'s services');
  assertAddsUp(timeline, seen);
});

test('svc ws timings prints each phase with its start, duration, bar and what it did; --op picks the operation', async () => {
  const env = { XDG_CONFIG_HOME: configHome, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_TEAM: undefined, SVC_WORKSPACE: undefined };
  const login = await runSvc(['login', lw.server.url, '--token', lw.owner.auth.token!], env);
  assert.equal(login.code, 0, login.stderr);
  const latest = await runSvc(['ws', 'timings', String(lw.ws)], env);
  assert.equal(latest.code, 0, latest.stderr);
  const lines = latest.stdout.split('\n');
  assert.match(lines[0], /^timed \(\d+\): workspace\.wake [0-9a-f-]{36} \(succeeded\): [\d.]+ m?s from queued to done; the phases on its line add up to [\d.]+ m?s$/);
  assert.match(lines[1], /^PHASE +START +TOOK +TIME AXIS +WHAT IT DID$/);
  assert.match(latest.stdout, /\nqueue and claim +\+0 ms +[\d.]+ m?s +\|█ */);
  assert.match(latest.stdout, /\n {2}slow healthy +\+[\d.]+ m?s +[\d.]+ m?s +\|[ █]+\| +slow answered its health check\n/);
  const create = (await lw.owner.get(`/operations?kind=workspace.create&workspace=${lw.ws}`)).body.items[0];
  const picked = await runSvc(['ws', 'timings', String(lw.ws), '--op', create.id, '--json'], env);
  assert.equal(picked.code, 0, picked.stderr);
  assert.equal(JSON.parse(picked.stdout).kind, 'workspace.create');
});

test('the console\'s workspace page shows the last wake\'s timings as bars, live: a first healthy answer awaited runs until it comes', async () => {
  await ensureConsoleBuilt();
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(60_000);
    const link = await lw.server.admin.post(`/users/${lw.ownerId}/sign-in-links`);
    assert.equal(link.status, 201, link.text);
    await page.goto(link.body.url);
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await page.goto(`${lw.server.url}/workspaces/${lw.ws}`);
    const timings = page.getByTestId('timings');
    const latest = (await lw.owner.get(`/workspaces/${lw.ws}/timings`)).body;
    await page.locator(`[data-testid="timings"][data-operation="${latest.operation_id}"]`).waitFor();
    assert.match(await timings.locator('summary').innerText(), /^Timings: Wake workspace, [\d.]+ m?s$/);

    // asleep, and slow held back again: the wake's timeline arrives live, slow's first healthy answer running
    await rm(lw.volumeFile('release-slow'));
    const slept = await lw.owner.post(`/workspaces/${lw.ws}/sleep`, {});
    assert.equal(slept.status, 200, slept.text);
    const woken = await lw.owner.post(`/workspaces/${lw.ws}/wake`, {});
    assert.equal(woken.status, 202, woken.text);
    const live = page.locator(`[data-testid="timings"][data-operation="${woken.body.id}"]`);
    await live.locator('li[data-phase="slow healthy"][data-state="running"]').waitFor();
    await live.locator('li[data-phase="web healthy"][data-state="done"]').waitFor();
    await live.locator('li[data-phase="editor start"][data-state="done"]').waitFor();
    assert.match(await live.locator('li[data-phase="slow healthy"] .timing-took').innerText(), /^running [\d.]+ m?s$/);
    await screenshot(page, 'timings-01-running');
    await writeFile(lw.volumeFile('release-slow'), 'go\n');
    await live.locator('li[data-phase="slow healthy"][data-state="done"]').waitFor();
    assert.equal(await live.locator('li[data-phase="slow healthy"] .timing-detail').innerText(), 'slow answered its health check');
    assert.equal(await live.locator('li.timing-beside').count(), 4, 'each service\'s start and first healthy answer beside the line');
    assert.deepEqual(await unreachableControls(page), []);
    await screenshot(page, 'timings-02-done');
  } finally {
    await browser.close();
  }
});

test('a create whose clone fails keeps its timeline with the clone failed, saying what it tried', async () => {
  const created = await lw.owner.post('/workspaces', { team_id: lw.team, name: 'unclonable', storage_gib: 1, git: { provider: 'git', repo: `${lw.repository.url}-missing` } });
  assert.equal(created.status, 202, created.text);
  const ws = Number(created.body.target.split('/')[2]);
  try {
    const failed = await operationFinished(lw.owner, created.body.id);
    assert.equal(failed.state, 'failed');
    const timeline = (await lw.owner.get(`/workspaces/${ws}/timings`)).body;
    assert.equal(timeline.operation_id, created.body.id);
    assert.deepEqual(timeline.phases.map((p: Phase) => [p.name, p.state]), [['queue and claim', 'done'], ['volume', 'done'], ['clone', 'failed']]);
    assert.match(timeline.phases[2].summary, /^cloning .+-missing: [\d.]+ m?s \(failed\)$/);
  } finally {
    await removeWorkspaces(lw.driver, [ws]);
  }
});

test('an operation without a timeline, or of another workspace, is answered 404 not-found', async () => {
  const teardown = await lw.owner.post(`/workspaces/${lw.ws}/landscape/teardown`);
  assert.equal(teardown.status, 202, teardown.text);
  await operationFinished(lw.owner, teardown.body.id);
  assertProblem(await lw.owner.get(`/operations/${teardown.body.id}/timeline`), 404, 'not-found');
  assertProblem(await lw.owner.get(`/workspaces/${lw.ws}/timings?op=00000000-0000-4000-8000-000000000000`), 404, 'not-found');
  assertProblem(await lw.owner.get(`/workspaces/${lw.ws}/timings?op=nope`), 422, 'validation');
});
