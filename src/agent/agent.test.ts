import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startAgent, type RunningAgent } from './agent.ts';
import { builtInEditorCommand, loaderArguments } from './editor-start.ts';
import { parseAgentStatus, type AgentStatus } from './protocol.ts';

let workspaceDir: string;
const agents: RunningAgent[] = [];

before(async () => {
  workspaceDir = await mkdtemp(path.join(os.tmpdir(), 'svc-agent-'));
});
after(async () => {
  for (const agent of agents) await agent.close();
  await rm(workspaceDir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function agentWith(editorCommand?: string): Promise<{ agent: RunningAgent; editorPort: number }> {
  const editorPort = await freePort();
  const agent = await startAgent({ host: '127.0.0.1', port: 0, editorHost: '127.0.0.1', editorPort, editorCommand, workspaceDir, log: () => undefined });
  agents.push(agent);
  return { agent, editorPort };
}

async function statusOf(agent: RunningAgent): Promise<AgentStatus> {
  const response = await fetch(`http://127.0.0.1:${agent.port}/status`, { headers: { connection: 'close' } });
  assert.equal(response.status, 200);
  const status = parseAgentStatus(await response.json());
  assert.ok(status);
  return status;
}

async function waitForEditorState(agent: RunningAgent, state: string, timeoutMs = 20_000): Promise<AgentStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await statusOf(agent);
    if (status.editor.state === state) return status;
    if (Date.now() > deadline) throw new Error(`the editor stayed ${JSON.stringify(status.editor)}, wanted ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the agent reports its version and pid, and its built-in editor becomes ready and serves its page', async () => {
  const { agent, editorPort } = await agentWith();
  const first = await statusOf(agent);
  assert.deepEqual([first.agentVersion, first.pid, first.editor.port], ['1', process.pid, editorPort]);
  const ready = await waitForEditorState(agent, 'ready');
  assert.equal(typeof ready.editor.pid, 'number');
  assert.equal(ready.editor.restarts, 0);
  const page = await fetch(`http://127.0.0.1:${editorPort}/`, { headers: { connection: 'close' } });
  assert.match(await page.text(), /<textarea id="text"/);
  assert.equal((await fetch(`http://127.0.0.1:${agent.port}/other`, { headers: { connection: 'close' } })).status, 404);
});

test('GET /status?wait= answers when the editor becomes ready (no poll needed), with the times a wake is measured by', async () => {
  const { agent } = await agentWith();
  const first = await statusOf(agent);
  assert.equal(first.editor.state, 'starting', 'the built-in editor is not up the moment the agent listens');
  const response = await fetch(`http://127.0.0.1:${agent.port}/status?wait=30000`, { headers: { connection: 'close' } });
  const changed = parseAgentStatus(await response.json());
  assert.equal(changed?.editor.state, 'ready', 'answered at the change, long before the 30 s');
  const { startedAt, listeningAt, editor } = changed!;
  // the editor is started first, while the agent's status server starts
  assert.ok(startedAt! <= editor.startedAt! && editor.startedAt! <= listeningAt! && editor.startedAt! <= editor.answeredAt!, JSON.stringify(changed));
  const unchanged = await fetch(`http://127.0.0.1:${agent.port}/status?wait=1`, { headers: { connection: 'close' } });
  assert.equal(parseAgentStatus(await unchanged.json())?.editor.state, 'ready', 'without a change it answers once the wait is over');
});

test('an editor that keeps exiting is restarted, then reported failed with its last error line', async () => {
  const { agent } = await agentWith('echo "starting"; echo "cannot load the workbench" >&2; exit 2');
  const failed = await waitForEditorState(agent, 'failed');
  assert.equal(failed.editor.reason, 'cannot load the workbench');
  assert.ok(failed.editor.restarts >= 3);
});

test('an editor killed from outside is started again and answers again', async () => {
  const { agent } = await agentWith();
  const ready = await waitForEditorState(agent, 'ready');
  process.kill(-ready.editor.pid!, 'SIGKILL');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await statusOf(agent);
    if (status.editor.restarts === 1 && status.editor.state === 'ready') break;
    assert.ok(Date.now() < deadline, `not restarted: ${JSON.stringify(status.editor)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});

test('closing the agent stops its editor', async () => {
  const { agent, editorPort } = await agentWith();
  await waitForEditorState(agent, 'ready');
  await agent.close();
  agents.splice(agents.indexOf(agent), 1);
  await assert.rejects(fetch(`http://127.0.0.1:${editorPort}/`, { headers: { connection: 'close' } }));
});

test('the built-in editor runs with the same node and loaders as the agent, bare specifiers resolved', () => {
  const resolve = (specifier: string) => `file:///modules/${specifier}/index.mjs`;
  assert.deepEqual(loaderArguments(['--import', 'tsx', '--test', '--require', '/abs/pre.cjs', '--import=file:///x.mjs', '--no-warnings'], resolve), [
    '--import', 'file:///modules/tsx/index.mjs', '--require', '/abs/pre.cjs', '--import', 'file:///x.mjs',
  ]);
  assert.deepEqual(loaderArguments(['--loader'], resolve), []);
  const command = builtInEditorCommand();
  assert.ok(command.startsWith(`exec ${process.execPath} `), command);
  assert.ok(command.endsWith('/src/agent/editor.ts'), command);
});

test('only a well-formed status is taken for an agent\'s answer', () => {
  const good = { agentVersion: '1', pid: 2, editor: { state: 'ready', restarts: 0, port: 8443 } };
  assert.deepEqual(parseAgentStatus(good), good);
  for (const bad of [null, 'x', {}, { ...good, pid: '2' }, { ...good, editor: { ...good.editor, state: 'odd' } }, { ...good, editor: undefined }]) {
    assert.equal(parseAgentStatus(bad), undefined, JSON.stringify(bad));
  }
});

test('the status carries the fingerprint of the landscape files, which moves when svc.yml is written', async () => {
  const { agent } = await agentWith('exec sleep 600');
  const fingerprintOtherThan = async (previous: string | undefined): Promise<string | undefined> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = (await statusOf(agent)).landscapeFiles;
      if ((now !== undefined && now !== previous) || Date.now() > deadline) return now;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const first = await fingerprintOtherThan(undefined);
  assert.match(first ?? '', /^[0-9a-f]{64}$/);
  await writeFile(path.join(workspaceDir, 'svc.yml'), 'schema: svc/v1\n');
  assert.notEqual(await fingerprintOtherThan(first), first);
  assert.equal(parseAgentStatus({ agentVersion: '1', pid: 1, editor: { state: 'ready', port: 1, restarts: 0 }, landscapeFiles: 7 })?.landscapeFiles, undefined);
});
