// How long the agent waits before restarting a process that exited: doubling from `baseMs`, capped at `maxMs`.

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const editorBackoff: BackoffPolicy = { baseMs: 250, maxMs: 10_000 };

/** Delay before the restart that follows the `failures`-th failure in a row (1 = first failure). */
export function restartDelayMs(failures: number, policy: BackoffPolicy): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}
