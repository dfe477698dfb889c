// Runs the editor command with `bash -lc` (the pod's shell, protocol.ts), probes it over HTTP until it answers, and restarts it with backoff
// when it exits. The decisions live in supervision.ts; this file only starts, probes and kills processes.
import { MANAGED_ENV_FILE } from './managed-env-file.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { wallClockMs } from '../core/phases.ts';
import { readFileSync } from 'node:fs';
import { podShell, type EditorReport, type PodMemory } from './protocol.ts';
import { oomKillsOf } from './replica-protocol.ts';
import { serviceLogTexts } from './service-log-texts.ts';
import { editorAnswered, editorExited, exitReason, initialSupervision, type Supervision, type SupervisionPolicy } from './supervision.ts';

export interface EditorSupervisorOptions {
  command: string;
  workspaceDir: string;
  host: string;
  port: number;
  policy: SupervisionPolicy;
  nowMs: () => number;
  log: (line: string) => void;
  probeIntervalMs?: number;
  /** The pod's memory limit and where it sees its cgroup's memory events (no memory notes without). */
  memory?: PodMemory;
  /** Added to the editor's environment (the editor's git credentials, editor-git-paths.ts). */
  env?: Record<string, string>;
}

/**
 * Readiness is probed often while an editor starts (a refused connection on the pod's own loopback costs next to
 * nothing, and each interval is time a wake waits for nothing), less often once it has taken a while.
 */
const FAST_PROBE_MS = 15;
const SLOW_PROBE_MS = 200;
const FAST_PROBING_MS = 10_000;

const TAIL_BYTES = 4096;

export class EditorSupervisor {
  private supervision: Supervision = initialSupervision;
  private child: ChildProcess | undefined;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  private probeAgain = false;
  private startedAt: number | undefined;
  private answeredAt: number | undefined;
  /** The cgroup's out-of-memory kills already accounted for (the agent's own pod: 0 at its start). */
  private memoryKillsSeen: number;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: EditorSupervisorOptions) {
    this.memoryKillsSeen = this.memoryKills();
    this.start();
  }

  /** Calls `listener` whenever the report changes (the editor answered, exited, was restarted); answers the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  report(): EditorReport {
    const { phase, reason, restarts } = this.supervision;
    return { state: phase, reason, restarts, pid: this.child?.pid, port: this.options.port, startedAt: this.startedAt, answeredAt: this.answeredAt };
  }

  /** Ends the editor and everything it started (its process group); no restart follows. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.probeTimer);
    const running = this.child;
    if (!running?.pid || running.exitCode !== null || running.signalCode !== null) return;
    const closed = new Promise((resolve) => running.once('exit', resolve));
    killGroup(running.pid, 'SIGTERM');
    const forced = setTimeout(() => killGroup(running.pid!, 'SIGKILL'), 3000);
    await closed;
    clearTimeout(forced);
  }

  private start(): void {
    const { command, workspaceDir, host, port, log } = this.options;
    const child = spawn(podShell(), ['-lc', command], {
      cwd: workspaceDir,
      // ENV: the editor's terminals (an interactive sh) read the managed services' values the server keeps there
      env: { ...process.env, ...this.options.env, PORT: String(port), HOST: host, SVC_WORKSPACE_DIR: workspaceDir, ENV: MANAGED_ENV_FILE },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so stopping reaches the editor's children too
    });
    this.child = child;
    this.startedAt = wallClockMs();
    this.answeredAt = undefined;
    log(`editor started (pid ${child.pid})`);
    let tail = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      log(`editor: ${chunk.toString().trimEnd()}`);
      this.outputSeen(child);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      log(`editor: ${chunk.toString().trimEnd()}`);
      this.outputSeen(child);
      tail = (tail + chunk.toString()).slice(-TAIL_BYTES);
    });
    child.on('error', (error) => log(`editor could not start: ${error.message}`));
    child.once('exit', (code, signal) => {
      // its last words may still be in the pipe; a descendant that keeps the pipe open must not stall the restart
      let done = false;
      const finish = () => (done ? undefined : ((done = true), this.exited(child, this.memoryNote(code, signal) ?? exitReason(tail, code, signal))));
      child.once('close', finish);
      setTimeout(finish, 500).unref();
    });
    this.probe(child);
  }

  private exited(child: ChildProcess, reason: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    clearTimeout(this.probeTimer);
    if (this.stopping) return;
    const { next, restartInMs } = editorExited(this.supervision, reason, this.options.nowMs(), this.options.policy);
    this.supervision = next;
    this.options.log(`editor exited (${reason}); restart ${next.restarts} in ${restartInMs} ms`);
    this.changed();
    this.restartTimer = setTimeout(() => this.start(), restartInMs);
  }

  /**
   * An editor ended by SIGKILL (or a shell's 137) while the pod cgroup's out-of-memory kills grew was killed for
   * memory: the log says so, as a service's does (spec 3.2), and it is the reason shown when the editor keeps failing.
   */
  private memoryNote(code: number | null, signal: NodeJS.Signals | null): string | undefined {
    const memory = this.options.memory;
    if (!memory || (signal !== 'SIGKILL' && code !== 137)) return undefined;
    const kills = this.memoryKills();
    if (kills <= this.memoryKillsSeen) return undefined;
    this.memoryKillsSeen = kills;
    const note = serviceLogTexts.memoryKilled(memory.plan, memory.limitMiB);
    this.options.log(note);
    return note;
  }

  private memoryKills(): number {
    const file = this.options.memory?.eventsFile;
    if (!file) return 0;
    try {
      return oomKillsOf(readFileSync(file, 'utf8'));
    } catch {
      return 0;
    }
  }

  /**
   * Readiness: the editor answers HTTP (any status). Probed until it does, while this run of it lasts: at once
   * when it prints a line (code-server and the built-in editor say when they listen), else at the interval.
   */
  private probe(child: ChildProcess, delayMs?: number): void {
    const early = wallClockMs() - (this.startedAt ?? 0) < FAST_PROBING_MS;
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => this.probeOnce(child), delayMs ?? this.options.probeIntervalMs ?? (early ? FAST_PROBE_MS : SLOW_PROBE_MS));
  }

  private probeOnce(child: ChildProcess): void {
    const probeHost = this.options.host === '0.0.0.0' ? '127.0.0.1' : this.options.host;
    this.probing = true;
    this.probeAgain = false;
    void answersHttp(probeHost, this.options.port).then((answered) => {
      this.probing = false;
      if (this.stopping || this.child !== child) return;
      if (!answered) return this.probe(child, this.probeAgain ? 0 : undefined);
      this.supervision = editorAnswered(this.supervision, this.options.nowMs());
      this.answeredAt = wallClockMs();
      this.options.log(`editor answers on port ${this.options.port}`);
      this.changed();
    });
  }

  /** The editor printed something while it starts: probe now (or right after the probe under way). */
  private outputSeen(child: ChildProcess): void {
    if (this.stopping || this.child !== child || this.answeredAt !== undefined) return;
    if (this.probing) this.probeAgain = true;
    else this.probe(child, 0);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function answersHttp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path: '/', agent: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(true);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}
