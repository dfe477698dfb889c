// One SSH session channel (ssh-server.ts): a shell or a command, on a terminal (`pty-req`, window changes) or with
// pipes (stderr apart), or the sftp subsystem (OpenSSH's sftp-server from the pod's /usr). Like an exec stream
// (exec-session.ts): a login shell in the workspace directory with the pod's environment, the workspace's variables and
// the caller's git identity; the client's `env` requests and a forwarded agent (SSH_AUTH_SOCK) on top.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import type { Connection, ServerChannel, Session } from 'ssh2';
import type { IPty } from 'node-pty';
import { podShell } from './protocol.ts';
import type { ExecContext } from './exec-session.ts';
import { forwardAgent } from './ssh-forwarding.ts';

/** Debian's openssh-sftp-server; pods see the host's /usr. */
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

/** Names a client may set with `env` (SendEnv/SetEnv): the locale and terminal, never the pod's own settings. */
const SETTABLE_ENV = /^(LANG|LC_[A-Z]+|TERM|COLORTERM|TZ|VSCODE_[A-Z0-9_]+|GIT_[A-Z_]+|[A-Z][A-Z0-9_]*_HOST_AGENT)$/;

interface Terminal {
  cols: number;
  rows: number;
  term: string;
}

/** argv of a session: a login shell, or `command` through one (as sshd runs it with the user's shell). */
export function sessionArgv(command: string | undefined, shell = podShell()): string[] {
  return command === undefined ? [shell, '-l'] : [shell, '-lc', command];
}

export function serveSshSession(client: Connection, session: Session, context: ExecContext): void {
  const env: Record<string, string> = { ...context.baseEnv };
  let terminal: Terminal | undefined;
  let running: { signal(name: NodeJS.Signals): void; resize(cols: number, rows: number): void } | undefined;
  const closers: Array<() => void> = [];

  session.on('pty', (accept, _reject, info) => {
    terminal = { cols: info.cols || 80, rows: info.rows || 24, term: info.term || 'xterm-256color' };
    accept?.();
  });
  session.on('window-change', (accept, _reject, info) => {
    if (terminal) terminal = { ...terminal, cols: info.cols, rows: info.rows };
    running?.resize(info.cols, info.rows);
    accept?.();
  });
  session.on('env', (accept, reject, info) => {
    if (!SETTABLE_ENV.test(info.key)) return reject?.();
    env[info.key] = info.val;
    accept?.();
  });
  session.on('signal', (accept, _reject, info) => {
    running?.signal(`SIG${info.name}` as NodeJS.Signals);
    accept?.();
  });
  // the agent's socket is made before the shell or command that asked for it starts (OpenSSH asks first)
  let agentReady: Promise<void> = Promise.resolve();
  session.on('auth-agent', (accept, reject) => {
    agentReady = forwardAgent(client).then(
      (agent) => {
        env.SSH_AUTH_SOCK = agent.socket;
        closers.push(agent.close);
        accept?.();
      },
      () => reject?.(),
    );
  });
  const start = (channel: ServerChannel, argv: string[]) => {
    channel.on('close', () => closers.forEach((close) => close()));
    void agentReady.then(() => run(channel, argv));
  };
  const run = (channel: ServerChannel, argv: string[]) => {
    if (terminal) void runOnTerminal(channel, argv, { ...context, baseEnv: { ...env, TERM: terminal.term } }, terminal).then((r) => (running = r));
    else running = runWithPipes(channel, argv, { ...context, baseEnv: env });
  };
  session.on('shell', (accept) => start(accept(), sessionArgv(undefined)));
  session.on('exec', (accept, _reject, info) => start(accept(), sessionArgv(info.command)));
  session.on('subsystem', (accept, reject, info) => {
    if (info.name !== 'sftp' || !existsSync(SFTP_SERVER)) return reject();
    terminal = undefined;
    start(accept(), [SFTP_SERVER]);
  });
}

function finish(channel: ServerChannel, code: number | null, signal: NodeJS.Signals | null): void {
  if (signal && code === null) channel.exit(signal.replace(/^SIG/, ''), false, '');
  else channel.exit(code ?? 0);
  channel.end();
}

function runWithPipes(channel: ServerChannel, argv: string[], context: ExecContext) {
  const [file, ...args] = argv;
  // its own process group: a closed channel or a signal reaches what the command started too
  const child = spawn(file, args, { cwd: context.workspaceDir, env: context.baseEnv, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let ended = false;
  child.once('error', (error) => {
    channel.stderr.write(`svc: ${file} could not start: ${error.message}\n`);
  });
  child.stdout!.pipe(channel, { end: false });
  child.stderr!.pipe(channel.stderr, { end: false });
  channel.pipe(child.stdin!);
  child.stdin!.on('error', () => undefined);
  child.once('close', (code, signal) => {
    ended = true;
    finish(channel, code === null && !signal ? 127 : code, signal);
  });
  channel.on('close', () => {
    if (!ended) signalGroup(child, 'SIGHUP');
  });
  return {
    signal: (name: NodeJS.Signals) => signalGroup(child, name),
    resize: () => undefined,
  };
}

async function runOnTerminal(channel: ServerChannel, argv: string[], context: ExecContext, size: Terminal) {
  const early: Buffer[] = [];
  const keep = (chunk: Buffer) => void early.push(chunk);
  channel.on('data', keep);
  let pty: typeof import('node-pty');
  try {
    const loaded = (await import('node-pty')) as typeof import('node-pty') & { default?: typeof import('node-pty') };
    pty = loaded.default ?? loaded;
  } catch (error) {
    channel.stderr.write(`svc: the pod has no terminal: ${(error as Error).message}\r\n`);
    finish(channel, 1, null);
    return undefined;
  }
  const [file, ...args] = argv;
  let terminal: IPty;
  try {
    terminal = pty.spawn(file, args, { name: size.term, cols: size.cols, rows: size.rows, cwd: context.workspaceDir, env: context.baseEnv });
  } catch (error) {
    channel.stderr.write(`svc: the terminal could not start: ${(error as Error).message}\r\n`);
    finish(channel, 1, null);
    return undefined;
  }
  let ended = false;
  terminal.onData((data) => {
    if (!channel.write(data)) {
      terminal.pause();
      channel.once('drain', () => terminal.resume());
    }
  });
  terminal.onExit(({ exitCode, signal }) => {
    ended = true;
    const name = signal ? (Object.entries(constants.signals).find(([, n]) => n === signal)?.[0] as NodeJS.Signals | undefined) : undefined;
    finish(channel, name ? null : exitCode, name ?? null);
  });
  channel.off('data', keep);
  for (const chunk of early) terminal.write(chunk);
  channel.on('data', (chunk: Buffer) => terminal.write(chunk));
  channel.on('close', () => {
    if (!ended) terminal.kill('SIGHUP');
  });
  return {
    signal: (name: NodeJS.Signals) => terminal.kill(name),
    resize: (cols: number, rows: number) => terminal.resize(Math.max(1, cols), Math.max(1, rows)),
  };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // gone already
  }
}

