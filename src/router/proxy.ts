// The data plane: one request (or WebSocket upgrade) forwarded to an upstream over HTTP/1.1 with keep-alive,
// bodies streamed both ways, hop-by-hop headers dropped, `X-Forwarded-*` set.
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';

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

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The headers to send on: without hop-by-hop ones (also those named in `Connection`), with `X-Forwarded-*`. */
export function forwardHeaders(headers: IncomingHttpHeaders, forwarded: Forwarded): IncomingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const result: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!hopByHop.has(name) && !named.includes(name) && value !== undefined) result[name] = value;
  }
  const previous = headers['x-forwarded-for'];
  result['x-forwarded-for'] = previous ? `${String(previous)}, ${forwarded.for}` : forwarded.for;
  result['x-forwarded-proto'] = forwarded.proto;
  result['x-forwarded-host'] = forwarded.host;
  return result;
}

function responseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers.connection ?? '').split(',').map((n) => n.trim().toLowerCase());
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name) && !named.includes(name)));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' });

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
  let failed = false;
  const outgoing = http.request({
    host: upstream.host,
    port: upstream.port,
    path: upstream.path,
    method: request.method,
    headers: options.headers,
    agent,
    lookup: upstream.lookup,
    setHost: false,
  });
  const fail = (failure: ProxyFailure) => {
    if (failed) return;
    failed = true;
    outgoing.destroy();
    if (response.headersSent) response.destroy();
    else options.fail(failure);
  };
  const timer = setTimeout(() => fail('timeout'), options.timeoutMs);
  outgoing.on('response', (answer) => {
    clearTimeout(timer);
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, responseHeaders(answer.headers));
    answer.pipe(response);
    answer.on('error', () => response.destroy());
  });
  outgoing.on('error', () => {
    clearTimeout(timer);
    fail('no-answer');
  });
  response.on('close', () => {
    clearTimeout(timer);
    if (!response.writableFinished) outgoing.destroy();
  });
  request.pipe(outgoing);
}

/** Forwards a WebSocket (or other) upgrade: the request head goes to the upstream, then bytes flow both ways. */
export function proxyUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  upstream: Upstream,
  options: { headers: IncomingHttpHeaders; fail: (failure: ProxyFailure) => void },
): void {
  const headers = { ...options.headers, connection: 'Upgrade', upgrade: String(request.headers.upgrade ?? 'websocket') };
  const outgoing = http.request({ host: upstream.host, port: upstream.port, path: upstream.path, method: request.method, headers, lookup: upstream.lookup, setHost: false });
  outgoing.on('upgrade', (answer, upstreamSocket, upstreamHead) => {
    const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (upstreamHead.length > 0) socket.write(upstreamHead);
    if (head.length > 0) upstreamSocket.write(head);
    upstreamSocket.pipe(socket).pipe(upstreamSocket);
    const end = () => {
      upstreamSocket.destroy();
      socket.destroy();
    };
    upstreamSocket.on('error', end);
    socket.on('error', end);
    upstreamSocket.on('close', end);
    socket.on('close', end);
  });
  outgoing.on('response', (answer) => {
    // the upstream refused the upgrade: pass its answer on as is
    const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    answer.pipe(socket);
  });
  outgoing.on('error', () => options.fail('no-answer'));
  outgoing.end();
}

/**
 * Drops the kept-alive connections to an address whose replica went away: a new pod at the same address would
 * never answer on them (its kernel knows nothing of them until a retransmit), so a request could hang on one.
 */
export function forgetUpstream(host: string): void {
  for (const pool of [agent.freeSockets, agent.sockets]) {
    for (const [name, sockets] of Object.entries(pool)) {
      if (name.startsWith(`${host}:`)) for (const socket of sockets ?? []) socket.destroy();
    }
  }
}
