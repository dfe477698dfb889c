// A dead editor is noticed (issue 35): when the processes of a running workspace's editor pod die, the server learns
// it from the pod's exit (not a poll), shows Error "The IDE does not start: <reason>" (spec 3.1) within 5 s, and
// starts the editor again with backoff by itself: the workspace is Running again without Sleep and Wake.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { runSvc } from './helpers/process.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';

let server: TestServer;
let dev: ApiClient;
let ws: number;
let dataDir: string;

before(async () => {
  server = await startTestServer({ driver: (context) => ((dataDir = context.dataDir), createLocalDriver({ dataDir: context.dataDir, clock: context.clock })) });
  const owner = await createPerson(server.admin, 'editor-death@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Death' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Death' })).body.id;
  dev = owner.key;
  const created = await dev.post('/workspaces', { team_id: team, name: 'mortal' });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
});

/** Kills every process of the editor pod: its PID 1 (the kernel ends its whole PID namespace with it). */
async function killEditorPod(): Promise<void> {
  const record = JSON.parse(await readFile(path.join(dataDir, 'pods', `${ws}.json`), 'utf8')) as { initPid: number };
  process.kill(record.initPid, 'SIGKILL');
}

const workspace = async () => (await dev.get(`/workspaces/${ws}`)).body;

async function sleepByHand(): Promise<void> {
  const slept = await until(async () => {
    const answer = await dev.post(`/workspaces/${ws}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
  assert.deepEqual([slept.body.state, slept.body.status_detail], ['sleeping', 'Asleep']);
}

test('svc exec tells the story once: the Error status and that it restarts, or that the editor pod has just ended', async () => {
  await sleepByHand(); // no pod: the states below are set by hand, before any death started the watch's timers
  const env = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, SVC_WORKSPACE: undefined, XDG_CONFIG_HOME: dataDir };
  const pool = server.server.database.pool;
  const detail = 'The IDE does not start: its processes ended (its sandbox exited with code 1); it is started again';
  // the states as the watch leaves them, set by hand so that no restart moves them on while the CLI asks
  await pool.query("UPDATE workspaces SET state = 'error', status_detail = $2, sleep_reason = NULL WHERE id = $1", [ws, detail]);
  const failed = await runSvc(['exec', String(ws), '--', 'true'], env);
  assert.equal(failed.code, 1);
  assert.equal(failed.stderr, `The workspace is not running: ${detail}. It restarts by itself; try again in a moment.\n`);
  // a row that still says running while the pod is gone (it is asleep here): never "not running: not running"
  await pool.query("UPDATE workspaces SET state = 'running', status_detail = 'Workspace is running' WHERE id = $1", [ws]);
  const gone = await runSvc(['exec', String(ws), '--', 'true'], env);
  assert.equal(gone.code, 1);
  assert.equal(gone.stderr, 'The workspace is not running: Its editor pod has just ended; svc restarts it by itself, try again in a moment.\n');
  await pool.query("UPDATE workspaces SET state = 'sleeping', status_detail = 'Asleep', sleep_reason = 'by-hand' WHERE id = $1", [ws]);
  assert.equal((await operationFinished(dev, (await dev.post(`/workspaces/${ws}/wake`)).body.id)).state, 'succeeded');
});

test('the editor pod killed: Error with the reason within 5 s, then Running again by itself; each step announced once', async () => {
  assert.equal((await workspace()).state, 'running');
  const events = await EventStream.open(dev);
  await killEditorPod();
  const failed = await until(async () => {
    const shown = await workspace();
    return shown.state === 'running' ? undefined : shown;
  }, 'the workspace to leave Running', 5000);
  assert.equal(failed.state, 'error');
  assert.match(failed.status_detail, /^The IDE does not start: its processes ended \(its sandbox (exited with code \d+|was killed by SIG\w+)\); it is started again$/);
  const back = await until(async () => {
    const shown = await workspace();
    return shown.state === 'running' ? shown : undefined;
  }, 'the workspace to run again by itself');
  assert.equal(back.status_detail, 'Workspace is running');
  // the console and `svc ws list` follow workspace.updated: Error with its reason, then Running, never a step between
  const passed = await events.until('workspace.updated', (d) => d.workspace_id === ws && d.workspace.state === 'running');
  events.close();
  const shown = passed.filter((e) => e.event === 'workspace.updated' && e.data.workspace_id === ws).map((e) => `${e.data.workspace.state}: ${e.data.workspace.status_detail}`);
  assert.deepEqual(shown, [`error: ${failed.status_detail}`, 'running: Workspace is running']);
  const editor = await server.server.driver.editorState({ id: ws, uid: back.uid ?? 0, storageGib: 1 });
  assert.equal(editor.state, 'ready');
});

test('a sleep ends the editor pod on purpose: no Error, it sleeps', async () => {
  await sleepByHand();
  assert.equal((await workspace()).state, 'sleeping');
});
