// An operation's timeline as clients read it (GET /operations/{id}/timeline, svc ws timings, the console): pure.
// The stored form is the PhaseTimeline's steps in wall-clock ms; the view gives each phase its offset from the
// moment the operation was queued, its duration (a running one: so far) and a sentence of what it did.
import type { PhaseTimeline, TimelineStep } from '../core/phases.ts';

/** What operation_timelines keeps: the steps and the phase under way on the line (none once the operation ended). */
export interface StoredTimeline {
  startedAt: number;
  /** When the operation ended (none while it runs). */
  endedAt?: number;
  steps: TimelineStep[];
  running?: { name?: string; startedAt: number; detail?: string };
}

export function storedTimelineOf(timeline: PhaseTimeline): StoredTimeline {
  const running = timeline.running;
  return { startedAt: timeline.startedAt, ...(timeline.endedAt !== undefined ? { endedAt: timeline.endedAt } : {}), steps: timeline.steps.map((step) => ({ ...step })), ...(running ? { running } : {}) };
}

export type PhaseState = 'done' | 'running' | 'failed';

export interface TimelinePhaseView {
  name: string;
  /** On the operation's line (the phases follow one another and add up to its time), or beside it. */
  beside: boolean;
  state: PhaseState;
  started_at: string;
  /** From the moment the operation was queued. */
  offset_ms: number;
  /** A running phase: so far. */
  duration_ms: number;
  detail?: string;
  /** What it did and how long it took: `pulling 1.2 GB of image layers: 40 s`. */
  summary: string;
}

export interface TimelineView {
  operation_id: string;
  kind: string;
  operation_state: 'pending' | 'running' | 'succeeded' | 'failed';
  started_at: string;
  /** The operation's wall time: from queued to finished (or now), on the wall clock. */
  wall_ms: number;
  /** The phases on the line together (they add up to wall_ms, but for what ran after the last of them). */
  phases_ms: number;
  phases: TimelinePhaseView[];
}

/** What the phases that say nothing themselves did (the agent's, reported at their end). */
const phaseTexts: Record<string, string> = {
  'queue and claim': 'waiting in the queue for a worker',
  'waking up saved': 'saving the workspace as waking up',
  'node start': "the agent's Node.js starting in the pod",
  'editor spawn': 'the agent starting the editor',
  'agent start': 'the agent starting to listen',
  'editor start': 'the editor starting until it answered in the pod',
  'readiness seen': 'svc seeing the agent report the editor ready',
  'editor from the host': 'the editor answering from the host',
  'running saved': 'saving the workspace as running',
  'services started': "starting the services' replicas",
};

/** The name of a running phase whose name is not known before its end (the driver names its phases at their end). */
export const NEXT_PHASE = 'next phase';

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** `1.2 GB`, `34 MB`, `812 kB`, `96 B` (powers of 1000, as registries and `du --si` count). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/**
 * The view of a stored timeline at `now`. A phase still running while the operation no longer runs (its server
 * died) shows as failed, ended when the operation did.
 */
export function timelineView(
  operation: { id: string; kind: string; state: TimelineView['operation_state'] },
  stored: StoredTimeline,
  now: number,
): TimelineView {
  const origin = stored.startedAt;
  const active = operation.state === 'running' || operation.state === 'pending';
  const end = stored.endedAt ?? now;
  const phase = (step: TimelineStep, state: PhaseState, endedAt: number): TimelinePhaseView => {
    const duration = Math.max(0, endedAt - step.startedAt);
    const detail = step.detail ?? phaseTexts[step.name];
    const what = detail ?? step.name;
    return {
      name: step.name,
      beside: step.beside === true,
      state,
      started_at: new Date(step.startedAt).toISOString(),
      offset_ms: Math.round(step.startedAt - origin),
      duration_ms: Math.round(duration),
      ...(detail ? { detail } : {}),
      summary: state === 'running' ? `${what}: running for ${formatDuration(duration)}` : `${what}: ${formatDuration(duration)}${state === 'failed' ? ' (failed)' : ''}`,
    };
  };
  const phases = stored.steps.map((step) =>
    step.endedAt !== undefined ? phase(step, step.failed ? 'failed' : 'done', step.endedAt) : phase(step, active || step.beside ? 'running' : 'failed', active || step.beside ? now : end),
  );
  if (stored.running) {
    const step = { name: stored.running.name ?? NEXT_PHASE, startedAt: stored.running.startedAt, ...(stored.running.detail ? { detail: stored.running.detail } : {}) };
    phases.push(active ? phase(step, 'running', Math.max(now, step.startedAt)) : phase(step, 'failed', end));
  }
  phases.sort((a, b) => a.offset_ms - b.offset_ms || Number(a.beside) - Number(b.beside));
  return {
    operation_id: operation.id,
    kind: operation.kind,
    operation_state: operation.state,
    started_at: new Date(origin).toISOString(),
    wall_ms: Math.round(Math.max(0, end - origin)),
    phases_ms: phases.filter((p) => !p.beside).reduce((sum, p) => sum + p.duration_ms, 0),
    phases,
  };
}
