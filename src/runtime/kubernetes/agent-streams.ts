// Shells, forwarded ports and stage steps on the Kubernetes driver: a WebSocket to the agent of the pod at its Pod
// IP with the workspace's token, as the local driver does on its host (no `pods/exec`: the server's role has no exec
// right). A stage step is a command over the editor agent's exec stream whose output the server keeps as a log
// under <data dir>/kubernetes/steps/<workspace>/<key>/ (log-file.ts), read back by stageStepLogs.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { EXEC_PROTOCOL, ExecChannel, parseFrame, readExecStatus } from '../../core/channel-protocol.ts';
import { createLogWriter, lineSplitter } from '../../agent/log-file.ts';
import { execRequestTarget } from '../../agent/stream-protocol.ts';
import { connectAgent, type AgentEndpoint } from '../agent-connection.ts';
import type { LogRead, StageStepRun } from '../driver.ts';
import { readLogLines, selectLogLines } from '../local/log-read.ts';

const STEP_KEY = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$/;

export const stageStepDir = (dataDir: string, workspaceId: number, key: string) => path.join(dataDir, 'kubernetes', 'steps', String(workspaceId), key);

/** Runs `bash -lc <run>` through the editor agent's exec stream; its output becomes the step's log. */
export async function runStageStepOverExec(
  endpoint: AgentEndpoint,
  dir: string,
  step: { run: string; env: Record<string, string> },
): Promise<StageStepRun> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { path: requestPath, headers } = execRequestTarget({ command: ['bash', '-lc', step.run], tty: false, stdin: false, env: step.env });
  const socket = await connectAgent(endpoint, requestPath, headers, EXEC_PROTOCOL);
  const log = createLogWriter(dir);
  const splitters = {
    [ExecChannel.stdout]: lineSplitter((line) => log.write('stdout', line)),
    [ExecChannel.stderr]: lineSplitter((line) => log.write('stderr', line)),
  } as Record<number, ReturnType<typeof lineSplitter>>;
  let exitCode: number | null = null;
  const exited = new Promise<{ exitCode: number | null }>((resolve) => {
    socket.on('message', (message: Buffer) => {
      const frame = parseFrame(message);
      if (!frame) return;
      if (frame.channel === ExecChannel.status) {
        const status = readExecStatus(frame.data);
        if ('exitCode' in status) exitCode = status.exitCode;
        else log.write('system', status.error);
        return;
      }
      splitters[frame.channel]?.push(frame.data.toString('utf8'));
    });
    socket.on('close', () => {
      for (const splitter of Object.values(splitters)) splitter.flush();
      log.close();
      resolve({ exitCode });
    });
  });
  socket.resume();
  return {
    exited,
    abort: async () => {
      exitCode = null;
      socket.close();
      await exited;
    },
  };
}

export function checkStepKey(key: string): void {
  if (!STEP_KEY.test(key)) throw new Error(`"${key}" is not a stage step key`);
}

export async function readStageStepLog(dir: string, options?: { since?: number; limit?: number }): Promise<LogRead> {
  return selectLogLines(await readLogLines(dir), options);
}

/** Runs argv through the agent's exec stream and answers its exit code and output (at most `limitBytes` kept). */
export async function execCollect(endpoint: AgentEndpoint, command: string[], limitBytes: number): Promise<{ exitCode: number | null; stdout: Buffer; stderr: string }> {
  const { path: requestPath, headers } = execRequestTarget({ command, tty: false, stdin: false, env: {} });
  const socket = await connectAgent(endpoint, requestPath, headers, EXEC_PROTOCOL);
  const stdout: Buffer[] = [];
  let kept = 0;
  let stderr = '';
  let exitCode: number | null = null;
  return new Promise((resolve) => {
    socket.on('message', (message: Buffer) => {
      const frame = parseFrame(message);
      if (!frame) return;
      if (frame.channel === ExecChannel.stdout && kept <= limitBytes) {
        stdout.push(frame.data);
        kept += frame.data.length;
      } else if (frame.channel === ExecChannel.stderr && stderr.length < 4096) {
        stderr += frame.data.toString('utf8');
      } else if (frame.channel === ExecChannel.status) {
        const status = readExecStatus(frame.data);
        if ('exitCode' in status) exitCode = status.exitCode;
        else stderr += status.error;
      }
    });
    socket.on('close', () => resolve({ exitCode, stdout: Buffer.concat(stdout), stderr }));
    socket.resume();
  });
}
