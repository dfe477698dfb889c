import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { sendRequest } from './http-transport.ts';

async function serve(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

test('sends method, headers and body; answers status, headers and body like fetch', async () => {
  const server = await serve((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      response.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-seen': `${request.method} ${request.headers['x-key']} ${body}` });
      response.end('{"ok":true}');
    });
  });
  try {
    const response = await sendRequest({ method: 'POST', url: new URL(`${server.url}/a?b=1`), headers: { 'x-key': 'k' }, body: '{"n":1}' });
    assert.equal(response.status, 201);
    assert.equal(response.ok, true);
    assert.equal(response.statusText, 'Made');
    assert.equal(response.headers.get('X-Seen'), 'POST k {"n":1}');
    assert.deepEqual(await response.json(), { ok: true });
    assert.equal(await response.text(), '{"ok":true}', 'read again, the same text');
    const none = await sendRequest({ method: 'HEAD', url: new URL(`${server.url}/a`), headers: {} });
    assert.equal(none.body, null);
    assert.equal(await none.text(), '');
  } finally {
    await server.close();
  }
});

test('a streamed answer arrives piece by piece before it ends; a body that breaks off fails as fetch does ("terminated")', async () => {
  let finish!: () => void;
  const server = await serve((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    response.write('{"line":1}\n');
    finish = () => response.socket!.destroy();
  });
  try {
    const response = await sendRequest({ method: 'GET', url: new URL(`${server.url}/logs`), headers: {} });
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), '{"line":1}\n');
    finish();
    await assert.rejects(reader.read(), (error: Error) => error instanceof TypeError && error.message === 'terminated');
  } finally {
    await server.close();
  }
});

test('a whole answer that breaks off fails as fetch does ("terminated"); repeated header fields read joined', async () => {
  const server = await serve((_request, response) => {
    response.writeHead(200, [['content-type', 'application/json'], ['content-length', '100'], ['x-twice', 'a'], ['X-Twice', 'b']]);
    response.write('{"partial":');
    setImmediate(() => response.socket!.destroy());
  });
  try {
    const response = await sendRequest({ method: 'GET', url: new URL(`${server.url}/`), headers: {} });
    assert.equal(response.headers.get('x-twice'), 'a, b');
    await assert.rejects(response.text(), (error: Error) => error instanceof TypeError && error.message === 'terminated');
  } finally {
    await server.close();
  }
});

test('a server that cannot be reached fails as fetch does: TypeError "fetch failed" with the network error as cause', async () => {
  const server = await serve(() => undefined);
  const { url } = server;
  await server.close();
  await assert.rejects(sendRequest({ method: 'GET', url: new URL(`${url}/`), headers: {} }), (error: Error) => {
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, 'fetch failed');
    assert.match((error.cause as Error).message, /ECONNREFUSED/);
    return true;
  });
});
