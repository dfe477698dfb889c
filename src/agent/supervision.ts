// The editor's life as the agent sees it, as a pure state machine: started, answering, exited. The agent carries
// out the restarts this decides; the clock is passed in.
import { restartDelayMs, type BackoffPolicy } from './backoff.ts';
import type { EditorPhase } from './protocol.ts';

export interface SupervisionPolicy extends BackoffPolicy {
  /** Failures in a row after which the editor counts as crash-looping (reported failed, still retried). */
  failedAfter: number;
  /** An editor that answered for this long and then exits starts a fresh count of failures. */
  stableMs: number;
}

export const editorSupervisionPolicy: SupervisionPolicy = { baseMs: 250, maxMs: 10_000, failedAfter: 3, stableMs: 10_000 };

export interface Supervision {
  phase: EditorPhase;
  /** Exits in a row without a stable run. */
  failures: number;
  restarts: number;
  readySince?: number;
  reason?: string;
}

export const initialSupervision: Supervision = { phase: 'starting', failures: 0, restarts: 0 };

export function editorAnswered(current: Supervision, now: number): Supervision {
  if (current.phase === 'ready') return current;
  return { ...current, phase: 'ready', readySince: now, reason: undefined };
}

/** The editor exited: the next state, and when to start it again. */
export function editorExited(
  current: Supervision,
  reason: string,
  now: number,
  policy: SupervisionPolicy,
): { next: Supervision; restartInMs: number } {
  const ranStably = current.readySince !== undefined && now - current.readySince >= policy.stableMs;
  const failures = ranStably ? 1 : current.failures + 1;
  const phase: EditorPhase = failures >= policy.failedAfter ? 'failed' : 'starting';
  const next: Supervision = { phase, failures, restarts: current.restarts + 1, reason };
  return { next, restartInMs: restartDelayMs(failures, policy) };
}

/** Why a process exited, in a line: its last error line when it printed one, else its exit code or signal. */
export function exitReason(outputTail: string, code: number | null, signal: string | null): string {
  const lastLine = outputTail
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .at(-1);
  if (lastLine) return lastLine.length > 300 ? `${lastLine.slice(0, 297)}...` : lastLine;
  if (signal) return `the editor was killed by ${signal}`;
  return `the editor exited with code ${code ?? 'unknown'}`;
}
