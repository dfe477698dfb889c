// Waiting in tests without fixed sleeps: poll a check with a short pause and a generous deadline.
import type { ApiClient } from './client.ts';

/** Polls until `check` answers something; the last error it threw is part of the timeout's message. */
export async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await check().catch((error: unknown) => ((last = error), undefined));
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The operation once it has succeeded or failed. Operations start pods and servers: on a loaded 2-core machine a
 * first Sync can take over a minute, so the deadline is longer than `until`'s.
 */
export function operationFinished(client: ApiClient, operationId: string, timeoutMs = 180_000): Promise<any> {
  return until(async () => {
    const operation = (await client.get(`/operations/${operationId}`)).body;
    return operation.state === 'succeeded' || operation.state === 'failed' ? operation : undefined;
  }, `operation ${operationId} to finish`, timeoutMs);
}
