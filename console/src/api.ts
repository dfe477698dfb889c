// The console's only way to the server: the public API under /api/v1 with the browser session cookie, through the
// SDK (sdk/): every change sends `Svc-CSRF: 1` (spec 5, item 3); errors arrive as RFC 9457 problems and are thrown
// as ApiProblem, the SDK's SvcProblem with the `secrets` a missing-secrets problem lists.
import { conventionHeaders, createSvcApi, problemOfAnswer, SvcProblem, unreachableProblem, type SvcOptions } from '../../sdk/src/index.ts';
import type { LogLine, Page } from './types.ts';

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
/** The SDK's typed client, for calls by route: `ok(await svcApi.GET('/api/v1/me'))`. */
export const svcApi = createSvcApi(svcOptions);

let onSignedOut: (() => void) | undefined;

/** Called when a request answers 401: the session ended (or never was). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

svcApi.use({
  onResponse({ response }) {
    if (response.status === 401) onSignedOut?.();
  },
});

export interface RequestOptions {
  body?: unknown;
  ifMatch?: string;
  /** Sends an Idempotency-Key, so a repeated click or a retry cannot start the same operation twice. */
  idempotent?: boolean;
  /** Leave a 401 to the caller (sign-in) instead of signing the console out. */
  quiet401?: boolean;
  signal?: AbortSignal;
}

async function problemOf(response: Response): Promise<ApiProblem> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  if (/json/.test(response.headers.get('content-type') ?? '') && text) {
    try {
      body = JSON.parse(text);
    } catch {
      // not a problem document; described by its text
    }
  }
  return new ApiProblem(problemOfAnswer(response.status, response.statusText, body).body);
}

async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {
    ...conventionHeaders({ ...svcOptions, idempotentPosts: options.idempotent === true }, method),
    accept: 'application/json',
  };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.ifMatch) headers['if-match'] = options.ifMatch;
  let response: Response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiProblem({ ...unreachableProblem(error).body, detail: 'Check the connection and try again.' });
  }
  if (!response.ok) {
    const problem = await problemOf(response);
    if (response.status === 401 && !options.quiet401) onSignedOut?.();
    throw problem;
  }
  return response;
}

/** A request whose answer is JSON (or nothing, for 204). */
export async function api<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T> {
  const response = await send(method, path, options);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** GET with the answer's ETag, for a later If-Match. */
export async function getWithEtag<T>(path: string): Promise<{ value: T; etag: string }> {
  const response = await send('GET', path);
  return { value: (await response.json()) as T, etag: response.headers.get('etag') ?? '*' };
}

/** Every item of a paged list (pages of 200), up to `max` items. */
export async function listAll<T>(path: string, max = 2000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  const join = path.includes('?') ? '&' : '?';
  do {
    const page = await api<Page<T>>('GET', `${path}${join}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/**
 * Follows a log (`follow=true`: JSON lines as they come) and hands each line to `onLine`; resolves when the server
 * ends the stream (a finished step) or `signal` aborts it.
 */
export async function followLog(path: string, onLine: (line: LogLine) => void, signal: AbortSignal): Promise<void> {
  const response = await send('GET', `${path}${path.includes('?') ? '&' : '?'}follow=true&tail=1000`, { signal });
  const reader = response.body!.getReader();
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
