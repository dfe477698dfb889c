// The data plane: one request (or WebSocket upgrade) forwarded to an upstream over HTTP/1.1 with keep-alive,
// bodies streamed both ways, hop-by-hop headers dropped, `X-Forwarded-*` set.
//
// Requests go out on pooled raw sockets with a small HTTP/1.1 response reader of our own instead of http.request:
// the ClientRequest, Agent and IncomingMessage machinery cost about as much CPU per request as the rest of the
// router together (bench/router, docs/decisions.md "Router performance"). Upgrades keep using http.request.
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { SERVER_VERSION } from '../core/version.ts';
import { poolFor, pools, type Connection, type Exchanger, type Pool } from './upstream-pool.ts';
import { closeFrame, FrameBoundary } from './websocket-close.ts';
import { ChunkedDecoder, connectionNames, HOP_BY_HOP, MALFORMED, NEED_MORE, parseResponseHead, requestHead, type Framing } from './upstream-http.ts';

export interface Upstream {
  host: string;
  port: number;
  /** Request target as the upstream sees it (`/path?query`). */
  path: string;
  /** Connect to this address instead of resolving `host` (forward targets pinned against DNS rebinding). */
  lookup?: net.LookupFunction;
}

export interface Forwarded {
  /** The client's address. */
  for: string;
  proto: 'http' | 'https';
  host: string;
}

export type ProxyFailure = 'no-answer' | 'timeout';

/** The headers to send on: without hop-by-hop ones (also those named in `Connection`), with `X-Forwarded-*`. */
export function forwardHeaders(headers: IncomingHttpHeaders, forwarded: Forwarded): IncomingHttpHeaders {
  const named = connectionNames(headers.connection);
  const result: IncomingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name) && (named.length === 0 || !named.includes(name))) result[name] = value;
  }
  const previous = headers['x-forwarded-for'];
  result['x-forwarded-for'] = previous ? `${String(previous)}, ${forwarded.for}` : forwarded.for;
  result['x-forwarded-proto'] = forwarded.proto;
  result['x-forwarded-host'] = forwarded.host;
  return result;
}

/** The head of an upstream's answer to an upgrade, as written on the client's socket, with svc's Svc-Version. */
function answerHead(answer: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`, `svc-version: ${SERVER_VERSION}`];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    if (answer.rawHeaders[i].toLowerCase() !== 'svc-version') lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Chunked request bodies are framed anew (Node's server has decoded them). */
const CRLF = Buffer.from('\r\n');
const LAST_CHUNK = '0\r\n\r\n';
const MAX_HEAD_BYTES = 64 * 1024;

class Exchange implements Exchanger {
  private pool: Pool | undefined;
  private connection: Connection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private answered = false;
  private retried = false;
  private head: Buffer | undefined;
  private bodySent: boolean;
  private framing: Framing = 'none';
  private remaining = 0;
  private reusable = true;
  private chunks: ChunkedDecoder | undefined;
  private paused = false;
  private drained: (() => void) | undefined;
  private readonly chunkedBody: boolean;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    readonly upstream: Upstream,
    private readonly headers: IncomingHttpHeaders,
    private readonly fail: (failure: ProxyFailure) => void,
  ) {
    const original = request.headers;
    this.chunkedBody = original['transfer-encoding'] !== undefined;
    this.bodySent = !this.chunkedBody && (original['content-length'] === undefined || original['content-length'] === '0');
  }

  begin(timeoutMs: number): void {
    this.timer = setTimeout(() => this.failWith('timeout'), timeoutMs);
    this.response.on('close', () => {
      if (!this.response.writableFinished) this.abandon();
    });
    this.pool = poolFor(this.upstream);
    this.pool.acquire(this);
  }

  /** The connection is ours: send the head, then the body as it comes. */
  start(connection: Connection): void {
    if (this.done) return void connection.pool.release(connection);
    this.connection = connection;
    connection.exchange = this;
    connection.uses++;
    connection.socket.write(requestHead(this.request.method ?? 'GET', this.upstream.path, this.headers, this.chunkedBody), 'latin1');
    if (!this.bodySent) this.sendBody(connection.socket);
  }

  private sendBody(socket: net.Socket): void {
    const request = this.request;
    const resume = () => request.resume();
    request.on('data', (chunk: Buffer) => {
      if (this.done) return;
      let flushed: boolean;
      if (this.chunkedBody) {
        socket.cork();
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        flushed = socket.write(CRLF);
        socket.uncork();
      } else {
        flushed = socket.write(chunk);
      }
      if (!flushed) {
        request.pause();
        socket.once('drain', resume);
      }
    });
    request.on('end', () => {
      if (this.done) return;
      if (this.chunkedBody) socket.write(LAST_CHUNK);
      socket.removeListener('drain', resume);
      this.bodySent = true;
    });
  }

  onData(chunk: Buffer): void {
    if (this.done) return;
    if (!this.answered) return this.readHead(chunk);
    this.readBody(chunk, 0);
  }

  private readHead(chunk: Buffer): void {
    const data = this.head ? Buffer.concat([this.head, chunk]) : chunk;
    const end = data.indexOf('\r\n\r\n');
    if (end < 0) {
      if (data.length > MAX_HEAD_BYTES) return this.failWith('no-answer');
      this.head = data;
      return;
    }
    this.head = undefined;
    const parsed = parseResponseHead(data.toString('latin1', 0, end), this.request.method);
    if (!parsed || parsed.status === 101) return this.failWith('no-answer'); // 101 only answers an upgrade
    const rest = end + 4;
    if (parsed.status < 200) {
      // 100 Continue, 102, 103: interim answers the client does not need; the final one follows
      if (data.length > rest) this.readHead(data.subarray(rest));
      return;
    }
    clearTimeout(this.timer);
    this.answered = true;
    this.framing = parsed.framing;
    this.remaining = parsed.length;
    this.reusable = parsed.keepAlive;
    if (parsed.framing === 'chunked') this.chunks = new ChunkedDecoder();
    const whole = parsed.framing === 'none' || (parsed.framing === 'length' && data.length - rest >= parsed.length);
    try {
      if (parsed.message) this.response.writeHead(parsed.status, parsed.message, parsed.headers);
      else this.response.writeHead(parsed.status, parsed.headers);
      if (whole) {
        // the whole answer is here: head and body leave in one write
        if (data.length - rest > parsed.length) this.reusable = false;
        this.remaining = 0;
        this.response.end(parsed.length > 0 ? data.subarray(rest, rest + parsed.length) : undefined);
        return this.finish();
      }
    } catch {
      // an answer Node will not pass on (a bad header name or value, a status out of range)
      return this.response.headersSent ? this.abandon() : this.failWith('no-answer');
    }
    if (data.length > rest) this.readBody(data, rest);
  }

  private readBody(data: Buffer, from: number): void {
    switch (this.framing) {
      case 'close':
        return this.write(from === 0 ? data : data.subarray(from));
      case 'length': {
        const take = Math.min(this.remaining, data.length - from);
        this.remaining -= take;
        if (data.length - from > take) this.reusable = false;
        if (this.remaining > 0) return this.write(data.subarray(from, from + take));
        this.response.end(data.subarray(from, from + take));
        return this.finish();
      }
      case 'chunked':
        return this.readChunks(data, from);
      default:
        this.reusable = false; // bytes after an answer without a body
    }
  }

  /** A chunked answer is decoded; the client gets the data with the framing its own connection needs. */
  private readChunks(data: Buffer, from: number): void {
    const end = this.chunks!.feed(data, from, (chunk) => this.write(chunk));
    if (end === NEED_MORE || this.done) return;
    if (end === MALFORMED) return this.abandon();
    if (end < data.length) this.reusable = false;
    this.response.end(); // trailers are not passed on (neither were they by http.request)
    this.finish();
  }

  /** Body bytes to the client; a client that reads slowly holds the upstream back. */
  private write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (!this.response.write(chunk) && !this.paused) {
      this.paused = true;
      this.connection!.socket.pause();
      this.drained ??= () => {
        this.paused = false;
        this.connection?.socket.resume();
      };
      this.response.once('drain', this.drained);
    }
  }

  onEnd(): void {
    if (this.answered && this.framing === 'close' && !this.done) {
      this.response.end();
      this.reusable = false;
      this.finish();
    }
  }

  onClose(): void {
    if (this.done) return;
    const connection = this.connection!;
    this.connection = undefined;
    // A kept connection the server had closed just before we wrote: try once more on a new one when nothing was
    // answered and there is no body to send again (Node's Agent would have answered 502 here).
    if (!this.answered && !this.head && connection.uses > 1 && !connection.forgotten && !this.retried && this.canRepeat()) {
      this.retried = true;
      this.pool = poolFor(this.upstream);
      return this.pool.acquire(this, true);
    }
    if (this.answered) this.abandon();
    else this.failWith('no-answer');
  }

  private canRepeat(): boolean {
    const original = this.request.headers;
    return !this.chunkedBody && (original['content-length'] === undefined || original['content-length'] === '0') && this.request.method !== 'POST' && this.request.method !== 'PATCH';
  }

  /** The answer went out whole: the connection goes back to the pool when the request was sent whole too. */
  private finish(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    if (this.paused) {
      // every byte of this answer was read; the client's slowness no longer concerns the connection
      this.response.removeListener('drain', this.drained!);
      connection.socket.resume();
    }
    if (this.reusable && this.bodySent && !connection.socket.destroyed) connection.pool.release(connection);
    else {
      connection.exchange = undefined;
      connection.socket.destroy();
    }
  }

  private failWith(failure: ProxyFailure): void {
    if (this.done) return;
    this.stop();
    if (this.response.headersSent) this.response.destroy();
    else this.fail(failure);
  }

  /** The client left, or the answer broke after it began: end both sides. */
  private abandon(): void {
    if (this.done) return;
    this.stop();
    this.response.destroy();
  }

  private stop(): void {
    this.done = true;
    clearTimeout(this.timer);
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      connection.exchange = undefined;
      connection.socket.destroy();
    } else {
      this.pool?.withdraw(this);
    }
  }
}

/**
 * Forwards the request; calls `fail` (once, before any byte of an answer was sent) when the upstream cannot be
 * reached or does not answer within `timeoutMs`. A failure after the answer began ends the response.
 */
export function proxyRequest(
  request: IncomingMessage,
  response: ServerResponse,
  upstream: Upstream,
  options: { headers: IncomingHttpHeaders; timeoutMs: number; fail: (failure: ProxyFailure) => void },
): void {
  new Exchange(request, response, upstream, options.headers, options.fail).begin(options.timeoutMs);
}

/**
 * Drops the kept-alive connections to an address whose replica went away: a new pod at the same address would
 * never answer on them (its kernel knows nothing of them until a retransmit), so a request could hang on one.
 */
export function forgetUpstream(host: string): void {
  for (const [key, pool] of pools) if (key.startsWith(`${host}:`)) pool.destroyAll();
}

/** An upgraded connection the router relays: `close` ends it for a reason (a WebSocket gets a close frame). */
export interface RelayedUpgrade {
  close(code: number, reason: string): void;
}

/**
 * Forwards a WebSocket (or other) upgrade: the request head goes to the upstream, then bytes flow both ways.
 * `opened` receives the connection once the upstream switched protocols; `closed` is called when it ends.
 */
export function proxyUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  upstream: Upstream,
  options: { headers: IncomingHttpHeaders; fail: (failure: ProxyFailure) => void; opened?: (relayed: RelayedUpgrade) => void; closed?: () => void },
): void {
  const headers = { ...options.headers, connection: 'Upgrade', upgrade: String(request.headers.upgrade ?? 'websocket') };
  const outgoing = http.request({ host: upstream.host, port: upstream.port, path: upstream.path, method: request.method, headers, lookup: upstream.lookup, setHost: false });
  outgoing.on('upgrade', (answer, upstreamSocket, upstreamHead) => {
    const websocket = String(answer.headers.upgrade ?? '').toLowerCase() === 'websocket';
    const frames = new FrameBoundary();
    socket.write(answerHead(answer));
    if (upstreamHead.length > 0) {
      frames.feed(upstreamHead);
      socket.write(upstreamHead);
    }
    if (head.length > 0) upstreamSocket.write(head);
    upstreamSocket.pipe(socket).pipe(upstreamSocket);
    // after pipe's own listener: every byte fed here was written to the client already
    if (websocket) upstreamSocket.on('data', (chunk: Buffer) => frames.feed(chunk));
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      upstreamSocket.destroy();
      socket.destroy();
      options.closed?.();
    };
    upstreamSocket.on('error', end);
    socket.on('error', end);
    upstreamSocket.on('close', end);
    socket.on('close', end);
    options.opened?.({
      close: (code, reason) => {
        if (ended) return;
        ended = true;
        upstreamSocket.unpipe(socket);
        socket.unpipe(upstreamSocket);
        upstreamSocket.destroy();
        options.closed?.();
        // a close frame only where a frame of the upstream ended; else the connection is cut
        if (!websocket || !frames.atBoundary || !socket.writable) return void socket.destroy();
        socket.end(closeFrame(code, reason));
        setTimeout(() => socket.destroy(), 5000).unref();
      },
    });
  });
  outgoing.on('response', (answer) => {
    // the upstream refused the upgrade: pass its answer on as is
    socket.write(answerHead(answer));
    answer.pipe(socket);
  });
  outgoing.on('error', () => options.fail('no-answer'));
  outgoing.end();
}
