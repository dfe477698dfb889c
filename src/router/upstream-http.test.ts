import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkedDecoder, MALFORMED, NEED_MORE, parseResponseHead, requestHead } from './upstream-http.ts';

test('an answer head: status, reason, headers as sent without hop-by-hop ones, length framing, kept connection', () => {
  const head = parseResponseHead('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nKeep-Alive: timeout=5', 'GET');
  assert.deepEqual(head, {
    status: 200,
    message: 'OK',
    headers: ['Content-Type', 'text/plain', 'Content-Length', '5', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'],
    framing: 'length',
    length: 5,
    keepAlive: true,
  });
});

test('headers named in Connection are dropped; Connection: close and HTTP/1.0 without keep-alive end the connection', () => {
  const closing = parseResponseHead('HTTP/1.1 200 OK\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nX-Kept:  spaced \t\r\nContent-Length: 0', 'GET')!;
  assert.deepEqual(closing.headers, ['X-Kept', 'spaced', 'Content-Length', '0']);
  assert.equal(closing.keepAlive, false);
  assert.equal(closing.framing, 'none');
  assert.equal(parseResponseHead('HTTP/1.0 200 OK\r\nContent-Length: 1', 'GET')!.keepAlive, false);
  assert.equal(parseResponseHead('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1', 'GET')!.keepAlive, true);
});

test('framing: chunked wins over Content-Length (dropped, connection not kept); no length reads to the close; HEAD, 204, 304 have no body', () => {
  const both = parseResponseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 10', 'GET')!;
  assert.deepEqual([both.framing, both.keepAlive, both.headers], ['chunked', false, []]);
  const chunked = parseResponseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked', 'GET')!;
  assert.deepEqual([chunked.framing, chunked.keepAlive], ['chunked', true]);
  assert.equal(parseResponseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip', 'GET')!.framing, 'close');
  const open = parseResponseHead('HTTP/1.1 200 OK', 'GET')!;
  assert.deepEqual([open.framing, open.keepAlive, open.message], ['close', false, 'OK']);
  assert.equal(parseResponseHead('HTTP/1.1 200 OK\r\nContent-Length: 9', 'HEAD')!.framing, 'none');
  assert.equal(parseResponseHead('HTTP/1.1 204 No Content', 'GET')!.framing, 'none');
  assert.equal(parseResponseHead('HTTP/1.1 304 Not Modified\r\nContent-Length: 9', 'GET')!.framing, 'none');
  assert.equal(parseResponseHead('HTTP/1.1 200', 'GET')!.message, '');
});

test('malformed heads are refused: no status line, folded or nameless lines, bad or differing lengths', () => {
  for (const text of [
    'HTTP/2 200 OK',
    'HTTP/1.1 20 OK',
    'hello',
    'HTTP/1.1 200 OK\r\nX-A: 1\r\n folded',
    'HTTP/1.1 200 OK\r\n: nameless',
    'HTTP/1.1 200 OK\r\nContent-Length: -1',
    'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2',
  ]) {
    assert.equal(parseResponseHead(text, 'GET'), undefined, text);
  }
  assert.deepEqual(parseResponseHead('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2', 'GET')!.headers, ['Content-Length', '2']);
});

test('the request head: headers as given (arrays as repeated lines), chunked framing when asked, keep-alive', () => {
  const head = requestHead('POST', '/x?y=1', { host: 'w1.localhost', cookie: 'a=1', 'x-many': ['1', '2'], 'x-none': undefined }, true);
  assert.equal(head, 'POST /x?y=1 HTTP/1.1\r\nhost: w1.localhost\r\ncookie: a=1\r\nx-many: 1\r\nx-many: 2\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n');
});

test('a chunked body is decoded across any split of reads; extensions and trailers are dropped; the end offset is told', () => {
  const wire = Buffer.from('5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT');
  for (let size = 1; size <= wire.length; size++) {
    const decoder = new ChunkedDecoder();
    const parts: Buffer[] = [];
    let result = NEED_MORE;
    let offset = 0;
    for (; offset < wire.length && result === NEED_MORE; offset += size) {
      result = decoder.feed(wire.subarray(offset, offset + size), 0, (chunk) => parts.push(Buffer.from(chunk)));
    }
    assert.equal(Buffer.concat(parts).toString(), 'hello, world', `reads of ${size}`);
    assert.ok(result >= 0, `reads of ${size}`);
    assert.equal(offset - size + result, wire.length - 'NEXT'.length, `reads of ${size}`);
  }
});

test('a chunked body with a bad size line or data longer than its size is malformed', () => {
  assert.equal(new ChunkedDecoder().feed(Buffer.from('zz\r\n'), 0, () => undefined), MALFORMED);
  assert.equal(new ChunkedDecoder().feed(Buffer.from('2\r\nabc\r\n'), 0, () => undefined), MALFORMED);
  assert.equal(new ChunkedDecoder().feed(Buffer.from(`${'1'.repeat(5000)}`), 0, () => undefined), MALFORMED);
});
