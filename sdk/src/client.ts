// The typed client: openapi-fetch over the generated paths, with svc's conventions as middleware (a key in
// Authorization, Svc-CSRF for browser sessions, an Idempotency-Key on every POST) and `ok()` that turns a failed
// answer into a thrown SvcProblem.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/openapi.ts';
import { problemOfAnswer, unreachableProblem } from './problems.ts';

export interface SvcOptions {
  /** The server's address, e.g. `https://svc.example.com`; `''` in a page the server itself serves. */
  baseUrl: string;
  /** An API key (`svc_<id>_<secret>`); without one, requests carry the browser's session cookie. */
  token?: string;
  /** Sends `Svc-CSRF: 1` on every change, as a browser session must (spec 5). */
  csrf?: boolean;
  /** A fresh Idempotency-Key on every POST, so a retried POST cannot act twice (default true). */
  idempotentPosts?: boolean;
  /** Headers sent with every request (a User-Agent, say). */
  headers?: Record<string, string>;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
}

/** openapi-fetch's client of every route of the document: `api.GET('/api/v1/workspaces/{ws}', { params: { path: { ws } } })`. */
export type SvcApi = Client<paths>;

/** A fresh random key (crypto.randomUUID needs a secure context in browsers; this does not). */
export function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The headers svc's conventions add to a request of `method`. */
export function conventionHeaders(options: SvcOptions, method: string): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.csrf && method !== 'GET' && method !== 'HEAD') headers['svc-csrf'] = '1';
  if ((options.idempotentPosts ?? true) && method === 'POST') headers['idempotency-key'] = idempotencyKey();
  return headers;
}

/** fetch that reports a network failure as a problem of status 0 (an abort stays an AbortError). */
export function problemFetch(options: SvcOptions): (input: Request) => Promise<Response> {
  const send = options.fetch ?? ((input: Request) => globalThis.fetch(input));
  return async (input) => {
    try {
      return await send(input);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw unreachableProblem(error);
    }
  };
}

export function createSvcApi(options: SvcOptions): SvcApi {
  const api = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: problemFetch(options) });
  const conventions: Middleware = {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(conventionHeaders(options, request.method))) {
        if (!request.headers.has(name)) request.headers.set(name, value);
      }
      return request;
    },
  };
  api.use(conventions);
  return api;
}

type Answer = { data?: unknown; error?: unknown; response: Response };

/**
 * The body of a successful answer (undefined for 204), or the answer's problem thrown:
 * `const ws = ok(await api.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: 1 } } }))`.
 */
export function ok<A extends Answer>(answer: A): Exclude<A, { error: {} }>['data'] {
  if (!answer.response.ok) throw problemOfAnswer(answer.response.status, answer.response.statusText, answer.error);
  return answer.data as Exclude<A, { error: {} }>['data'];
}
