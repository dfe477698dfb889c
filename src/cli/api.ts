// The CLI's connection to the public API, through a typed client with openapi-fetch's interface (typed-client.ts):
// a key in Authorization, problems turned into CliErrors, network failures into "could not reach", and the one-time warning when the server's version differs (spec 9.2). An answer
// that is not svc's (every svc answer carries Svc-Version; its API answers JSON) is refused in one line, never shown:
// a web page or another API at the address, or a path in front of /api/v1 that is not svc's.
import { readFileSync } from 'node:fs';
import type { Client } from 'openapi-fetch';
import type WebSocket from 'ws';
import type { paths } from '../../sdk/src/generated/openapi.ts';
import { streamAddress, type StreamParams, type StreamPath } from '../../sdk/src/streams.ts';
import { SSH_PROTOCOL, zeroMask } from '../core/channel-protocol.ts';
import type { ProblemBody } from '../core/problems.ts';
import { CliError, ExitCode, problemError, unreachable } from './errors.ts';
import { AnswerHeaders, sendRequest, type HttpAnswer, type HttpRequest } from './http-transport.ts';
import { createTypedClient } from './typed-client.ts';

/** The CLI's own version: the package's. */
export const CLI_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `1.5.x` vs `1.6.x` differ; patch releases do not. */
export function versionsDiffer(client: string, server: string): boolean {
  const majorMinor = (version: string) => version.replace(/^v/, '').split('.').slice(0, 2).join('.');
  return majorMinor(client) !== majorMinor(server);
}

let versionChecked = false;

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sends a fresh Idempotency-Key, so a retried POST cannot act twice. */
  idempotent?: boolean;
  /** The file that line:column positions of a landscape problem refer to. */
  file?: string;
  signal?: AbortSignal;
}

/** The SDK's typed client (openapi-fetch over the generated paths): `api.client.GET('/api/v1/me')`. */
export type ApiClient = Client<paths>;

/** An answer of the typed client (its `response` is the transport's HttpAnswer: see typed-client.ts). */
type Answer = { data?: unknown; error?: unknown; response: Response };
/** The body of an answer's success. */
type Data<A extends Answer> = Exclude<A, { error: {} }>['data'];

/**
 * The CLI's connection to the API: every request goes through the SDK's typed client, whose fetch adds the key,
 * the User-Agent and an Idempotency-Key on every POST, checks the server's version once, and throws what is not a
 * success as a CliError (the server's problem, "could not reach", or "not an svc server"). Commands call
 * `await api.answer(api.client.GET('/api/v1/workspaces/{ws}', { params: { path: { ws } } }))`.
 */
export class Api {
  readonly client: ApiClient;

  constructor(
    /** The console's address, without a trailing slash. */
    readonly url: string,
    private readonly token: string | undefined,
    private readonly warn: (text: string) => void,
  ) {
    this.client = createTypedClient<paths>(url, (request) => this.send(request));
  }

  /** The body of a successful answer (undefined for 204); `file` is where a landscape problem's positions point. */
  async answer<A extends Answer>(pending: Promise<A>, options: { file?: string } = {}): Promise<Data<A>> {
    return (await this.call(pending, options.file)).data as Data<A>;
  }

  /** The body with the answer's ETag, for a later If-Match. */
  async withEtag<A extends Answer>(pending: Promise<A>): Promise<{ body: Data<A>; etag: string }> {
    const answer = await this.call(pending);
    return { body: answer.data as Data<A>, etag: answer.response.headers.get('etag') ?? '*' };
  }

  /** Every item of a paged list: `api.all((page) => api.client.GET('/api/v1/teams', { params: { query: page } }))`. */
  async all<T>(read: (page: { limit: number; cursor?: string }) => Promise<{ data?: { items: T[]; next_cursor?: string | null }; error?: unknown; response: Response }>): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const page = (await this.answer(read({ limit: 200, cursor })))!;
      items.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return items;
  }

  /**
   * A streaming answer (ndjson logs, the event stream), asked for with `parseAs: 'stream'` and Accept: `accept`;
   * anything else than that media type is not svc's.
   */
  async stream(pending: Promise<Answer>, accept: string): Promise<HttpAnswer> {
    const response = (await this.call(pending)).response as unknown as HttpAnswer;
    if (!contentType(response.headers).startsWith(accept)) {
      response.discard();
      throw this.notSvc(response.status, response.headers, new URL(response.url || this.url));
    }
    return response;
  }

  /**
   * Opens a WebSocket stream of the API (a shell, a forwarded port) at the address the SDK makes from the route,
   * offering the route's subprotocol, paused until the caller listens; a refusal before the upgrade is thrown as
   * the server's problem, like any other answer.
   */
  async openStream<P extends StreamPath>(route: P, params: StreamParams<P>): Promise<WebSocket> {
    const { url: address, protocol } = streamAddress(this.url, route, params);
    const headers: Record<string, string> = { 'user-agent': `svc-cli/${CLI_VERSION}` };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    // ws loads only for the commands that open a stream (svc ssh, exec, port-forward).
    const { default: WebSocketClient } = await import('ws');
    return new Promise((resolve, reject) => {
      const socket = new WebSocketClient(address, protocol, { headers, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024, ...(protocol === SSH_PROTOCOL ? { generateMask: zeroMask } : {}) });
      const settle = (error: CliError) => {
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(error);
      };
      socket.once('open', () => {
        socket.removeAllListeners('unexpected-response');
        socket.pause(); // frames that came with the handshake wait until the caller listens and resumes
        resolve(socket);
      });
      socket.once('error', (error) => settle(unreachable(`could not reach the server at ${this.url}: ${networkReason(error)}`)));
      socket.once('unexpected-response', (_request, response) => {
        this.checkVersion(String(response.headers['svc-version'] ?? '') || null);
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const headers = new AnswerHeaders(response.rawHeaders);
          settle(this.failureOf(address, response.statusCode ?? 0, response.statusMessage ?? '', headers, text));
        });
      });
    });
  }

  /** The whole answer of a typed call (its status, its headers); a failure is thrown, with `file` for positions. */
  async call<A extends Answer>(pending: Promise<A>, file?: string): Promise<A> {
    try {
      return await pending;
    } catch (error) {
      if (file && error instanceof CliError && error.problem) throw new CliError(error.message, error.exitCode, error.problem, file);
      throw error;
    }
  }

  /** The typed client's transport: svc's conventions on the request, every answer but svc's own success thrown. */
  private async send(request: HttpRequest): Promise<HttpAnswer> {
    const { url, headers } = request;
    headers['user-agent'] = `svc-cli/${CLI_VERSION}`;
    if (headers.accept === undefined || headers.accept === '*/*') headers.accept = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    // node:crypto loads only for the commands that change something.
    if (request.method === 'POST' && headers['idempotency-key'] === undefined) headers['idempotency-key'] = (await import('node:crypto')).randomUUID();
    let response: HttpAnswer;
    try {
      response = await sendRequest(request);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw unreachable(`could not reach the server at ${this.url}: ${networkReason(error)}`);
    }
    this.checkVersion(response.headers.get('svc-version'));
    if (response.ok && response.headers.has('svc-version')) {
      // a JSON answer that is not JSON, or not JSON at all where JSON was asked for: not svc's
      if (headers.accept === 'application/json' && response.status !== 204 && response.headers.get('content-length') !== '0') {
        const text = await response.text(); // kept for the typed client, which reads it again
        if (text && !isJson(response.headers)) throw this.notSvc(response.status, response.headers, url, request.method);
        try {
          if (text) JSON.parse(text);
        } catch {
          throw this.notSvc(response.status, response.headers, url, request.method);
        }
      }
      return response;
    }
    const text = await response.text().catch(() => '');
    if (response.ok) throw this.notSvc(response.status, response.headers, url, request.method);
    throw this.failureOf(url, response.status, response.statusText, response.headers, text, request.method);
  }

  private failureOf(url: URL, status: number, statusText: string, headers: AnswerHeaders, text: string, method = 'GET'): CliError {
    if (contentType(headers) === 'application/problem+json') {
      try {
        return problemError(JSON.parse(text) as ProblemBody);
      } catch {
        return this.notSvc(status, headers, url, method);
      }
    }
    // Not svc's own answer: a proxy or load balancer in front of a server that is down.
    if ([502, 503, 504].includes(status)) {
      return unreachable(`could not reach the server at ${this.url}: ${status} ${statusText}`);
    }
    if (!headers.has('svc-version')) return this.notSvc(status, headers, url, method);
    const plain = contentType(headers) === 'text/plain' ? text.trim().slice(0, 200) : '';
    const problem: ProblemBody = { type: 'about:blank', title: `${status} ${statusText}`, status, detail: plain || undefined };
    return problemError(problem);
  }

  /** What answered is not svc's API: said in one line, without what it sent (a web page, another API's error). */
  private notSvc(status: number, headers: AnswerHeaders, url: URL, method = 'GET'): CliError {
    const type = contentType(headers) || 'no content type';
    const path = url.pathname.slice(new URL(this.url).pathname.replace(/\/+$/, '').length);
    return new CliError(`${this.url} is not an svc server: it answered ${status} ${type} to ${method} ${path}`, ExitCode.unreachable);
  }

  private checkVersion(server: string | null): void {
    if (versionChecked || !server) return;
    versionChecked = true;
    if (versionsDiffer(CLI_VERSION, server)) {
      this.warn(`svc: warning: this svc is ${CLI_VERSION} but the server at ${this.url} runs ${server}; some commands may not work as described.\n`);
    }
  }
}

/** The media type of an answer, without parameters, in lowercase. */
const contentType = (headers: AnswerHeaders) => (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
const isJson = (headers: AnswerHeaders) => /^application\/([a-z.+-]+\+)?json$/.test(contentType(headers));

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.message || cause?.code || (error as Error).message;
}

/** A console address as typed (`svc.example.com`, `http://127.0.0.1:8080/`) made canonical. */
export function normalizeUrl(input: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliError(`"${input}" is not an address`, ExitCode.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`"${input}" is not an http or https address`, ExitCode.usage);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}
