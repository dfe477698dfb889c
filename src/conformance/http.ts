// The suite's HTTP client: raw answers (status, headers, body text) of an installation's API, each one recorded, so
// that rules about every answer (Svc-Version, problems) can look at all the suite saw. Unlike the CLI's client it
// never turns an answer into an error: judging answers is the suite's job.
import { randomUUID } from 'node:crypto';
import { serverSentEvents, type ServerSentEvent } from '../cli/streams.ts';

export interface Exchange {
  method: string;
  /** The path after /api/v1, with its query. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed when the answer says it is JSON (`application/json`, `application/problem+json`...). */
  body: any;
}

export interface SendOptions {
  body?: unknown;
  /** A body sent as it is (malformed JSON on purpose). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Sends no credentials. */
  anonymous?: boolean;
  /** Another key than the suite's. */
  token?: string;
  /** Sends the key in Svc-Authorization instead of Authorization. */
  svcAuthorization?: boolean;
  /** A fresh Idempotency-Key (POST that creates). */
  idempotent?: boolean;
}

export const mediaType = (headers: Headers) => (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
const isJson = (headers: Headers) => /^application\/([a-z.+-]+\+)?json$/.test(mediaType(headers));

export class ConformanceHttp {
  /** Every answer the suite got, in order. */
  readonly exchanges: Exchange[] = [];

  constructor(
    /** The console's address, without a trailing slash. */
    readonly url: string,
    readonly token: string,
  ) {}

  get(path: string, options?: SendOptions) {
    return this.send('GET', path, options);
  }
  post(path: string, body?: unknown, options: SendOptions = {}) {
    return this.send('POST', path, { ...options, body });
  }
  patch(path: string, body: unknown, options: SendOptions = {}) {
    return this.send('PATCH', path, { ...options, body });
  }
  delete(path: string, options?: SendOptions) {
    return this.send('DELETE', path, options);
  }

  async send(method: string, path: string, options: SendOptions = {}): Promise<Exchange> {
    const request = () => fetch(this.address(path), { method, headers: this.headers(options), body: this.bodyOf(options) });
    // a kept-alive connection the installation closed while idle is not an answer: a GET is sent again once
    const response = await request().catch((error: { cause?: { code?: string } }) => {
      if (method === 'GET' && error.cause?.code === 'UND_ERR_SOCKET') return request();
      throw error;
    });
    const text = await response.text();
    let body: unknown = undefined;
    if (text && isJson(response.headers)) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined; // a rule that needs the body says it was not JSON
      }
    }
    const exchange = { method, path, status: response.status, headers: response.headers, text, body };
    this.exchanges.push(exchange);
    return exchange;
  }

  /**
   * Opens the event stream; `events` yields each event as it comes. The answer (without a body) is recorded; close
   * with `close()`.
   */
  async openEvents(path = '/events'): Promise<{ response: Exchange; events?: AsyncGenerator<ServerSentEvent>; close(): void }> {
    const controller = new AbortController();
    const response = await fetch(this.address(path), { headers: { ...this.headers({}), accept: 'text/event-stream' }, signal: controller.signal });
    const streaming = response.ok && mediaType(response.headers) === 'text/event-stream';
    const text = streaming ? '' : await response.text();
    const exchange: Exchange = { method: 'GET', path, status: response.status, headers: response.headers, text, body: text && isJson(response.headers) ? safeJson(text) : undefined };
    this.exchanges.push(exchange);
    const close = () => controller.abort();
    if (!streaming) return { response: exchange, close };
    return { response: exchange, events: guarded(serverSentEvents(response)), close };
  }

  private address(path: string): URL {
    return new URL(`${this.url}/api/v1${path}`);
  }

  private headers(options: SendOptions): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'svc-conformance' };
    const token = options.token ?? this.token;
    if (!options.anonymous) headers[options.svcAuthorization ? 'svc-authorization' : 'authorization'] = `Bearer ${token}`;
    if (options.body !== undefined || options.rawBody !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotent) headers['idempotency-key'] = randomUUID();
    return { ...headers, ...options.headers };
  }

  private bodyOf(options: SendOptions): string | undefined {
    if (options.rawBody !== undefined) return options.rawBody;
    return options.body === undefined ? undefined : JSON.stringify(options.body);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A stream closed on purpose ends the events instead of throwing. */
async function* guarded(events: AsyncGenerator<ServerSentEvent>): AsyncGenerator<ServerSentEvent> {
  try {
    yield* events;
  } catch (error) {
    if ((error as Error).name !== 'AbortError') throw error;
  }
}
