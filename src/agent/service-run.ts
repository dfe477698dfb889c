// A `steps` service replica's run as the agent sees it, as a pure state machine (spec 3.2): wait for needs, run the
// steps before the last once, then supervise the last (the server) with backoff and the give-up rule. The agent
// carries out what this decides; the clock is passed in.
import { restartDelayMs, type BackoffPolicy } from './backoff.ts';
import type { ReplicaStatusValue } from './replica-protocol.ts';
import { serviceLogTexts } from './service-log-texts.ts';

export interface ServerPolicy extends BackoffPolicy {
  /** Failures of the server within `giveUpWindowMs` that make the service failed. */
  giveUpFailures: number;
  giveUpWindowMs: number;
}

/** Spec 3.2 and 8: restart after 1 s doubling up to 1 min; 5 failures within 2 min make the service Failed. */
export const serverPolicy: ServerPolicy = { baseMs: 1000, maxMs: 60_000, giveUpFailures: 5, giveUpWindowMs: 120_000 };

export type RunPhase = 'needs' | 'steps' | 'server' | 'restarting' | 'finished' | 'failure';

export interface ServiceRun {
  phase: RunPhase;
  /** When the server failed, within the give-up window (oldest first). */
  failureTimes: number[];
  /** Failures in a row since the server last ran for a whole give-up window; sets the backoff. */
  consecutive: number;
  restarts: number;
  serverStartedAt?: number;
  /** Why it failed or finished, e.g. `Step exited with code 3`. */
  detail?: string;
}

export const initialRun: ServiceRun = { phase: 'needs', failureTimes: [], consecutive: 0, restarts: 0 };

export interface RunDecision {
  next: ServiceRun;
  /** System lines for the service log. */
  lines: string[];
  /** Start the server again after this delay; absent when it must not restart. */
  restartInMs?: number;
}

export function stepsStarted(run: ServiceRun): ServiceRun {
  return { ...run, phase: 'steps' };
}

export function serverStarted(run: ServiceRun, now: number): ServiceRun {
  return { ...run, phase: 'server', serverStartedAt: now };
}

/** A service without steps has nothing to run: it fails at once. */
export function nothingToRun(run: ServiceRun): RunDecision {
  const detail = serviceLogTexts.noSteps;
  return { next: { ...run, phase: 'failure', detail }, lines: [detail] };
}

/** A step before the last exited; a non-zero code fails the run (rule 2). */
export function stepExited(run: ServiceRun, code: number): RunDecision {
  if (code === 0) return { next: run, lines: [] };
  const detail = serviceLogTexts.stepFailed(code);
  return { next: { ...run, phase: 'failure', detail }, lines: [...exitNotes(code), detail] };
}

/**
 * The server exited: finished on 0 (rule 5), else a restart with backoff (rule 3) or giving up (rule 4). `notes`
 * follow the exit-code notes of a failure (rule 6: the image's user).
 */
export function serverExited(run: ServiceRun, code: number, now: number, policy: ServerPolicy, notes: string[] = []): RunDecision {
  if (code === 0) {
    const detail = serviceLogTexts.finished;
    return { next: { ...run, phase: 'finished', detail, serverStartedAt: undefined }, lines: [detail] };
  }
  const ranStably = run.serverStartedAt !== undefined && now - run.serverStartedAt >= policy.giveUpWindowMs;
  const consecutive = ranStably ? 1 : run.consecutive + 1;
  const failureTimes = [...run.failureTimes, now].filter((at) => now - at < policy.giveUpWindowMs);
  const failureNotes = [...exitNotes(code), ...notes];
  if (failureTimes.length >= policy.giveUpFailures) {
    const detail = serviceLogTexts.givingUp(code, policy.giveUpFailures, policy.giveUpWindowMs);
    const next: ServiceRun = { ...run, phase: 'failure', failureTimes, consecutive, detail, serverStartedAt: undefined };
    return { next, lines: [...failureNotes, detail] };
  }
  const restartInMs = restartDelayMs(consecutive, policy);
  const next: ServiceRun = { ...run, phase: 'restarting', failureTimes, consecutive, restarts: run.restarts + 1, serverStartedAt: undefined };
  return { next, lines: [...failureNotes, serviceLogTexts.restarting(code, restartInMs)], restartInMs };
}

/** Rule 6: what exit codes 127 and 126 mean. */
export function exitNotes(code: number): string[] {
  if (code === 127) return [serviceLogTexts.commandMissing];
  if (code === 126) return [serviceLogTexts.notExecutable];
  return [];
}

/**
 * How long a restarted server whose readiness is only "it runs" (no port, no health check) must stay up before it
 * counts as running again: a crash loop stays Starting ("Restarted n time(s)") instead of flipping at every restart.
 */
export const SETTLE_AFTER_RESTART_MS = 10_000;

/**
 * The status of 3.2 a replica reports: running only while the server runs and is ready. `settling` (a replica
 * ready as soon as it runs): after a restart, only once it ran SETTLE_AFTER_RESTART_MS without exiting.
 */
export function replicaStatusOf(run: ServiceRun, ready: boolean, settling?: { now: number }): ReplicaStatusValue {
  if (run.phase === 'finished' || run.phase === 'failure') return run.phase;
  if (run.phase !== 'server' || !ready) return 'starting';
  const justRestarted = settling !== undefined && run.restarts > 0 && run.serverStartedAt !== undefined && settling.now - run.serverStartedAt < SETTLE_AFTER_RESTART_MS;
  return justRestarted ? 'starting' : 'running';
}

/** An exit code or, for a process killed by a signal, 128 + its number (as shells report it). */
export function exitCodeOf(code: number | null, signalNumber: number | undefined): number {
  if (code !== null) return code;
  return 128 + (signalNumber ?? 0);
}
