// Sleep, stop, start and wake raced against each other on one workspace (API actions and wake on request through
// the router), on the local driver with real pods: every request answers, none with a 500, and whenever the
// workspace settles its state is what the driver sees (running with an editor, asleep or stopped without a pod).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const ROUNDS = 200;
/** Generous for 2 busy CI cores: a request that has not answered by then hangs. */
const REQUEST_DEADLINE_MS = 30_000;

let server: TestServer;
let dev: ApiClient;
let key: string;
let ws: number;

before(async () => {
  server = await startTestServer();
  const owner = await createPerson(server.admin, 'races-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Races' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Races' })).body.id;
  dev = owner.key;
  key = dev.auth.token!;
  const created = await dev.post('/workspaces', { team_id: team, name: 'raced' });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
});

after(async () => {
  if (ws) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
});

interface Outcome {
  action: string;
  status: number;
  ms: number;
  text: string;
}

/**
 * A browser opening the editor (`ide`) or the dev URL (`w`, which wakes the workspace services first: its editor
 * in the background until they answer; this workspace has none, so it says nothing is served): wakes a sleeping
 * workspace and gets the waiting page at once.
 */
const openHost = (prefix: 'ide-w' | 'w') => (signal: AbortSignal): Promise<{ status: number; text: string }> => {
  const port = Number(new URL(server.url).port);
  const headers = { host: `${prefix}${ws}.localhost`, accept: 'text/html', 'svc-authorization': `Bearer ${key}` };
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/', headers, agent: false, signal }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk.length < 2000 ? chunk : ''));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
};

// A connection per request: nginx closes idle kept-alive connections when it reloads (at every routing change,
// so often here), and a request sent on one at that moment fails in the client before reaching svc.
const post = (action: string) => (signal: AbortSignal) => dev.request('POST', `/workspaces/${ws}/${action}`, { signal, headers: { connection: 'close' } });
const actions: Record<string, (signal: AbortSignal) => Promise<{ status: number; text: string }>> = {
  sleep: post('sleep'),
  stop: post('stop'),
  start: post('start'),
  wake: post('wake'),
  open: openHost('ide-w'),
  'open dev URL': openHost('w'),
};
/** What each may answer in a race: refusals (409 busy or not allowed now, 503 wake blocked) but never a 500. */
const allowed: Record<string, number[]> = {
  sleep: [200, 409],
  stop: [200, 409],
  start: [202, 409, 503],
  wake: [202, 409, 503],
  // the editor (200), the waiting or refusal pages (503), or an editor that went away under the request (502)
  open: [200, 502, 503],
  // nothing served (404) once it runs or while it wakes up (no route waits for a replica), or the refusal pages
  'open dev URL': [404, 503],
};

async function timed(action: string): Promise<Outcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(REQUEST_DEADLINE_MS);
  try {
    const answer = await actions[action](signal);
    return { action, status: answer.status, ms: performance.now() - started, text: answer.text.slice(0, 300) };
  } catch (error) {
    const hung = signal.aborted;
    return { action, status: hung ? -1 : 0, ms: performance.now() - started, text: hung ? `no answer within ${REQUEST_DEADLINE_MS} ms` : `${String(error)} ${String((error as Error).cause ?? '')}` };
  }
}

/**
 * A deterministic mix, in pairs of rounds: one action that ends the pods (sleep twice as often as stop) alone, so the
 * next round often starts from a workspace at rest; then such an action, one that starts the pods (wake, start or a
 * browser opening the editor or the dev URL) and, every other time, one more of any kind, all at once.
 */
function roundActions(round: number): string[] {
  // 32-bit arithmetic (Math.imul): products past 2^53 as doubles lose their low bits, and the picks went one way
  let seed = Math.imul(round + 1, 2654435761) >>> 0;
  const pick = <T>(from: T[]): T => from[((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % from.length];
  const down = () => pick(['sleep', 'sleep', 'stop']);
  if (round % 2 === 0) return [down()];
  const mix = [down(), pick(['wake', 'start', 'open', 'open dev URL'])];
  if (round % 4 === 3) mix.push(pick(Object.keys(actions)));
  return mix;
}

/** Waits until no operation runs on the workspace, then compares its state with what the driver observes. */
async function assertSettledStateMatchesPods(): Promise<string> {
  await until(async () => ((await dev.get('/operations?active=true&limit=100')).body.items?.some((o: any) => o.target === `/workspaces/${ws}`) ? undefined : true), 'the operations to end', 120_000);
  const row = (await dev.get(`/workspaces/${ws}`)).body;
  const observed = await server.server.driver.editorState({ id: ws, uid: 0, storageGib: 0 });
  if (row.state === 'running') assert.equal(observed.state, 'ready', `running, but the driver sees ${JSON.stringify(observed)}`);
  else assert.equal(observed.state, 'absent', `${row.state} (${row.status_detail}), but the driver sees ${JSON.stringify(observed)}`);
  return row.state;
}

test(`sleep, stop, start, wake and opening raced ${ROUNDS} times: every request answers, none with a 500, state matches the pods`, async () => {
  const outcomes: Outcome[] = [];
  const settled: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const answers = await Promise.all(roundActions(round).map(timed));
    outcomes.push(...answers);
    for (const answer of answers) {
      assert.ok(allowed[answer.action].includes(answer.status), `round ${round}: ${answer.action} answered ${answer.status} after ${Math.round(answer.ms)} ms: ${answer.text}`);
    }
    if (round % 10 === 9) settled.push(await assertSettledStateMatchesPods());
  }
  const slowest = outcomes.reduce((a, b) => (b.ms > a.ms ? b : a));
  const counts = outcomes.reduce<Record<string, number>>((all, o) => ({ ...all, [`${o.action} ${o.status}`]: (all[`${o.action} ${o.status}`] ?? 0) + 1 }), {});
  console.log(`${outcomes.length} requests; slowest: ${slowest.action} ${slowest.status} in ${Math.round(slowest.ms)} ms; settled as ${settled.join(', ')}`);
  console.log(JSON.stringify(counts));
});
