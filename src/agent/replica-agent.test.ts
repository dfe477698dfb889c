// The replica agent as a plain process on this machine (no sandbox): steps, server supervision, health, logs.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freeLoopbackPort } from '../core/loopback.ts';
import { startReplicaAgent, type RunningReplicaAgent } from './replica-agent.ts';
import type { LogStream } from './log-file.ts';
import { defaultReplicaTimings, type ReplicaConfig } from './replica-protocol.ts';

type LogLine = { stream: LogStream; text: string };

const fast = { ...defaultReplicaTimings, backoffBaseMs: 50, backoffMaxMs: 200, giveUpWindowMs: 10_000, probeIntervalMs: 50 };

async function withAgent(config: Partial<ReplicaConfig>, check: (agent: RunningReplicaAgent, lines: LogLine[], dir: string) => Promise<void>) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-replica-agent-'));
  const lines: LogLine[] = [];
  const full: ReplicaConfig = { service: 'web', index: 0, steps: [], env: {}, ports: [], needs: [], timings: fast, ...config };
  const agent = await startReplicaAgent({ host: '127.0.0.1', port: 0, workspaceDir: dir, config: full, log: (stream, text) => lines.push({ stream, text }) });
  try {
    await check(agent, lines, dir);
  } finally {
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('steps run in order in the workspace directory, then the server runs and passes its health check', async () => {
  const port = await freeLoopbackPort();
  const steps = [
    { name: 'build', run: 'echo built > out.txt; echo building; echo warn >&2' },
    { name: 'serve', run: `exec python3 -m http.server ${port} --bind 127.0.0.1` },
  ];
  await withAgent({ steps, ports: [port], health: { port, path: '/out.txt', mode: 'http-2xx' }, env: { GREETING: 'hi' } }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'running');
    assert.equal(agent.status().replica.ready, true);
    assert.ok(lines.some((l) => l.stream === 'stdout' && l.text === 'building'));
    assert.ok(lines.some((l) => l.stream === 'stderr' && l.text === 'warn'));
    assert.ok(lines.some((l) => l.stream === 'system' && l.text === 'Step 1/2: build'));
  });
});

test('a failing step fails the run with its code; later steps never run', async () => {
  await withAgent({ steps: [{ run: 'exit 3' }, { run: 'touch never' }] }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.equal(agent.status().replica.detail, 'Step exited with code 3');
    assert.equal(lines.at(-1)?.text, 'Step exited with code 3');
  });
});

test('a crash-looping server gives up after 5 failures within the window', async () => {
  await withAgent({ steps: [{ run: 'echo $GREETING; exit 7' }], env: { GREETING: 'hello' } }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.equal(agent.status().replica.detail, 'Giving up: exited with 7; 5 failures in 10s');
    assert.equal(lines.filter((l) => l.stream === 'stdout' && l.text === 'hello').length, 5);
    assert.deepEqual(
      lines.filter((l) => l.text.startsWith('Server exited')).map((l) => l.text),
      [1, 2, 3, 4].map((n) => `Server exited with code 7; restarting in ${Math.min(50 * 2 ** (n - 1), 200)}ms`),
    );
  });
});

test('a server that exits 0 finishes the service; a missing command gets the 127 note', async () => {
  await withAgent({ steps: [{ run: 'true' }] }, async (agent) => {
    await until(() => agent.status().replica.status === 'finished');
  });
  await withAgent({ steps: [{ run: 'no-such-command-here' }, { run: 'true' }] }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.ok(lines.some((l) => l.stream === 'system' && l.text === 'Exit code 127: the command is missing from the image'));
  });
});

test('a service without steps fails at once; an image is named in the log with its digest and the shell', async () => {
  await withAgent({ steps: [], image: { image: 'node:20', digest: 'sha256:2222', env: {} } }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.equal(agent.status().replica.detail, 'The service has no steps to run');
    assert.deepEqual(lines.map((l) => l.text).slice(0, 2), ['Starting replica 0 of web', 'Running the steps in image node:20 (sha256:2222) with bash']);
  });
});

test("steps see the image's Env under the service's env; HOME stays the workspace directory", async () => {
  const image = { image: 'test/x:1', digest: 'sha256:3333', env: { FROM_IMAGE: 'image', SHARED: 'image', HOME: '/root' } };
  await withAgent({ steps: [{ run: 'echo "$FROM_IMAGE $SHARED $HOME"' }], image, env: { SHARED: 'service' } }, async (agent, lines, dir) => {
    await until(() => agent.status().replica.status === 'finished');
    assert.deepEqual(lines.filter((l) => l.stream === 'stdout').map((l) => l.text), [`image service ${dir}`]);
  });
});

test('stopping the agent ends a step that still runs', async () => {
  await withAgent({ steps: [{ run: 'echo started; sleep 30' }, { run: 'true' }] }, async (agent, lines) => {
    await until(() => lines.some((l) => l.text === 'started'));
    const stopped = performance.now();
    await agent.close();
    assert.ok(performance.now() - stopped < 2500, 'the step ended on SIGTERM');
    assert.equal(agent.status().replica.status, 'starting');
  });
});
