// The agent in replica mode: the main process of a `steps` or `container` service replica's pod. It waits for the
// needed services, runs the steps before the last once, supervises the last (the server; for a container, the image's
// process, started without a shell) as service-run.ts decides, probes the health check, writes the replica's log
// (log-file.ts, through `log`) and answers `GET /status`.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { constants } from 'node:os';
import { lineSplitter, type LogStream } from './log-file.ts';
import { waitForNeeds } from './needs.ts';
import { httpHealthy, portAnswers } from './probes.ts';
import { AGENT_STATUS_PATH, AGENT_VERSION, agentEnv, podShell } from './protocol.ts';
import { oomKillsOf, parseReplicaStatus, type ContainerProcess, type NeedAddress, type ReplicaAgentStatus, type ReplicaConfig } from './replica-protocol.ts';
import { serviceLogTexts } from './service-log-texts.ts';
import { serveStatus } from './status-server.ts';
import { commandEnv } from './command-env.ts';
import {
  exitCodeOf, initialRun, nothingToRun, replicaStatusOf, serverExited, serverStarted, stepExited, stepsStarted, type ServerPolicy, type ServiceRun,
} from './service-run.ts';

export interface ReplicaAgentOptions {
  host: string;
  port: number;
  workspaceDir: string;
  config: ReplicaConfig;
  nowMs?: () => number;
  /** Where the replica's log lines go (the log file in a pod). */
  log: (stream: LogStream, text: string) => void;
}

export interface RunningReplicaAgent {
  port: number;
  status(): ReplicaAgentStatus;
  close(): Promise<void>;
}

export async function startReplicaAgent(options: ReplicaAgentOptions): Promise<RunningReplicaAgent> {
  const replica = new ReplicaRunner(options);
  // a shell in the replica sees what its steps see
  const baseEnv = commandEnv(stepEnvironment(options.config, options.workspaceDir), {}, false);
  const streams = { token: options.config.agentToken, workspaceDir: options.workspaceDir, baseEnv };
  const server = await serveStatus(options.host, options.port, () => replica.status(), streams);
  void replica.run().catch((error: Error) => replica.crashed(error));
  return {
    port: server.port,
    status: () => replica.status(),
    close: async () => {
      await replica.stop();
      await server.close();
    },
  };
}

class ReplicaRunner {
  private run_: ServiceRun = initialRun;
  private ready = false;
  /** When the replica was last seen not ready after being ready or started (performance.now()). */
  private notReadySince: number | undefined;
  private server: ChildProcess | undefined;
  /** The step before the last that runs now. */
  private step: ChildProcess | undefined;
  private stopping = false;
  /** The server's current run printed a permission error (rule 6's note); the note is written once per replica. */
  private permissionTrouble = false;
  private userNoted = false;
  /** The pod's cgroup's count of processes killed for memory, as last seen. */
  private memoryKillsSeen = 0;
  private timers = new Set<NodeJS.Timeout>();
  private readonly config: ReplicaConfig;
  private readonly nowMs: () => number;
  private readonly policy: ServerPolicy;

  constructor(private readonly options: ReplicaAgentOptions) {
    this.config = options.config;
    this.nowMs = options.nowMs ?? Date.now;
    const t = this.config.timings;
    this.policy = { baseMs: t.backoffBaseMs, maxMs: t.backoffMaxMs, giveUpFailures: t.giveUpFailures, giveUpWindowMs: t.giveUpWindowMs };
  }

  status(): ReplicaAgentStatus {
    const report = {
      // without a port or health check it is ready as soon as it runs: a restarted one settles first
      status: replicaStatusOf(this.run_, this.ready, !this.config.health && this.config.ports.length === 0 ? { now: this.nowMs() } : undefined),
      detail: this.run_.detail,
      ready: this.ready,
      restarts: this.run_.restarts,
      serverPid: this.server?.pid,
    };
    return { agentVersion: AGENT_VERSION, pid: process.pid, replica: report };
  }

  log(stream: LogStream, text: string): void {
    this.options.log(stream, text);
  }

  /** The agent itself failed while running the replica (it cannot write its log, say): the replica is failed. */
  crashed(error: Error): void {
    const detail = `The agent failed: ${error.message}`;
    this.run_ = { ...this.run_, phase: 'failure', detail };
    try {
      this.log('system', detail);
    } catch {
      process.stderr.write(`${detail}\n`); // the pod's own output, which the driver reads when the log fails
    }
  }

  async run(): Promise<void> {
    const { config } = this;
    this.log('system', `Starting replica ${config.index} of ${config.service}`);
    this.memoryKillsSeen = this.memoryKills();
    if (config.container) process.umask(0o002); // what steps get from their shell: files the group (0) may write too
    if (config.image && !config.container) this.log('system', serviceLogTexts.stepsImage(config.image.image, config.image.digest, podShell()));
    await waitForNeeds(config.needs, config.timings.needsTimeoutMs, config.timings.probeIntervalMs, {
      nowMs: this.nowMs,
      sleep: (ms) => this.sleep(ms),
      answers: needAnswers,
      isFailing: needIsFailing,
      log: (text) => this.log('system', text),
      cancelled: () => this.stopping,
    });
    this.run_ = stepsStarted(this.run_);
    if (config.container) {
      this.startServer();
      this.probeLoop();
      return;
    }
    const steps = config.steps;
    if (steps.length === 0) {
      this.apply(nothingToRun(this.run_));
      return;
    }
    for (let i = 0; i < steps.length - 1 && !this.stopping; i++) {
      this.log('system', serviceLogTexts.stepStarting(i + 1, steps.length, steps[i].name));
      const started = this.spawnLogged(steps[i].run);
      this.step = started.child;
      const { code } = await started.exited;
      this.step = undefined;
      if (this.stopping) return;
      for (const note of this.memoryNote(code)) this.log('system', note);
      this.apply(stepExited(this.run_, code));
      if (this.run_.phase === 'failure') return;
    }
    this.startServer();
    this.probeLoop();
  }

  private startServer(): void {
    if (this.stopping) return;
    const container = this.config.container;
    const step = this.config.steps.at(-1)!;
    if (this.run_.restarts === 0) {
      this.log('system', container ? serviceLogTexts.containerStarting(container.argv, container.image, container.digest) : serviceLogTexts.serverStarting(step.name));
    }
    this.permissionTrouble = false;
    const started = container ? this.spawnContainer(container) : this.spawnLogged(step.run);
    this.server = started.child;
    this.run_ = serverStarted(this.run_, this.nowMs());
    void started.exited.then(({ code }) => {
      if (this.server !== started.child) return;
      this.server = undefined;
      this.ready = false;
      if (this.stopping) return;
      const decision = serverExited(this.run_, code, this.nowMs(), this.policy, [...this.memoryNote(code), ...this.userNote(code)]);
      this.apply(decision);
      if (decision.restartInMs !== undefined) this.later(decision.restartInMs, () => this.startServer());
    });
  }

  /**
   * Rule 6: a container that failed after saying it may not write or do something gets, once, a note about the user
   * its image expects and the one it runs as.
   */
  /** A process ended by SIGKILL (137) while the cgroup's out-of-memory kills grew was killed for memory. */
  private memoryNote(code: number): string[] {
    const memory = this.config.memory;
    if (!memory || code !== 137) return [];
    const kills = this.memoryKills();
    if (kills <= this.memoryKillsSeen) return [];
    this.memoryKillsSeen = kills;
    return [serviceLogTexts.memoryKilled(memory.plan, memory.limitMiB)];
  }

  private memoryKills(): number {
    const file = this.config.memory?.eventsFile;
    if (!file) return 0;
    try {
      return oomKillsOf(readFileSync(file, 'utf8'));
    } catch {
      return 0;
    }
  }

  private userNote(code: number): string[] {
    const container = this.config.container;
    if (!container || code === 0 || !this.permissionTrouble || this.userNoted) return [];
    this.userNoted = true;
    return [serviceLogTexts.imageUser(container.imageUser, container.uid)];
  }

  private apply(decision: { next: ServiceRun; lines: string[] }): void {
    this.run_ = decision.next;
    for (const line of decision.lines) this.log('system', line);
  }

  /** Readiness, probed while the service runs: health check, else the first port, else the server being alive. */
  private probeLoop(): void {
    if (this.stopping || this.run_.phase === 'finished' || this.run_.phase === 'failure') return;
    void this.probeOnce().then((ready) => {
      if (!this.server) ready = false;
      if (ready && !this.ready) this.log('system', `${this.config.service} is ready`);
      if (!ready && this.notReadySince === undefined) this.notReadySince = performance.now();
      if (ready) this.notReadySince = undefined;
      this.ready = ready;
      this.later(this.nextProbeMs(), () => this.probeLoop());
    });
  }

  /**
   * A replica that is not ready yet is probed often for its first seconds (a woken service's first request waits
   * for its readiness; a refused connection on the pod's loopback costs next to nothing), then at the set interval.
   */
  private nextProbeMs(): number {
    const { probeIntervalMs } = this.config.timings;
    if (this.ready) return probeIntervalMs * 4;
    const starting = this.notReadySince !== undefined && performance.now() - this.notReadySince < FAST_PROBING_MS;
    return starting ? Math.min(FAST_PROBE_MS, probeIntervalMs) : probeIntervalMs;
  }

  private async probeOnce(): Promise<boolean> {
    if (!this.server) return false;
    const { health, ports } = this.config;
    if (health) return httpHealthy('127.0.0.1', health.port, health.path ?? '/', health.mode ?? 'any-http');
    if (ports.length > 0) return portAnswers('127.0.0.1', ports[0]);
    return true;
  }

  private spawnLogged(command: string): Required<Spawned> {
    return this.spawnProcess(podShell(), ['-lc', command], this.options.workspaceDir, stepEnvironment(this.config, this.options.workspaceDir));
  }

  /** The image's process, without a shell; a missing working directory is said as such, not as a missing command. */
  private spawnContainer(container: ContainerProcess): Spawned {
    if (!isDirectory(container.workingDir)) {
      this.log('system', serviceLogTexts.workingDirMissing(container.workingDir));
      return { exited: Promise.resolve({ code: 1 }) };
    }
    const [file, ...args] = container.argv;
    return this.spawnProcess(file, args, container.workingDir, container.env);
  }

  private spawnProcess(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Required<Spawned> {
    const child = spawn(file, args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, so a stop reaches its children too
    });
    const flushers = (['stdout', 'stderr'] as const).map((stream) => this.pipeLines(child, stream));
    const exited = new Promise<{ code: number }>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        this.log('system', `could not start: ${error.message}`);
        // as a shell answers: 126 for a file it may not execute, 127 for one it cannot find
        resolve({ code: error.code === 'EACCES' ? 126 : 127 });
      });
      child.once('exit', (code, signal) => {
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          flushers.forEach((flush) => flush());
          resolve({ code: exitCodeOf(code, signal ? constants.signals[signal] : undefined) });
        };
        child.once('close', finish);
        setTimeout(finish, 500).unref(); // a descendant holding the pipe must not stall the run
      });
    });
    return { child, exited };
  }

  /** Hands the stream's lines to the log; answers a function that writes what is left without a newline. */
  private pipeLines(child: ChildProcess, stream: 'stdout' | 'stderr'): () => void {
    const lines = lineSplitter((line) => {
      if (PERMISSION_TROUBLE.test(line)) this.permissionTrouble = true;
      this.log(stream, line);
    });
    child[stream]!.setEncoding('utf8');
    child[stream]!.on('data', (chunk: string) => lines.push(chunk));
    return () => lines.flush();
  }

  private later(ms: number, work: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      work();
    }, ms);
    this.timers.add(timer);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(ms, resolve));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.timers.forEach((timer) => clearTimeout(timer));
    await Promise.all([this.step, this.server].map((child) => (child ? endProcessGroup(child) : undefined)));
  }
}

/** A started process (none when it could not even be spawned) and its exit code. */
type Spawned = { child?: ChildProcess; exited: Promise<{ code: number }> };

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** What processes print when the user they run as may not write or do something. */
/** How often, and for how long, a replica that is not ready yet is probed before the set interval applies. */
const FAST_PROBE_MS = 20;
const FAST_PROBING_MS = 10_000;

const PERMISSION_TROUBLE = /permission denied|operation not permitted|read-only file system|\bEACCES\b|\bEPERM\b|\bEROFS\b/i;

/**
 * Steps see the service's env (and PORT, the first port, unless the env sets it) over their image's `Env` (HOME stays
 * the workspace user's, /data/home, or the workspace directory in a pod that names none), not the agent's settings.
 */
export function stepEnvironment(config: ReplicaConfig, workspaceDir: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const system = { PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: env.LANG ?? 'C.UTF-8' };
  const home = env[agentEnv.userHome];
  const user = home ? Object.fromEntries((['USER', 'LOGNAME', 'SHELL'] as const).flatMap((name) => (env[name] ? [[name, env[name]]] : []))) : {};
  const base = { ...system, ...config.image?.env, ...user, HOME: home || workspaceDir };
  const port = config.ports.length > 0 ? { PORT: String(config.ports[0]) } : {};
  return { ...base, ...port, ...config.env };
}

function needAnswers(need: NeedAddress): Promise<boolean> {
  if (need.healthPath !== undefined) return httpHealthy(need.host, need.port, need.healthPath, need.healthMode ?? 'any-http');
  return portAnswers(need.host, need.port);
}

function needIsFailing(need: NeedAddress): Promise<boolean> {
  if (need.agentPort === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const request = http.get({ host: need.host, port: need.agentPort, path: AGENT_STATUS_PATH, agent: false, timeout: 1500 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          resolve(parseReplicaStatus(JSON.parse(body))?.replica.status === 'failure');
        } catch {
          resolve(false);
        }
      });
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** SIGTERM to the child's process group, SIGKILL after 3 s; resolves once the child exited. */
async function endProcessGroup(child: ChildProcess): Promise<void> {
  if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  killGroup(child.pid, 'SIGTERM');
  const forced = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), 3000);
  await exited;
  clearTimeout(forced);
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
