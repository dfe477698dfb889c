import assert from 'node:assert/strict';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { test } from 'node:test';
import { listenOnUnixSocket } from './events-socket.ts';
import { nginxConfig, type NginxSettings } from './nginx-config.ts';

function get(socketPath: string, requestPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: requestPath, headers: { 'x-real-ip': '203.0.113.9' } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      })
      .on('error', reject);
  });
}

test("the Unix socket hands its connections to the HTTP server, as loopback peers, and is removed on close", async () => {
  const server = http.createServer((request, response) => response.end(`${request.url} from ${request.socket.remoteAddress}`));
  const listener = await listenOnUnixSocket(server);
  try {
    // nginx's workers run as another user: they must be able to connect.
    assert.equal((await stat(listener.path)).mode & 0o777, 0o666);
    const answer = await get(listener.path, '/api/v1/events?team=4');
    assert.deepEqual(answer, { status: 200, body: '/api/v1/events?team=4 from 127.0.0.1' });
  } finally {
    await listener.close();
    server.close();
  }
  await assert.rejects(stat(listener.path), { code: 'ENOENT' });
});

test('a directory whose path is too long for a socket is refused before anything is created in it', async () => {
  const parent = path.join(os.tmpdir(), `svc-events-test-${'x'.repeat(100)}`);
  await mkdir(parent, { recursive: true });
  try {
    await assert.rejects(listenOnUnixSocket(http.createServer(), parent), /too long for a Unix socket/);
    assert.deepEqual(await readdir(parent), []);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});

test('nginx sends event streams to the Unix socket when svc has one, everything else to its loopback port', () => {
  const settings: NginxSettings = { listenHost: '127.0.0.1', listenPort: 8080, internalPort: 18998, upstreamTimeoutSeconds: 60, dir: '/tmp/nginx', admitSecret: 'secret', bodyLimitBytes: 1024, controlPort: 18997 };
  const without = nginxConfig(settings, '', 1);
  assert.doesNotMatch(without, /svc_events|location = \/api\/v1\/events/);
  const withSocket = nginxConfig({ ...settings, eventsSocket: '/tmp/svc-events-x/events.sock' }, '', 1);
  assert.match(withSocket, /upstream svc_events \{ server unix:\/tmp\/svc-events-x\/events\.sock; \}/);
  assert.match(withSocket, /location = \/api\/v1\/events \{[^}]*proxy_pass http:\/\/svc_events;/);
  assert.match(withSocket, /location \/ \{[^}]*proxy_pass http:\/\/svc;/);
});
