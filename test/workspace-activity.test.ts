// What keeps a workspace awake and what put it to sleep (issue 40): dev-URL traffic alone counts for the idle
// timeout, the workspace says why it slept, and a keep-awake holds it past its idle timeout until it ends by itself.
// Time moves with the server's clock (30-minute timeouts pass at once); the idle chore is run by the test. An open
// terminal counts again every 20 s (real time) while open: that one wait is polled for.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL } from '../src/core/channel-protocol.ts';
import { assertProblem } from './helpers/client.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

const MINUTE = 60_000;

let server: TestServer;
let served: ServedWorkspace;
let ws: number;
let devHost: string;

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  served = await servedWorkspace(server, 'awake');
  ws = served.id;
  devHost = `w${ws}.${server.server.config.workspaceDomain}`;
});

after(async () => {
  if (served) await removeWorkspaces(server.server.driver, [ws]);
  await served?.repository.remove();
  await server?.close();
});

/** A request to the dev URL with the owner's key (fetch cannot set Host). */
function devRequest(target: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { host: devHost, 'svc-authorization': `Bearer ${served.key}` };
    const request = http.request({ host: '127.0.0.1', port: Number(new URL(server.url).port), headers, agent: false, path: target }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

const hhmm = (at: Date) => `${at.toISOString().slice(11, 16)} UTC`;
const workspace = async () => (await served.owner.get(`/workspaces/${ws}`)).body;

/**
 * Dev-URL traffic at the server's "now" until it is recorded as the last use (nginx reuses an admission for a few
 * seconds, so a request may not reach svc; traffic that goes on does).
 */
async function trafficNow(target: string): Promise<void> {
  const now = server.clock.now().toISOString();
  await until(async () => {
    const answer = await devRequest(target);
    assert.equal(answer.status, 200, answer.text);
    const activity = (await served.owner.get(`/workspaces/${ws}/activity`)).body;
    return activity.last_use_at === now ? activity : undefined;
  }, 'the request to count as use');
}

test('dev-URL traffic alone keeps an idle workspace awake; when it stops the workspace sleeps and says why', async () => {
  assert.equal((await workspace()).idle_timeout_minutes, 30);
  // 60 minutes of dev-URL traffic, a request every 20 minutes: past the timeout twice over, no editor, no terminal
  for (let i = 1; i <= 3; i++) {
    server.clock.advance(20 * MINUTE);
    await trafficNow(`/page-${i}`);
    assert.deepEqual(await server.server.sleepIdleWorkspaces(), [], `still in use after ${i * 20} min`);
  }
  const lastUse = server.clock.now();
  const activity = (await served.owner.get(`/workspaces/${ws}/activity`)).body;
  assert.deepEqual(activity.uses.map((use: { kind: string; address: string }) => [use.kind, use.address]), [['dev-url', devHost]], 'only the dev URL was used');
  assert.equal(activity.uses[0].last_at, lastUse.toISOString());
  const running = await workspace();
  assert.equal(running.state, 'running');
  assert.equal(running.activity.sleeps_at, new Date(lastUse.getTime() + 30 * MINUTE).toISOString());
  assert.equal(running.activity.text, `awake: sleeps at ${hhmm(new Date(lastUse.getTime() + 30 * MINUTE))} if nobody uses it; last use: dev URL (${devHost}) at ${hhmm(lastUse)}`);

  // the traffic stops: 29 minutes later it still runs, 31 minutes later the chore puts it to sleep
  server.clock.advance(29 * MINUTE);
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), []);
  server.clock.advance(2 * MINUTE);
  const sleptAt = server.clock.now();
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), [ws]);
  const asleep = await workspace();
  assert.equal(asleep.state, 'sleeping');
  assert.deepEqual(asleep.activity, {
    text: `asleep since ${hhmm(sleptAt)}: nobody used it for 30 min; last use: dev URL (${devHost}) at ${hhmm(lastUse)}`,
    last_use_at: lastUse.toISOString(),
    last_use_kind: 'dev-url',
    last_use_address: devHost,
    asleep_since: sleptAt.toISOString(),
    asleep_reason_text: 'nobody used it for 30 min',
  });
  assert.equal(asleep.keep_awake, undefined);
});

test('keep-awake holds a workspace past its idle timeout, is listed with who asked, and ends by itself (then it sleeps)', async () => {
  if ((await workspace()).state === 'sleeping') {
    const wake = await served.owner.post(`/workspaces/${ws}/wake`);
    assert.equal(wake.status, 202, wake.text);
    assert.equal((await operationFinished(served.owner, wake.body.id)).state, 'succeeded');
  }
  const asked = server.clock.now();
  const kept = await served.owner.post(`/workspaces/${ws}/keep-awake`, { for_seconds: 2 * 3600 });
  assert.equal(kept.status, 200, kept.text);
  const until2h = new Date(asked.getTime() + 2 * 3600_000);
  assert.equal(kept.body.until, until2h.toISOString());
  assert.equal(kept.body.asked_by_email, 'awake-owner@example.com');
  assert.equal(kept.body.asked_at, asked.toISOString());

  const listed = await workspace();
  assert.deepEqual(listed.keep_awake, kept.body);
  assert.match(listed.activity.text, new RegExp(`^kept awake until ${hhmm(until2h)} by awake-owner@example\\.com; `));
  assert.equal((await served.owner.get(`/workspaces/${ws}/activity`)).body.keep_awake.until, until2h.toISOString());

  // nobody uses it: past its idle timeout (31 min, 61 min, 119 min) it stays awake
  for (const minutes of [31, 30, 58]) {
    server.clock.advance(minutes * MINUTE);
    assert.deepEqual(await server.server.sleepIdleWorkspaces(), []);
    assert.equal((await workspace()).state, 'running');
  }
  // the keep-awake ends by itself: the idle timeout applies again, and it is long over
  server.clock.advance(2 * MINUTE);
  const sleptAt = server.clock.now();
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), [ws]);
  const asleep = await workspace();
  assert.equal(asleep.state, 'sleeping');
  assert.equal(asleep.keep_awake, undefined, 'an ended keep-awake is not listed');
  assert.equal(asleep.activity.asleep_since, sleptAt.toISOString());
  assert.equal(asleep.activity.asleep_reason_text, `nobody used it for 30 min, then its keep-awake by awake-owner@example.com ended at ${hhmm(until2h)}`);
});

test('keep-awake is refused for a sleeping workspace and beyond 24 h; DELETE ends it at once', async () => {
  assert.equal((await workspace()).state, 'sleeping');
  const refused = await served.owner.post(`/workspaces/${ws}/keep-awake`, { for_seconds: 3600 });
  assertProblem(refused, 409, 'conflict');
  assert.match(refused.body.detail, /Only a running workspace can be kept awake; this one is sleeping\. Wake it first/);
  assertProblem(await served.owner.post(`/workspaces/${ws}/keep-awake`, { for_seconds: 24 * 3600 + 1 }), 422, 'validation');
  assertProblem(await served.owner.post(`/workspaces/${ws}/keep-awake`, {}), 422, 'validation');

  const wake = await served.owner.post(`/workspaces/${ws}/wake`);
  assert.equal((await operationFinished(served.owner, wake.body.id)).state, 'succeeded');
  const kept = await served.owner.post(`/workspaces/${ws}/keep-awake`, { for_seconds: 24 * 3600 });
  assert.equal(kept.status, 200, kept.text);
  server.clock.advance(31 * MINUTE);
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), []);
  const ended = await served.owner.delete(`/workspaces/${ws}/keep-awake`);
  assert.equal(ended.status, 204, ended.text);
  assertProblem(await served.owner.delete(`/workspaces/${ws}/keep-awake`), 404, 'not-found');
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), [ws]);
  assert.equal((await workspace()).activity.asleep_reason_text, 'nobody used it for 30 min');
});

/** A WebSocket stream of the API (exec, port-forward) with the owner's key, open. */
function openStream(target: string, protocol: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/workspaces/${ws}/${target}`, protocol, { headers: { authorization: `Bearer ${served.key}` } });
    socket.on('error', reject);
    socket.on('unexpected-response', (_request, response) => reject(new Error(`no upgrade: ${response.statusCode}`)));
    socket.on('open', () => resolve(socket));
  });
}

const closed = (socket: WebSocket) => new Promise<void>((resolve) => (socket.readyState === socket.CLOSED ? resolve() : socket.once('close', () => resolve())));

test('an open terminal keeps the workspace awake while open, not only at its start; a port-forward counts as its own kind', async () => {
  const wake = await served.owner.post(`/workspaces/${ws}/wake`);
  assert.equal((await operationFinished(served.owner, wake.body.id)).state, 'succeeded');
  const uses = async () => (await served.owner.get(`/workspaces/${ws}/activity`)).body.uses as Array<{ kind: string; address: string; last_at: string }>;
  const forward = await openStream('port-forward?service=web&port=8080', PORT_FORWARD_PROTOCOL);
  const opened = server.clock.now().toISOString();
  await until(async () => ((await uses()).some((u) => u.kind === 'port-forward' && u.address === 'web:8080' && u.last_at === opened) ? true : undefined), 'the port-forward to count');
  forward.close();
  await closed(forward);

  const shell = await openStream('exec?tty=true&stdin=true&cols=80&rows=24', EXEC_PROTOCOL);
  await until(async () => ((await uses()).some((u) => u.kind === 'terminal' && u.address === 'editor') ? true : undefined), 'the terminal to count');
  // 25 minutes on, the open terminal counts again at its next tick (every 20 s while open)
  server.clock.advance(25 * MINUTE);
  const ticked = server.clock.now().toISOString();
  await until(async () => ((await uses()).some((u) => u.kind === 'terminal' && u.last_at === ticked) ? true : undefined), 'the open terminal to count again', 60_000);
  server.clock.advance(25 * MINUTE);
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), [], '50 minutes after it opened, the terminal still holds it');
  const stillOpen = server.clock.now().toISOString();
  shell.close();
  await closed(shell);
  // closed, it counts no more: 31 minutes on it sleeps, its last use the terminal's last tick (one may have come since)
  server.clock.advance(31 * MINUTE);
  assert.deepEqual(await server.server.sleepIdleWorkspaces(), [ws]);
  const asleep = await workspace();
  assert.equal(asleep.activity.last_use_kind, 'terminal');
  assert.ok([ticked, stillOpen].includes(asleep.activity.last_use_at), asleep.activity.last_use_at);
  assert.equal(asleep.activity.asleep_reason_text, 'nobody used it for 30 min');
});

test('svc ws keep-awake and svc ws activity: asked, listed with who asked, ended; refusals say why', async () => {
  const configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-awake-'));
  try {
    const env = { XDG_CONFIG_HOME: configHome, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_TEAM: undefined, SVC_WORKSPACE: undefined };
    const svc = (...args: string[]) => runSvc(args, env);
    assert.equal((await svc('login', server.url, '--token', served.key)).code, 0);
    const asleep = await svc('ws', 'keep-awake', 'awake', '--for', '2h');
    assert.equal(asleep.code, 1);
    assert.match(asleep.stderr, /Only a running workspace can be kept awake; this one is sleeping\. Wake it first \(svc ws wake\)\./);
    assert.equal((await svc('ws', 'wake', 'awake')).code, 0);
    const tooLong = await svc('ws', 'keep-awake', 'awake', '--for', '25h');
    assert.notEqual(tooLong.code, 0);
    assert.match(tooLong.stderr, /--for takes a duration from 1m to 24h such as 2h, 90m or 1h30m, not "25h"/);

    const kept = await svc('ws', 'keep-awake', 'awake', '--for', '2h');
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, new RegExp(`^awake \\(${ws}\\): kept awake until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\(asked by awake-owner@example\\.com\\)\\.\\n$`));
    const activity = await svc('ws', 'activity', 'awake');
    assert.equal(activity.code, 0, activity.stderr);
    assert.match(activity.stdout, /^Activity: +kept awake until \d\d:\d\d UTC by awake-owner@example\.com; last use: action \(keep-awake\) at \d\d:\d\d UTC$/m);
    assert.match(activity.stdout, /^Kept awake: +until .+ \(asked by awake-owner@example\.com\)$/m);
    assert.match(activity.stdout, /^KIND +ADDRESS +LAST USE +FIRST USE$/m);
    assert.match(activity.stdout, new RegExp(`^dev-url +${devHost.replace(/\./g, '\\.')} `, 'm'));
    assert.match((await svc('ws', 'show', 'awake')).stdout, /^Kept awake: +until .+ \(asked by awake-owner@example\.com\)$/m);

    const ended = await svc('ws', 'keep-awake', 'awake', '--end');
    assert.equal(ended.code, 0, ended.stderr);
    assert.equal(ended.stdout, `awake (${ws}): no longer kept awake; it sleeps after 30 min unused.\n`);
    const neither = await svc('ws', 'keep-awake', 'awake');
    assert.notEqual(neither.code, 0);
    assert.match(neither.stderr, /give --for DURATION \(e\.g\. --for 2h\) or --end/);
  } finally {
    await rm(configHome, { recursive: true, force: true });
  }
});
