// The CLI's HTTP client of the public API: a key in Authorization, problems turned into CliErrors, network
// failures into "could not reach", and the one-time warning when the server's version differs (spec 9.2). An answer
// that is not svc's (every svc answer carries Svc-Version; its API answers JSON) is refused in one line, never shown:
// a web page or another API at the address, or a path in front of /api/v1 that is not svc's.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type WebSocket from 'ws';
import type { ProblemBody } from '../core/problems.ts';
import { CliError, ExitCode, problemError, unreachable } from './errors.ts';

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

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export class Api {
  constructor(
    /** The console's address, without a trailing slash. */
    readonly url: string,
    private readonly token: string | undefined,
    private readonly warn: (text: string) => void,
  ) {}

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { idempotent: true, ...options, body });
  }
  put<T = any>(path: string, body: unknown, options: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  patch<T = any>(path: string, body: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
    const response = await this.send(method, path, options, 'application/json');
    const text = await response.text();
    if (text && !isJson(response.headers)) throw this.notSvc(method, path, response.status, response.headers);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : text;
    } catch {
      throw this.notSvc(method, path, response.status, response.headers);
    }
    return { status: response.status, headers: response.headers, body: body as T };
  }

  /** Opens a streaming answer (ndjson logs, the event stream); errors are thrown like any other. */
  async stream(path: string, options: RequestOptions, accept: string): Promise<Response> {
    const response = await this.send('GET', path, options, accept);
    if (!contentType(response.headers).startsWith(accept)) {
      await response.body?.cancel().catch(() => undefined);
      throw this.notSvc('GET', path, response.status, response.headers);
    }
    return response;
  }

  /**
   * Opens a WebSocket stream of the API (a shell, a forwarded port) speaking `protocol`, paused until the caller
   * listens; a refusal before the upgrade is thrown as the server's problem, like any other answer.
   */
  async openStream(path: string, query: URLSearchParams, protocol: string): Promise<WebSocket> {
    const address = new URL(`${this.url}/api/v1${path}`);
    address.protocol = address.protocol === 'https:' ? 'wss:' : 'ws:';
    address.search = query.toString();
    const headers: Record<string, string> = { 'user-agent': `svc-cli/${CLI_VERSION}` };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    // ws loads only for the commands that open a stream (svc ssh, exec, port-forward).
    const { default: WebSocketClient } = await import('ws');
    return new Promise((resolve, reject) => {
      const socket = new WebSocketClient(address, protocol, { headers, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
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
          const headers = new Headers(Object.entries(response.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])) as [string, string][]);
          settle(this.failureOf('GET', path, response.statusCode ?? 0, response.statusMessage ?? '', headers, text, undefined));
        });
      });
    });
  }

  /** Every item of a paged list (`{ items, next_cursor }`). */
  async all<T>(path: string, query: RequestOptions['query'] = {}): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | undefined;
    do {
      const page = (await this.get<{ items: T[]; next_cursor?: string }>(path, { query: { ...query, limit: 200, cursor } })).body;
      items.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    return items;
  }

  private async send(method: string, path: string, options: RequestOptions, accept: string): Promise<Response> {
    const headers: Record<string, string> = { accept, 'user-agent': `svc-cli/${CLI_VERSION}`, ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotent && method === 'POST') headers['idempotency-key'] = randomUUID();
    const address = new URL(`${this.url}/api/v1${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) address.searchParams.set(name, String(value));
    let response: Response;
    try {
      response = await fetch(address, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal: options.signal });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw unreachable(`could not reach the server at ${this.url}: ${networkReason(error)}`);
    }
    this.checkVersion(response.headers.get('svc-version'));
    if (response.ok && response.headers.has('svc-version')) return response;
    const text = await response.text().catch(() => '');
    if (response.ok) throw this.notSvc(method, path, response.status, response.headers);
    throw this.failureOf(method, path, response.status, response.statusText, response.headers, text, options.file);
  }

  private failureOf(method: string, path: string, status: number, statusText: string, headers: Headers, text: string, file: string | undefined): CliError {
    if (contentType(headers) === 'application/problem+json') {
      try {
        return problemError(JSON.parse(text) as ProblemBody, file);
      } catch {
        return this.notSvc(method, path, status, headers);
      }
    }
    // Not svc's own answer: a proxy or load balancer in front of a server that is down.
    if ([502, 503, 504].includes(status)) {
      return unreachable(`could not reach the server at ${this.url}: ${status} ${statusText}`);
    }
    if (!headers.has('svc-version')) return this.notSvc(method, path, status, headers);
    const plain = contentType(headers) === 'text/plain' ? text.trim().slice(0, 200) : '';
    const problem: ProblemBody = { type: 'about:blank', title: `${status} ${statusText}`, status, detail: plain || undefined };
    return problemError(problem, file);
  }

  /** What answered is not svc's API: said in one line, without what it sent (a web page, another API's error). */
  private notSvc(method: string, path: string, status: number, headers: Headers): CliError {
    const type = contentType(headers) || 'no content type';
    return new CliError(`${this.url} is not an svc server: it answered ${status} ${type} to ${method} /api/v1${path}`, ExitCode.unreachable);
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
const contentType = (headers: Headers) => (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
const isJson = (headers: Headers) => /^application\/([a-z.+-]+\+)?json$/.test(contentType(headers));

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
