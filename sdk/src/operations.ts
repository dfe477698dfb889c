// Long-running actions (spec 2.4) answer 202 with an operation; `followOperation` waits for it to end. It listens
// on the event stream (operation.updated carries the full operation; each `ready` re-reads it) and polls
// GET /operations/{id} instead where the server streams no events or the stream cannot be opened.
import { createSvcApi, ok, type SvcApi, type SvcOptions } from './client.ts';
import { svcEvents } from './events.ts';
import { SvcProblem } from './problems.ts';
import type { Operation } from './resources.ts';

export interface FollowOptions {
  /** Listen on the event stream (default true); false polls only. */
  events?: boolean;
  /** Stops following (the operation goes on at the server); the promise rejects with an AbortError. */
  signal?: AbortSignal;
  /** Each new state or progress text of the operation. */
  onUpdate?: (operation: Operation) => void;
  /** The pause before poll number `n` (default 150 ms growing to 1 s). */
  pollDelay?: (n: number) => number;
}

/** A failed operation, thrown with its problem (`operation.error`). */
export class OperationFailed extends SvcProblem {
  constructor(readonly operation: Operation) {
    super(operation.error ?? { type: 'about:blank', title: `${operation.kind} failed`, status: 500, detail: operation.detail });
    this.name = 'OperationFailed';
  }
}

export const isFinished = (operation: Operation) => operation.state === 'succeeded' || operation.state === 'failed';

function abortError(): Error {
  return Object.assign(new Error('stopped following the operation'), { name: 'AbortError' });
}

async function read(api: SvcApi, id: string, signal?: AbortSignal): Promise<Operation> {
  return ok(await api.GET('/api/v1/operations/{id}', { params: { path: { id } }, signal }));
}

async function poll(api: SvcApi, start: Operation, options: FollowOptions): Promise<Operation> {
  const delay = options.pollDelay ?? ((n: number) => Math.min(1000, 150 * 1.5 ** n));
  let operation = start;
  for (let n = 0; !isFinished(operation); n++) {
    await new Promise((resolve) => setTimeout(resolve, delay(n)));
    if (options.signal?.aborted) throw abortError();
    const next = await read(api, operation.id, options.signal);
    if (next.state !== operation.state || next.detail !== operation.detail) options.onUpdate?.(next);
    operation = next;
  }
  return operation;
}

/** Follows on the event stream; undefined when the stream could not be used (then the caller polls). */
async function listen(svc: SvcOptions, api: SvcApi, start: Operation, options: FollowOptions): Promise<Operation | undefined> {
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  let operation = start;
  const update = (next: Operation) => {
    if (next.state !== operation.state || next.detail !== operation.detail) options.onUpdate?.(next);
    operation = next;
  };
  try {
    for await (const event of svcEvents(svc, { signal: stop.signal, maxFailures: 3 })) {
      // `ready`: the stream is live; what happened before it (or during a break) is read, not waited for.
      if (event.type === 'ready') update(await read(api, start.id, stop.signal));
      else if (event.type === 'operation.updated' && event.operation?.id === start.id) update(event.operation);
      if (isFinished(operation)) return operation;
    }
    return undefined;
  } catch (error) {
    if (options.signal?.aborted) throw abortError();
    if (error instanceof SvcProblem && (error.status === 0 || error.status === 501 || error.status >= 500)) return undefined;
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', abort);
    stop.abort();
  }
}

/**
 * Waits until `operation` (as a 202 answered it, or its id) has ended: resolves with it when it succeeded, rejects
 * with OperationFailed (its problem) when it failed.
 */
export async function followOperation(svc: SvcOptions, operation: Operation | string, options: FollowOptions = {}, api: SvcApi = createSvcApi(svc)): Promise<Operation> {
  let current = typeof operation === 'string' ? await read(api, operation, options.signal) : operation;
  if (!isFinished(current) && options.events !== false) current = (await listen(svc, api, current, options)) ?? current;
  if (!isFinished(current)) current = await poll(api, await read(api, current.id, options.signal), options);
  if (current.state === 'failed') throw new OperationFailed(current);
  return current;
}
