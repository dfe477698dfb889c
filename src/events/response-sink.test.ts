// The response sink against a real HTTP server and client: the ready-made chunks it writes to the socket are a
// well-formed chunked body (the client reads the texts back, then the end), and an HTTP/1.0 client gets the bytes.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { ResponseSink } from './response-sink.ts';
import { SseText } from './sse.ts';

async function serve(handler: (sink: ResponseSink) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    response.flushHeaders();
    handler(new ResponseSink(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const texts = [new SseText('id: 1\nevent: team.updated\ndata: {"a":"ä"}\n\n'), new SseText(': ping\n\n')];

test('chunks written straight to the socket make a well-formed chunked body, ended by the response', async () => {
  const server = await serve((sink) => {
    for (const text of texts) assert.equal(sink.write(text), true);
    setImmediate(() => sink.end());
  });
  try {
    const answer = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(answer.headers.get('transfer-encoding'), 'chunked');
    assert.equal(await answer.text(), texts.map((t) => t.text).join(''));
  } finally {
    await server.close();
  }
});

test('an HTTP/1.0 client (no chunked encoding) gets the bytes as they are', async () => {
  const server = await serve((sink) => {
    for (const text of texts) sink.write(text);
    setImmediate(() => sink.end());
  });
  try {
    const socket = net.connect(server.port, '127.0.0.1');
    socket.write('GET / HTTP/1.0\r\n\r\n');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk) => (received += chunk));
    await new Promise((resolve) => socket.on('end', resolve));
    assert.equal(received.slice(received.indexOf('\r\n\r\n') + 4), texts.map((t) => t.text).join(''));
  } finally {
    await server.close();
  }
});
