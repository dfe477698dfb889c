import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import { hostTarget } from './hosts.ts';
import { landscapeRoutes, matchRoute } from './routes.ts';

const landscape = normalizeLandscape(
  parseLandscape(`schema: svc/v1
services:
  web:
    type: steps
    steps: [{ run: web }]
    ports:
      - port: 8080
        routes: [{ path: / }]
      - port: 9000
        public: true
  api:
    type: steps
    steps: [{ run: api }]
    ports:
      - port: 3000
        routes: [{ path: /api, strip: true }, { path: /api/v2/admin }]
  docs:
    type: forward
    target: https://docs.example.com/base
    routes: [{ path: /docs }]
`).landscape!,
);

test('longest prefix wins on segment boundaries; strip removes the prefix and keeps the query', () => {
  const { dev } = landscapeRoutes(landscape);
  const where = (target: string) => {
    const match = matchRoute(dev, target);
    return match && [match.route.target.service, match.upstreamTarget];
  };
  assert.deepEqual(where('/api'), ['api', '/']);
  assert.deepEqual(where('/api/x?y=1'), ['api', '/x?y=1']);
  assert.deepEqual(where('/apix'), ['web', '/apix']);
  assert.deepEqual(where('/api/v2/admin/users'), ['api', '/api/v2/admin/users']);
  assert.deepEqual(where('/api/v2/adminx'), ['api', '/v2/adminx']);
  assert.deepEqual(where('/docs'), ['docs', '/docs']);
  assert.deepEqual(where('/'), ['web', '/']);
  assert.equal(matchRoute(dev.filter((r) => r.path !== '/'), '/other'), undefined);
});

test('public ports by number', () => {
  assert.deepEqual([...landscapeRoutes(landscape).publicPorts], [[9000, { service: 'web', port: 9000 }]]);
  assert.deepEqual(landscapeRoutes(undefined).dev, []);
});

test('hosts: editor, dev URL, public port, unknown names, the console', () => {
  const target = (host: string) => hostTarget(host, 'localhost', '127.0.0.1');
  assert.deepEqual(target('w12.localhost:8080'), { kind: 'dev', workspaceId: 12 });
  assert.deepEqual(target('IDE-W12.localhost'), { kind: 'ide', workspaceId: 12 });
  assert.deepEqual(target('w12-3000.localhost.'), { kind: 'public-port', workspaceId: 12, port: 3000 });
  assert.deepEqual(target('w12-70000.localhost'), { kind: 'unknown-workspace-host' });
  assert.deepEqual(target('w012.localhost'), { kind: 'unknown-workspace-host' });
  assert.deepEqual(target('ide-w1-80.localhost'), { kind: 'unknown-workspace-host' });
  assert.deepEqual(target('x.localhost'), { kind: 'unknown-workspace-host' });
  assert.deepEqual(target('127.0.0.1:8080'), { kind: 'console' });
  assert.deepEqual(target('example.com'), { kind: 'console' });
  assert.deepEqual(hostTarget('localhost:8080', 'localhost', 'localhost'), { kind: 'console' });
  assert.deepEqual(target(undefined as unknown as string), { kind: 'console' });
});
