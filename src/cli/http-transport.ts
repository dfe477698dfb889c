// The CLI's transport: one request sent with node:http (node:https for https addresses), its answer read as fetch's
// Response would be (status, headers, text, a web stream for streamed answers), without Node's fetch or its
// Request, Headers and Response classes. Those live in undici's bundle, which costs every command that touches them
// a fifth of Node's own start (and fetch itself compiles its HTTP parser as WebAssembly, which the process then
// waits for before it can exit): docs/cli.md, "Start-up". Failures look like fetch's: a TypeError "fetch failed"
// whose `cause` is the network error, a body that breaks off errors with TypeError "terminated", an abort rejects
// with the signal's reason.
import http from 'node:http';
import type { IncomingMessage } from 'node:http';

export interface HttpRequest {
  method: string;
  url: URL;
  /** Names in lowercase. */
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** An answer's headers, read as fetch's Headers are: any case, repeated fields joined with ", ". */
export class AnswerHeaders {
  private readonly fields = new Map<string, string>();

  /** From node's rawHeaders: name, value, name, value ... */
  constructor(raw: string[] = []) {
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      const before = this.fields.get(name);
      this.fields.set(name, before === undefined ? raw[i + 1] : `${before}, ${raw[i + 1]}`);
    }
  }

  get(name: string): string | null {
    return this.fields.get(name.toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.fields.has(name.toLowerCase());
  }
}

/** What answered: what the CLI reads of fetch's Response. The body is read once, as text or as a stream. */
export class HttpAnswer {
  private whole?: Promise<string>;
  private stream?: ReadableStream<Uint8Array<ArrayBuffer>>;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    readonly headers: AnswerHeaders,
    private readonly incoming: IncomingMessage | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** The whole body as text; asked again, the same text. */
  text(): Promise<string> {
    if (this.stream) return Promise.reject(new TypeError('Body is unusable: the body is being read as a stream'));
    this.whole ??= readAll(this.incoming, this.signal);
    return this.whole;
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** The body as a web stream that reads from the socket as the reader asks (null for an answer without a body). */
  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (!this.incoming) return null;
    if (this.whole) throw new TypeError('Body is unusable: the body was read as text');
    this.stream ??= streamOf(this.incoming, this.signal);
    return this.stream;
  }

  /** Leaves the body unread and lets the connection go. */
  discard(): void {
    if (this.whole || this.stream) return;
    this.incoming?.destroy();
  }
}

/** Idle connections are kept for the next request of the same command, and never hold the process open. */
const agents: { http?: http.Agent; https?: http.Agent } = {};

async function transportFor(protocol: string): Promise<{ request: typeof http.request; agent: http.Agent }> {
  if (protocol === 'https:') {
    const https = await import('node:https');
    agents.https ??= new https.Agent({ keepAlive: true });
    return { request: https.request, agent: agents.https };
  }
  if (protocol !== 'http:') throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${protocol}`) });
  agents.http ??= new http.Agent({ keepAlive: true });
  return { request: http.request, agent: agents.http };
}

export async function sendRequest(request: HttpRequest): Promise<HttpAnswer> {
  request.signal?.throwIfAborted();
  const { request: send, agent } = await transportFor(request.url.protocol);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers = body ? { ...request.headers, 'content-length': String(body.length) } : request.headers;
  const incoming = await new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = send(request.url, { method: request.method, headers, agent, signal: request.signal }, resolve);
    outgoing.on('error', (error) => reject(error.name === 'AbortError' ? request.signal?.reason ?? error : new TypeError('fetch failed', { cause: error })));
    outgoing.end(body);
  });
  const status = incoming.statusCode ?? 0;
  const empty = request.method === 'HEAD' || status === 204 || status === 304;
  if (empty) incoming.resume();
  return new HttpAnswer(request.url.href, status, incoming.statusMessage ?? '', new AnswerHeaders(incoming.rawHeaders), empty ? undefined : incoming, request.signal);
}

const terminated = () => new TypeError('terminated', { cause: new Error('the connection closed before the answer ended') });

function readAll(incoming: IncomingMessage | undefined, signal: AbortSignal | undefined): Promise<string> {
  if (!incoming) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    incoming.on('close', () => {
      if (!ended) reject(signal?.aborted ? signal.reason : terminated());
    });
    incoming.on('error', () => undefined); // reported by 'close'
  });
}

/** The answer's body as a web stream that reads from the socket as the reader asks. */
function streamOf(incoming: IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array<ArrayBuffer>> {
  let ended = false;
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      incoming.pause();
      incoming.on('data', (chunk: Buffer) => {
        if (ended) return; // a chunk already read when the reader cancelled
        controller.enqueue(new Uint8Array(chunk.buffer as ArrayBuffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.on('end', () => {
        if (ended) return;
        ended = true;
        controller.close();
      });
      incoming.on('close', () => {
        if (!ended) controller.error(signal?.aborted ? signal.reason : terminated());
      });
      incoming.on('error', () => undefined); // reported by 'close'
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      ended = true;
      incoming.destroy();
    },
  });
}
