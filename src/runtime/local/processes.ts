// Host processes as the local driver sees them: run a command to its end, tell whether a recorded pod process is
// still the same process (pids are reused), and kill everything in a PID namespace.
import { spawn } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `file` with `args` (and `input` on its standard input) to its end; never throws for a non-zero exit (the caller reads `code`). */
export function runCommand(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env ?? minimalEnv(), stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (options.input !== undefined) child.stdin!.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed; throws its stderr otherwise. */
export async function runChecked(file: string, args: string[]): Promise<string> {
  const result = await runCommand(file, args);
  if (result.code !== 0) throw new Error(`${file} ${args.join(' ')}: ${result.stderr.trim() || `exit code ${result.code}`}`);
  return result.stdout;
}

/**
 * Runs several `ip` commands in one process (`ip -batch -`, inside `netns` when given), which stops at the first
 * that fails and throws its error. One process instead of one each: on a busy machine every process start costs
 * tens of milliseconds, and a wake sets up its networks with a dozen commands.
 */
export async function ipBatch(commands: string[][], netns?: string): Promise<void> {
  if (commands.length === 0) return;
  const args = [...(netns ? ['-n', netns] : []), '-batch', '-'];
  const result = await runCommand('ip', args, { input: commands.map((command) => `${command.join(' ')}\n`).join('') });
  if (result.code !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim() || `exit code ${result.code}`}`);
}

/** What children of the driver get instead of the server's environment (which holds secrets). */
export function minimalEnv(): NodeJS.ProcessEnv {
  return { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };
}

export interface ProcStat {
  state: string;
  /** Clock ticks after boot at which the process started: with the pid, it names one process for good. */
  startTime: string;
}

/** Fields of /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after its last ')'. */
export function parseProcStat(text: string): ProcStat | undefined {
  const end = text.lastIndexOf(')');
  if (end < 0) return undefined;
  const fields = text.slice(end + 2).trim().split(/\s+/);
  // fields[0] is field 3 (state); start time is field 22
  if (fields.length < 20) return undefined;
  return { state: fields[0], startTime: fields[19] };
}

async function procStat(pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseProcStat(text);
}

/** The start time of a live (not zombie) process, or undefined when there is none with that pid. */
export async function processStartTime(pid: number): Promise<string | undefined> {
  const stat = await procStat(pid);
  return stat && stat.state !== 'Z' && stat.state !== 'X' ? stat.startTime : undefined;
}

export async function isSameProcess(pid: number, startTime: string): Promise<boolean> {
  return (await processStartTime(pid)) === startTime;
}

/** The PID namespace of a process, as the link text `pid:[4026532251]`. */
export async function pidNamespaceOf(pid: number): Promise<string | undefined> {
  return readlink(`/proc/${pid}/ns/pid`).catch(() => undefined);
}

/** Live processes in PID namespace `namespace`, seen from the host. */
export async function processesInNamespace(namespace: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const found: number[] = [];
  for (const pid of pids) {
    if ((await pidNamespaceOf(pid)) === namespace && (await processStartTime(pid)) !== undefined) found.push(pid);
  }
  return found;
}

export function killProcess(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

/** Polls `check` until it holds or `timeoutMs` passes; answers whether it held. */
export async function pollUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
