// The console's only way to the server: the public API under /api/v1 with the browser session cookie, through the
// SDK's typed client (sdk/): every call names its route as the OpenAPI document does, so a changed route fails the
// console's type-check (npx tsc -p console). Every change sends `Svc-CSRF: 1` (spec 5, item 3); errors arrive as
// RFC 9457 problems and are thrown as ApiProblem, the SDK's SvcProblem with the `secrets` a missing-secrets problem
// lists. Calls read: `await answer(svcApi.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } }))`.
import { createSvcApi, idempotencyKey, problemOfAnswer, SvcProblem, unreachableProblem, type SvcOptions } from '../../sdk/src/index.ts';
import type { LogLine } from './types.ts';

export class ApiProblem extends SvcProblem {
  /** The secrets without a value (missing-secrets). */
  readonly secrets: string[];

  constructor(body: SvcProblem['body']) {
    super(body);
    this.secrets = Array.isArray(body.secrets) ? (body.secrets as string[]) : [];
  }
}

/** Anything thrown, as a problem a person can read. */
export function asProblem(error: unknown): ApiProblem {
  if (error instanceof ApiProblem) return error;
  if (error instanceof SvcProblem) return new ApiProblem(error.body);
  return new ApiProblem(unreachableProblem(error).body);
}

/** The console's connection: same origin, the session cookie, CSRF header on changes. */
export const svcOptions: SvcOptions = { baseUrl: '', csrf: true, idempotentPosts: false };
/** The SDK's typed client of every route. */
export const svcApi = createSvcApi(svcOptions);

let onSignedOut: (() => void) | undefined;

/** Called when a request answers 401: the session ended (or never was). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** An answer of the typed client (openapi-fetch). */
type Answer = { data?: unknown; error?: unknown; response: Response };
/** The body of an answer's success. */
type Data<A extends Answer> = Exclude<A, { error: {} }>['data'];

export interface AnswerOptions {
  /** Leave a 401 to the caller (sign-in) instead of signing the console out. */
  quiet401?: boolean;
}

/** A header that makes a POST idempotent: a repeated click or a retry cannot start the same operation twice. */
export const idempotent = () => ({ 'idempotency-key': idempotencyKey() });

/** If-Match with an ETag read before. */
export const ifMatch = (etag: string | undefined) => ({ 'if-match': etag ?? '*' });

async function settled<A extends Answer>(pending: Promise<A>, options: AnswerOptions): Promise<A> {
  let result: A;
  try {
    result = await pending;
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiProblem({ ...asProblem(error).body, detail: 'Check the connection and try again.' });
  }
  if (!result.response.ok) {
    if (result.response.status === 401 && !options.quiet401) onSignedOut?.();
    throw new ApiProblem(problemOfAnswer(result.response.status, result.response.statusText, result.error).body);
  }
  return result;
}

/** The body of a successful answer (undefined for 204), or its problem thrown as ApiProblem. */
export async function answer<A extends Answer>(pending: Promise<A>, options: AnswerOptions = {}): Promise<Data<A>> {
  return (await settled(pending, options)).data as Data<A>;
}

/** The body with the answer's ETag, for a later If-Match. */
export async function answerWithEtag<A extends Answer>(pending: Promise<A>): Promise<{ value: Data<A>; etag: string }> {
  const result = await settled(pending, {});
  return { value: result.data as Data<A>, etag: result.response.headers.get('etag') ?? '*' };
}

type PageAnswer<T> = { data?: { items: T[]; next_cursor?: string | null }; error?: unknown; response: Response };

/**
 * Every item of a paged list (pages of 200), up to `max` items: `listAll((page) => svcApi.GET('/api/v1/teams',
 * { params: { query: page } }))`.
 */
export async function listAll<T>(read: (page: { limit: number; cursor?: string }) => Promise<PageAnswer<T>>, max = 2000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = (await answer(read({ limit: 200, cursor })))!;
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor && items.length < max);
  return items;
}

/** A log the console shows: a replica of a landscape service, or a step of a stage run. */
export type LogSource =
  | { kind: 'service'; ws: number; service: string; replica: number }
  | { kind: 'step'; ws: number; stage: 'prepare' | 'test' | 'run'; run: number; step: number };

type LogQuery = { tail: number; follow?: boolean };

function readLog<P extends 'json' | 'stream'>(source: LogSource, query: LogQuery, signal: AbortSignal, parseAs: P) {
  return source.kind === 'service'
    ? svcApi.GET('/api/v1/workspaces/{ws}/landscape/services/{service}/logs', {
        params: { path: { ws: source.ws, service: source.service }, query: { ...query, replica: source.replica } },
        signal,
        parseAs,
      })
    : svcApi.GET('/api/v1/workspaces/{ws}/stages/{stage}/runs/{run}/steps/{step}/logs', {
        params: { path: { ws: source.ws, stage: source.stage, run: source.run, step: source.step }, query },
        signal,
        parseAs,
      });
}

/** The last `tail` lines of a log. */
export async function logTail(source: LogSource, tail: number, signal: AbortSignal): Promise<LogLine[]> {
  const page = await answer(readLog(source, { tail }, signal, 'json'));
  return page && 'lines' in page ? page.lines : [];
}

/**
 * Follows a log (`follow=true`: JSON lines as they come) and hands each line to `onLine`; resolves when the server
 * ends the stream (a finished step) or `signal` aborts it.
 */
export async function followLog(source: LogSource, onLine: (line: LogLine) => void, signal: AbortSignal): Promise<void> {
  const stream = (await answer(readLog(source, { tail: 1000, follow: true }, signal, 'stream'))) as ReadableStream<Uint8Array>;
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (line) onLine(JSON.parse(line) as LogLine);
      }
    }
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  }
}
