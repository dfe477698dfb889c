// Requests refused before any route sees them (spec 5 "errors are problems", spec 7 router pages): a Content-Length
// that is no length, `%00` in a path, a path that is no valid percent-encoding, a path parameter over its length, a
// 20,000-character address. API hosts answer an RFC 9457 problem, workspace hosts the router's page, and every answer
// carries Svc-Version, with nginx in front (the default) and without it (test/router-errors-node.test.ts). The odd
// requests are written on raw sockets: HTTP clients refuse to send them.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { SERVER_VERSION } from '../src/core/version.ts';
import { rawRequest, type RawAnswer } from './helpers/raw-http.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let workspace: ServedWorkspace;
let port: number;
const apiHost = () => `127.0.0.1:${port}`;
const workspaceHost = () => `w${workspace.id}.localhost`;

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  port = Number(new URL(server.url).port);
  workspace = await servedWorkspace(server, 'errors');
});

after(async () => {
  if (server && workspace) await removeWorkspaces(server.server.driver, [workspace.id]);
  await server?.close();
  await workspace?.repository.remove();
});

const raw = (head: string) => rawRequest(port, head);

function assertProblemAnswer(answer: RawAnswer, status: number, type: string): void {
  assert.equal(answer.status, status, answer.body.slice(0, 300));
  assert.equal(answer.headers['content-type']?.split(';')[0], 'application/problem+json', answer.body.slice(0, 300));
  const body = JSON.parse(answer.body);
  assert.equal(body.type, `urn:svc:problem:${type}`);
  assert.equal(body.status, status);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  assert.equal(answer.headers['svc-version'], SERVER_VERSION);
}

function assertPageLine(answer: RawAnswer, line: string): void {
  assert.equal(answer.status, Number(line.split(' ')[0]), answer.body.slice(0, 300));
  assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8', answer.body.slice(0, 300));
  assert.equal(answer.body, `${line}\n`);
  assert.equal(answer.headers['svc-version'], SERVER_VERSION);
}

const negativeLength = (host: string) => `POST /api/v1/sessions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: -1`;
const hugeLength = (host: string) => `POST /api/v1/sessions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999999`;
const nulInPath = (host: string, accept = '*/*') => `GET /api/v1/%00/x HTTP/1.1\r\nHost: ${host}\r\nAccept: ${accept}`;
const longAddress = (host: string) => `GET /api/v1/version?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}`;

test('a Content-Length that is no length answers a 400 problem on API hosts and "400 Bad request" on workspace hosts', async () => {
  assertProblemAnswer(await raw(negativeLength(apiHost())), 400, 'bad-request');
  assertProblemAnswer(await raw(hugeLength(apiHost())), 400, 'bad-request');
  assertPageLine(await raw(negativeLength(workspaceHost())), '400 Bad request');
  assertPageLine(await raw(hugeLength(workspaceHost())), '400 Bad request');
  assertPageLine(await raw(negativeLength('w999999.localhost')), '400 Bad request');
});

test('%00 in a path answers a 400 problem on API hosts and the Bad request page on workspace hosts', async () => {
  assertProblemAnswer(await raw(nulInPath(apiHost())), 400, 'bad-request');
  assertPageLine(await raw(nulInPath(workspaceHost())), '400 Bad request');
  const browser = await raw(nulInPath(workspaceHost(), 'text/html,application/xhtml+xml,*/*;q=0.8'));
  assert.equal(browser.status, 400);
  assert.equal(browser.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(browser.body, /<title>[^<]*Bad request/);
  assert.equal(browser.headers['svc-version'], SERVER_VERSION);
});

test("a path that is no valid percent-encoding and a parameter over its length answer problems (Fastify's own errors)", async () => {
  assertProblemAnswer(await raw(`GET /api/v1/me/api-keys/%ff%fe HTTP/1.1\r\nHost: ${apiHost()}`), 400, 'bad-request');
  assertProblemAnswer(await raw(`DELETE /api/v1/me/api-keys/${'a'.repeat(300)} HTTP/1.1\r\nHost: ${apiHost()}`), 414, 'uri-too-long');
});

test('a 20,000-character address answers a 414 problem on API hosts and "414 Address too long" on workspace hosts', async () => {
  assertProblemAnswer(await raw(longAddress(apiHost())), 414, 'uri-too-long');
  assertPageLine(await raw(longAddress(workspaceHost())), '414 Address too long');
});

test("every answer carries Svc-Version: router pages and a replica's answer too", async () => {
  assertPageLine(await raw(`GET / HTTP/1.1\r\nHost: ${workspaceHost()}`), '401 Sign-in required: send an API key: curl -H "Svc-Authorization: Bearer <key>" URL');
  assertPageLine(await raw(`GET / HTTP/1.1\r\nHost: nothing.localhost`), '404 Nothing here');
  const served = await raw(`GET /hello HTTP/1.1\r\nHost: ${workspaceHost()}\r\nSvc-Authorization: Bearer ${workspace.key}`);
  assert.equal(served.status, 200);
  assert.equal(served.body, 'web saw /hello');
  assert.equal(served.headers['svc-version'], SERVER_VERSION);
  // Upgrades: refused by the router, and passed on by an upstream that answers them as a plain request.
  const upgrade = `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==`;
  const refused = await raw(`GET /ws HTTP/1.1\r\nHost: ${workspaceHost()}\r\n${upgrade}`);
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['svc-version'], SERVER_VERSION);
  const passed = await raw(`GET /ws HTTP/1.1\r\nHost: ${workspaceHost()}\r\nSvc-Authorization: Bearer ${workspace.key}\r\n${upgrade}`);
  assert.equal(passed.body, 'web saw /ws');
  assert.equal(passed.headers['svc-version'], SERVER_VERSION);
  const version = await new Promise<http.IncomingMessage>((resolve) => http.get({ port, path: '/api/v1/version', agent: false }, resolve));
  assert.equal(version.headers['svc-version'], SERVER_VERSION);
  version.resume();
});
