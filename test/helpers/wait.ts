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

/** The operation once it has succeeded or failed. */
export function operationFinished(client: ApiClient, operationId: string): Promise<any> {
  return until(async () => {
    const operation = (await client.get(`/operations/${operationId}`)).body;
    return operation.state === 'succeeded' || operation.state === 'failed' ? operation : undefined;
  }, `operation ${operationId} to finish`);
}
