// A shell or a command in the pod for one exec stream (stream-protocol.ts): in the workspace directory, as the pod's
// user, with the pod's environment and the variables the server sent. With a terminal it runs on a pseudo-terminal
// of node-pty's, resized by the client; without one, stdout and stderr go on channels of their own. The exit code
// goes back as the Kubernetes status on channel 3, then the stream closes. A stream that closes first ends it.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { WebSocket } from 'ws';
import { ExecChannel, exitStatus, failureStatus, frame, parseFrame, readResize, sendPaced, type ExecStatus } from '../core/channel-protocol.ts';
import path from 'node:path';
import { podShell } from './protocol.ts';
import { openGitSockets } from './git-sockets.ts';
import { exitCodeOf } from './service-run.ts';
import type { AgentExecRequest } from './stream-protocol.ts';

export interface ExecContext {
  workspaceDir: string;
  /** The pod's own environment for commands (the agent's settings left out). */
  baseEnv: Record<string, string>;
}

/** How long a command may take to end after a SIGHUP before it is killed. */
const KILL_AFTER_MS = 5000;

/** argv through a login shell, so that the PATH and settings of profile files hold as in stage steps. */
export function execArgv(command: string[], shell = podShell()): string[] {
  return command.length === 0 ? [shell, '-l'] : [shell, '-lc', 'exec "$@"', path.posix.basename(shell), ...command];
}

export function runExec(socket: WebSocket, request: AgentExecRequest, context: ExecContext): void {
  if (!request.git) return startExec(socket, request, context, {});
  // the keyboard person's git sockets, for as long as the stream lasts (frames that come meanwhile wait in `early`)
  socket.pause();
  openGitSockets(request.git).then(
    (sockets) => {
      socket.once('close', () => void sockets.close());
      if (socket.readyState !== socket.OPEN) return void sockets.close();
      socket.resume();
      startExec(socket, request, context, sockets.env);
    },
    (error: Error) => {
      socket.resume();
      startExec(socket, request, context, {}, `the session's git credentials could not be served: ${error.message}`);
    },
  );
}

function startExec(socket: WebSocket, request: AgentExecRequest, context: ExecContext, gitEnv: Record<string, string>, failure?: string): void {
  const env = { ...context.baseEnv, ...request.env, ...gitEnv, ...(request.tty ? { TERM: 'xterm-256color' } : {}) };
  const finish = (status: ExecStatus) => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(frame(ExecChannel.status, JSON.stringify(status)));
    socket.close(1000);
  };
  if (failure) return finish(failureStatus(failure));
  if (request.tty) void runOnTerminal(socket, request, { ...context, baseEnv: env }, finish);
  else runWithPipes(socket, request, { ...context, baseEnv: env }, finish);
}

async function runOnTerminal(socket: WebSocket, request: AgentExecRequest, context: ExecContext, finish: (status: ExecStatus) => void): Promise<void> {
  // what the client sends while node-pty loads waits for the terminal
  const early: Buffer[] = [];
  const keep = (message: Buffer) => void early.push(message);
  socket.on('message', keep);
  let pty: typeof import('node-pty');
  try {
    const loaded = (await import('node-pty')) as typeof import('node-pty') & { default?: typeof import('node-pty') };
    pty = loaded.default ?? loaded;
  } catch (error) {
    return finish(failureStatus(`the pod has no terminal: node-pty could not be loaded (${(error as Error).message})`));
  }
  if (socket.readyState !== socket.OPEN) return;
  const [file, ...args] = execArgv(request.command);
  const size = request.size ?? { cols: 80, rows: 24 };
  let terminal: import('node-pty').IPty;
  try {
    terminal = pty.spawn(file, args, { name: 'xterm-256color', cols: size.cols, rows: size.rows, cwd: context.workspaceDir, env: context.baseEnv });
  } catch (error) {
    return finish(failureStatus(`the terminal could not start: ${(error as Error).message}`));
  }
  let exited = false;
  terminal.onData((data) => sendPaced(socket, frame(ExecChannel.stdout, data), terminal));
  terminal.onExit(({ exitCode, signal }) => {
    exited = true;
    finish(exitStatus(signal ? exitCodeOf(null, signal) : exitCode));
  });
  const take = (message: Buffer) => {
    const parsed = parseFrame(message);
    if (!parsed || exited) return;
    if (parsed.channel === ExecChannel.stdin) terminal.write(Buffer.from(parsed.data));
    else if (parsed.channel === ExecChannel.resize) {
      const next = readResize(parsed.data);
      if (next) terminal.resize(next.cols, next.rows);
    }
  };
  socket.off('message', keep);
  early.forEach(take);
  socket.on('message', take);
  socket.on('close', () => {
    if (!exited) hangUp(() => terminal.kill('SIGHUP'), () => terminal.kill('SIGKILL'), () => exited);
  });
}

function runWithPipes(socket: WebSocket, request: AgentExecRequest, context: ExecContext, finish: (status: ExecStatus) => void): void {
  const [file, ...args] = execArgv(request.command.length ? request.command : [podShell()]);
  // its own process group, so that closing the stream ends what the command started too
  const child = spawn(file, args, { cwd: context.workspaceDir, env: context.baseEnv, detached: true, stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let closed = false;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  child.stdout!.on('data', (chunk: Buffer) => sendPaced(socket, frame(ExecChannel.stdout, chunk), child.stdout!));
  child.stderr!.on('data', (chunk: Buffer) => sendPaced(socket, frame(ExecChannel.stderr, chunk), child.stderr!));
  child.stdin?.on('error', () => undefined); // a command that does not read its stdin
  child.once('close', (code, signal) => {
    closed = true;
    if (spawnError) return finish(failureStatus(`the command could not start: ${spawnError.message}`));
    finish(exitStatus(exitCodeOf(code, signal ? constants.signals[signal] : undefined)));
  });
  socket.on('message', (message: Buffer) => {
    const parsed = parseFrame(message);
    if (!parsed || !child.stdin || child.stdin.writableEnded) return;
    if (parsed.channel === ExecChannel.stdin) child.stdin.write(parsed.data);
    else if (parsed.channel === ExecChannel.close && parsed.data[0] === ExecChannel.stdin) child.stdin.end();
  });
  socket.on('close', () => {
    if (!closed) hangUp(() => signalGroup(child, 'SIGHUP'), () => signalGroup(child, 'SIGKILL'), () => closed);
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // gone already
  }
}

/** SIGHUP as a closed terminal sends it, then SIGKILL for what ignores it. */
function hangUp(hup: () => void, kill: () => void, ended: () => boolean): void {
  try {
    hup();
  } catch {
    return;
  }
  setTimeout(() => {
    if (!ended()) {
      try {
        kill();
      } catch {
        // gone already
      }
    }
  }, KILL_AFTER_MS).unref();
}
