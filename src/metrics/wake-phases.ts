// The phases of a wake as metric labels: only names svc's own code gives (a bounded set). A phase named after
// something of a workspace (a service of its landscape: `web queue`) never becomes a label of its own; it counts
// under `other`, so that no workspace's data reaches the label values.

/** The phases a wake's timeline holds (src/workspaces/operations.ts, src/runtime/local/index.ts and pods.ts). */
export const WAKE_PHASES = [
  'queue and claim',
  'pod gate',
  'waking up saved',
  'base image',
  'networks',
  'pod preparation',
  'sandbox start',
  'editor from the host',
  'node start',
  'editor spawn',
  'agent start',
  'editor start',
  'readiness seen',
  'running saved',
  'services started',
] as const;

const known = new Set<string>(WAKE_PHASES);

/** `queue and claim` -> `queue_and_claim`; any name not of WAKE_PHASES -> `other`. */
export function wakePhaseLabel(name: string): string {
  return known.has(name) ? name.replaceAll(' ', '_') : 'other';
}

/** The seconds of each labelled phase: phases under one label (several `other`s) add up. */
export function wakePhaseSeconds(phases: ReadonlyArray<{ name: string; ms: number }>): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const phase of phases) {
    const label = wakePhaseLabel(phase.name);
    seconds.set(label, (seconds.get(label) ?? 0) + phase.ms / 1000);
  }
  return seconds;
}
