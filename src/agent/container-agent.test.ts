// The replica agent running a container's process as a plain process on this machine (no sandbox, no image): no
// shell between, the exit codes of a command it cannot find or execute, exit 0, and rule 6's note on the image user.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startReplicaAgent, type RunningReplicaAgent } from './replica-agent.ts';
import type { LogStream } from './log-file.ts';
import { defaultReplicaTimings, type ContainerProcess } from './replica-protocol.ts';

type LogLine = { stream: LogStream; text: string };

const fast = { ...defaultReplicaTimings, backoffBaseMs: 20, backoffMaxMs: 40, giveUpWindowMs: 10_000, probeIntervalMs: 50 };

async function withContainer(
  process: Partial<ContainerProcess>,
  check: (agent: RunningReplicaAgent, lines: LogLine[], dir: string) => Promise<void>,
  prepare?: (dir: string) => Promise<void>,
) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-container-agent-'));
  await prepare?.(dir);
  const lines: LogLine[] = [];
  const container: ContainerProcess = { image: 'demo:1', digest: 'sha256:d1', argv: ['true'], env: { PATH: '/usr/bin:/bin' }, workingDir: dir, uid: 3001, imageUser: '', ...process };
  const config = { service: 'box', index: 0, steps: [], container, env: {}, ports: [], needs: [], timings: fast };
  const agent = await startReplicaAgent({ host: '127.0.0.1', port: 0, workspaceDir: '/nonexistent', config, log: (stream, text) => lines.push({ stream, text }) });
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

const system = (lines: LogLine[]) => lines.filter((l) => l.stream === 'system').map((l) => l.text);

test('the argv runs without a shell, in the working directory, with exactly the env given; exit 0 finishes', async () => {
  await withContainer({ argv: ['sh', '-c', 'echo "$GREETING $PWD $HOME" \'$no\''], env: { PATH: '/usr/bin:/bin', GREETING: 'hi' } }, async (agent, lines, dir) => {
    await until(() => agent.status().replica.status === 'finished');
    assert.deepEqual(lines.filter((l) => l.stream === 'stdout').map((l) => l.text), [`hi ${dir}  $no`]);
    assert.deepEqual(system(lines).filter((t) => t !== 'box is ready'), [ // ready or not: it has no ports to probe
      'Starting replica 0 of box',
      `Starting sh -c echo "$GREETING $PWD $HOME" '$no' (image demo:1, sha256:d1)`,
      'The server exited with code 0: the service finished',
    ]);
    assert.equal(agent.status().replica.detail, 'The server exited with code 0: the service finished');
  });
});

test('a command that does not exist exits 127 with its note; a file that is not executable 126 with its note', async () => {
  await withContainer({ argv: ['/no/such/entrypoint'] }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.equal(agent.status().replica.detail, 'Giving up: exited with 127; 5 failures in 10s');
    assert.ok(system(lines).includes('Exit code 127: the command is missing from the image'));
  });
  await withContainer({ argv: ['./plain.txt'] }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.equal(agent.status().replica.detail, 'Giving up: exited with 126; 5 failures in 10s');
    assert.ok(system(lines).includes('Exit code 126: the file is not executable for the workspace user (its UID, group 0)'));
  }, async (dir) => {
    await writeFile(path.join(dir, 'plain.txt'), 'echo never\n');
    await chmod(path.join(dir, 'plain.txt'), 0o644);
  });
});

test('a missing working directory is said as such', async () => {
  await withContainer({ workingDir: '/no/such/dir' }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.ok(system(lines).includes('The working directory /no/such/dir does not exist in the image'));
    assert.equal(agent.status().replica.detail, 'Giving up: exited with 1; 5 failures in 10s');
  });
});

test('a failure after a permission error ends in one note about the user the image expects', async () => {
  const argv = ['sh', '-c', 'echo "mkdir: can\'t create directory \'/var/cache/app\': Permission denied" >&2; exit 1'];
  await withContainer({ argv, imageUser: 'app' }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    const note = 'The image expects to run as user app; here it runs as UID 3001 with group 0 and its files are read-only: what it writes must be ' +
      'in /tmp, /run, /var/tmp or a mount, and writable by group 0 (or a cluster administrator allows the team runAsUser)';
    const texts = system(lines);
    assert.equal(texts.filter((t) => t === note).length, 1);
    assert.equal(texts[texts.indexOf(note) + 1], 'Server exited with code 1; restarting in 20ms');
  });
  await withContainer({ argv: ['sh', '-c', 'exit 1'] }, async (agent, lines) => {
    await until(() => agent.status().replica.status === 'failure');
    assert.ok(!system(lines).some((t) => t.startsWith('The image')), 'no note without a permission error');
  });
});
