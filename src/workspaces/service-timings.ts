// Each service's start and first healthy answer on an operation's timeline (issue 40): steps beside the operation's
// own line, since replicas start together with the editor (a wake) or after the Sync's last phase on the line. The
// first healthy answer may come after the operation ended: its step runs until then (or fails with its replica).
import { setTimeout as delay } from 'node:timers/promises';
import type { BesideStep, PhaseTimeline } from '../core/phases.ts';
import type { ReplicaObservation, RuntimeDriver, WorkspaceRef } from '../runtime/driver.ts';

/** How often the replicas are asked whether they answer (one request to each replica's agent). */
const READY_POLL_MS = 200;
/** The longest a first healthy answer is waited for on a timeline. */
export const FIRST_ANSWER_WAIT_MS = 10 * 60_000;

export interface ReplicaStart {
  service: string;
  index: number;
}

const label = (replica: ReplicaStart, of: number) => (of > 1 ? `${replica.service}[${replica.index}]` : replica.service);

/** Begins the step of a replica's start (its pod, up to its agent's answer). */
export function beginReplicaStart(timeline: PhaseTimeline, replica: ReplicaStart, replicas: number): BesideStep {
  const name = label(replica, replicas);
  return timeline.beside(`${name} start`, `starting ${name}'s pod and agent`);
}

/**
 * Follows the started replicas until each answers its health check (ready), ends otherwise (failure, finished,
 * stopped) or `withinMs` passed, each as a step of its own from its start's end (`at`). Stops at `signal`.
 */
export async function recordFirstAnswers(
  driver: Pick<RuntimeDriver, 'replicaStates'>,
  ref: WorkspaceRef,
  timeline: PhaseTimeline,
  started: Array<ReplicaStart & { replicas: number; at: number }>,
  signal: AbortSignal,
  withinMs = FIRST_ANSWER_WAIT_MS,
): Promise<void> {
  const waiting = new Map(started.map((replica) => {
    const name = label(replica, replica.replicas);
    return [`${replica.service}/${replica.index}`, { name, step: timeline.beside(`${name} healthy`, `waiting for ${name}'s first healthy answer`, replica.at) }];
  }));
  const deadline = performance.now() + withinMs;
  while (waiting.size > 0 && !signal.aborted) {
    const observed = await driver.replicaStates(ref).catch(() => undefined);
    if (observed) endGone(waiting, observed);
    for (const replica of observed ?? []) {
      const key = `${replica.service}/${replica.index}`;
      const entry = waiting.get(key);
      if (!entry) continue;
      if (replica.status === 'running' && replica.ready) entry.step.end({ detail: `${entry.name} answered its health check` });
      else if (replica.status === 'starting' || replica.status === 'running') continue;
      else entry.step.end({ failed: true, detail: `${entry.name} ${replica.status}${replica.detail ? `: ${replica.detail}` : ''} before a healthy answer` });
      waiting.delete(key);
    }
    if (performance.now() >= deadline) break;
    // quick while a start is young; a service slow to answer is asked less often
    await delay(performance.now() - deadline + withinMs < 10_000 ? READY_POLL_MS : 5 * READY_POLL_MS, undefined, { signal }).catch(() => undefined);
  }
  for (const { name, step } of waiting.values()) step.end({ failed: true, detail: signal.aborted ? `${name}: the server stopped before its first healthy answer` : `${name}: no healthy answer within ${withinMs / 60_000} min` });
}

/** Replicas no longer there (the workspace stopped or slept, the service was stopped) get no healthy answer. */
function endGone(waiting: Map<string, { name: string; step: BesideStep }>, observed: ReplicaObservation[]): void {
  const present = new Set(observed.map((replica) => `${replica.service}/${replica.index}`));
  for (const [key, { name, step }] of waiting) {
    if (present.has(key)) continue;
    step.end({ failed: true, detail: `${name} was removed before a healthy answer` });
    waiting.delete(key);
  }
}
