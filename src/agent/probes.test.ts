import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { httpHealthy, isHealthy, portAnswers } from './probes.ts';

test('any-http takes any answer as healthy; http-2xx only 2xx', () => {
  assert.deepEqual([200, 302, 404, 500].map((code) => isHealthy('any-http', code)), [true, true, true, true]);
  assert.deepEqual([200, 204, 299, 301, 404, 503].map((code) => isHealthy('http-2xx', code)), [true, true, true, false, false, false]);
});

test('probes ask the given path and tell a closed port from an open one', async () => {
  const server = http.createServer((request, response) => {
    response.writeHead(request.url === '/ok' ? 200 : 503);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    assert.equal(await httpHealthy('127.0.0.1', port, '/ok', 'http-2xx'), true);
    assert.equal(await httpHealthy('127.0.0.1', port, '/', 'http-2xx'), false);
    assert.equal(await httpHealthy('127.0.0.1', port, '/', 'any-http'), true);
    assert.equal(await portAnswers('127.0.0.1', port), true);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  assert.equal(await portAnswers('127.0.0.1', port), false);
  assert.equal(await httpHealthy('127.0.0.1', port, '/', 'any-http'), false);
});
