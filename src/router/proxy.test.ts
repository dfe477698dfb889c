// The data plane against upstreams that answer byte by byte as scripted: framing, kept connections, bodies both
// ways, and every way an upstream can fail.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, test } from 'node:test';
import { forgetUpstream, forwardHeaders, proxyRequest } from './proxy.ts';

const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

/** An upstream that answers each request (head read up to the blank line, no body) with what `answer` writes. */
async function rawUpstream(answer: (socket: net.Socket, request: string, index: number) => void): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  let index = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) >= 0) {
        const request = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        answer(socket, request, index++);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.close();
    for (const socket of sockets) socket.destroy();
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

/** A front server proxying every request to 127.0.0.1:`port`; failures answer `502 no-answer` / `502 timeout`. */
async function front(port: number, timeoutMs = 2_000): Promise<number> {
  const server = http.createServer((request, response) => {
    const headers = forwardHeaders(request.headers, { for: '127.0.0.1', proto: 'http', host: request.headers.host ?? '' });
    proxyRequest(request, response, { host: '127.0.0.1', port, path: request.url ?? '/' }, {
      headers,
      timeoutMs,
      fail: (failure) => {
        response.writeHead(502);
        response.end(failure);
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => (server.close(), server.closeAllConnections()));
  return (server.address() as net.AddressInfo).port;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function call(port: number, path = '/', options: { method?: string; headers?: Record<string, string>; body?: string[] } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('latin1');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    for (const part of options.body ?? []) request.write(part);
    request.end();
  });
}

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('an answer split across reads reaches the client whole, and the connection carries the next request', async () => {
  const upstream = await rawUpstream(async (socket) => {
    socket.write('HTTP/1.1 200 OK\r\nContent-');
    await later(5);
    socket.write('Length: 10\r\nX-Up: 1\r\n\r\nhello');
    await later(5);
    socket.write(' you');
    await later(5);
    socket.write('!');
  });
  const port = await front(upstream.port);
  for (let i = 0; i < 3; i++) {
    const answer = await call(port);
    assert.deepEqual([answer.status, answer.body, answer.headers['x-up'], answer.headers['content-length']], [200, 'hello you!', '1', '10']);
  }
  assert.equal(upstream.connections(), 1);
});

test('a chunked answer is passed on decoded and framed anew; an answer without length ends at the close', async () => {
  const upstream = await rawUpstream(async (socket, _request, index) => {
    if (index === 0) {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r');
      await later(5);
      socket.write('\n2;x=y\r\nde\r\n0\r\nTrailer-X: 1\r\n\r\n');
    } else {
      socket.end('HTTP/1.1 200 OK\r\n\r\nuntil the end');
    }
  });
  const port = await front(upstream.port);
  const chunked = await call(port);
  assert.deepEqual([chunked.body, chunked.headers['transfer-encoding'], chunked.headers['trailer-x']], ['abcde', 'chunked', undefined]);
  const open = await call(port);
  assert.equal(open.body, 'until the end');
});

test('HEAD and 204 answers carry no body; 100 Continue before the answer is skipped', async () => {
  const upstream = await rawUpstream((socket, request) => {
    if (request.startsWith('HEAD')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n');
    else if (request.includes('/empty')) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
    else socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok');
  });
  const port = await front(upstream.port);
  const head = await call(port, '/', { method: 'HEAD' });
  assert.deepEqual([head.status, head.headers['content-length'], head.body], [200, '42', '']);
  assert.equal((await call(port, '/empty')).status, 204);
  const created = await call(port, '/');
  assert.deepEqual([created.status, created.body], [201, 'ok']);
  assert.equal(upstream.connections(), 1);
});

test('request bodies stream to the upstream: with Content-Length as sent, chunked ones framed anew', async () => {
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => response.end(JSON.stringify({ body, length: request.headers['content-length'] ?? null, encoding: request.headers['transfer-encoding'] ?? null })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => (server.close(), server.closeAllConnections()));
  const port = await front((server.address() as net.AddressInfo).port);
  const sized = await call(port, '/', { method: 'POST', headers: { 'content-length': '11' }, body: ['hello', ' world'] });
  assert.deepEqual(JSON.parse(sized.body), { body: 'hello world', length: '11', encoding: null });
  const big = 'x'.repeat(3_000_000);
  const chunked = await call(port, '/', { method: 'PUT', body: ['a', big, 'b'] });
  const echoed = JSON.parse(chunked.body);
  assert.deepEqual([echoed.body.length, echoed.length, echoed.encoding], [big.length + 2, null, 'chunked']);
});

test('a kept connection the upstream closed is tried once more for a GET; a POST gets no-answer instead', async () => {
  const upstream = await rawUpstream((socket, request) => {
    // every connection answers its first request, then drops the next without a word (an idle-timeout race)
    const seen = ((socket as net.Socket & { seen?: number }).seen = ((socket as net.Socket & { seen?: number }).seen ?? 0) + 1);
    if (seen > 1) return void socket.destroy();
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${request.split(' ')[0].length}\r\n\r\n${request.split(' ')[0]}`);
  });
  const port = await front(upstream.port);
  assert.equal((await call(port)).body, 'GET');
  assert.equal((await call(port)).body, 'GET');
  const post = await call(port, '/', { method: 'POST' });
  assert.deepEqual([post.status, post.body], [502, 'no-answer']);
});

test('an upstream that breaks its answer midway ends the client response; a malformed one is no-answer; silence is timeout', async () => {
  const upstream = await rawUpstream((socket, request) => {
    if (request.includes('/break')) {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
      setTimeout(() => socket.destroy(), 10);
    } else if (request.includes('/garbage')) socket.write('SSH-2.0-OpenSSH\r\n\r\n');
    else if (request.includes('/bad-header')) socket.write('HTTP/1.1 200 OK\r\nX-Bad: a\x01b\r\nContent-Length: 0\r\n\r\n');
    // '/silent' never answers
  });
  const port = await front(upstream.port, 300);
  await assert.rejects(call(port, '/break'));
  assert.deepEqual(await call(port, '/garbage').then((a) => [a.status, a.body]), [502, 'no-answer']);
  assert.deepEqual(await call(port, '/bad-header').then((a) => [a.status, a.body]), [502, 'no-answer']);
  assert.deepEqual(await call(port, '/silent').then((a) => [a.status, a.body]), [502, 'timeout']);
  const refused = await front(1);
  assert.deepEqual(await call(refused).then((a) => [a.status, a.body]), [502, 'no-answer']);
});

test('hop-by-hop headers stay on their connection both ways; X-Forwarded-* are added', async () => {
  let seen = '';
  const upstream = await rawUpstream((socket, request) => {
    seen = request;
    socket.write('HTTP/1.1 200 OK\r\nConnection: X-Private\r\nX-Private: 1\r\nKeep-Alive: timeout=1\r\nX-Public: 2\r\nContent-Length: 0\r\n\r\n');
  });
  const port = await front(upstream.port);
  const answer = await call(port, '/p', { headers: { connection: 'keep-alive, x-secret', 'x-secret': 's', te: 'trailers', 'x-forwarded-for': '10.0.0.1' } });
  assert.deepEqual([answer.headers['x-private'], answer.headers['x-public']], [undefined, '2']);
  assert.doesNotMatch(seen, /x-secret|^te:/im);
  assert.match(seen, /^x-forwarded-for: 10\.0\.0\.1, 127\.0\.0\.1$/m);
  assert.match(seen, /^x-forwarded-host: 127\.0\.0\.1:\d+$/m);
});

test('forgetUpstream drops the kept connections to an address', async () => {
  const upstream = await rawUpstream((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  const port = await front(upstream.port);
  await call(port);
  await call(port);
  assert.equal(upstream.connections(), 1);
  forgetUpstream('127.0.0.1');
  await later(10);
  await call(port);
  assert.equal(upstream.connections(), 2);
});

test('a client that reads slowly holds the upstream back instead of buffering the whole answer', async () => {
  const size = 32 * 1024 * 1024;
  let written = 0;
  const upstream = await rawUpstream((socket) => {
    socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
    const piece = Buffer.alloc(64 * 1024, 'y');
    const pump = () => {
      while (written < size) {
        written += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
    };
    pump();
  });
  const port = await front(upstream.port, 10_000);
  const received = await new Promise<number>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, agent: false }, (response) => {
      response.pause();
      setTimeout(() => {
        assert.ok(written < size / 2, `the upstream wrote ${written} bytes to a client that read none`);
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve(bytes));
        response.resume();
      }, 200);
    });
    request.on('error', reject);
  });
  assert.equal(received, size);
});
