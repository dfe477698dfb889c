// The life of an operation as plain decisions (spec 3.5): pending -> running -> succeeded | failed.
// No database and no clock of its own: the worker and the store carry these out.

export type OperationState = 'pending' | 'running' | 'succeeded' | 'failed';

export const operationKinds = [
  'workspace.create',
  'workspace.delete',
  'workspace.restore',
  'workspace.volume_owner',
  'landscape.sync',
  'landscape.teardown',
  'workspace.archive',
  'workspace.restore_archive',
  'managed_service.dump',
  'managed_service.pause',
  'managed_service.resume',
  'managed_service.restore',
] as const;
export type OperationKind = (typeof operationKinds)[number];

/** How long a claim holds without renewal; a server that died loses its jobs after this. */
export const LEASE_MS = 30_000;
/** How often a working server renews its leases: three times per lease, so one late renewal loses nothing. */
export const renewEveryMs = (leaseMs: number) => Math.max(100, Math.floor(leaseMs / 3));
/**
 * How many of a server's workers one team's jobs may hold at once: all but one, so that a team whose jobs wait long
 * (a registry that trickles, a large dump) always leaves a worker to the others (issue 33).
 */
export function teamShareOf(concurrency: number): number {
  return Math.max(1, concurrency - 1);
}

/** Claims of one job before it is failed for good (a job that keeps killing its server must end). */
export const MAX_ATTEMPTS = 3;
/** Finished operations stay readable this long (spec 2.4). */
export const RETENTION_MS = 7 * 24 * 3600_000;

export function isFinished(state: OperationState): boolean {
  return state === 'succeeded' || state === 'failed';
}

export interface ClaimedJob {
  attempts: number;
  /** True when an earlier claim ran out: its server stopped or died while working. */
  resumed: boolean;
}

/** What to do with a job just claimed: run it (again) or fail it because it was tried too often. */
export function decideClaim(job: ClaimedJob): { run: true } | { run: false; reason: string } {
  if (job.attempts > MAX_ATTEMPTS) {
    return { run: false, reason: `Gave up after ${MAX_ATTEMPTS} attempts; the server stopped during each of them.` };
  }
  return { run: true };
}
