import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { hostTarget } from './hosts.ts';
import { directRouteFor, workspaceLines, workspaceMap } from './nginx-map.ts';
import { landscapeRoutes, matchRoute } from './routes.ts';
import type { ServiceState, WorkspaceRouting } from './workspace-routes.ts';

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
  lazy:
    type: steps
    steps: [{ run: lazy }]
    ports:
      - port: 4000
        routes: [{ path: /lazy, strip: true }]
  docs:
    type: forward
    target: https://docs.example.com/base
    routes: [{ path: /docs }]
`).landscape!,
);

const ready = (...hosts: string[]): ServiceState => ({ status: 'running', running: true, ready: hosts });
const routing = (state = 'running'): WorkspaceRouting => ({
  row: { id: 12, state } as WorkspaceRow,
  routes: landscapeRoutes(landscape),
  services: new Map([
    ['web', ready('10.0.0.2', '10.0.0.3')],
    ['api', ready('10.0.0.4')],
    ['lazy', { status: 'sleeping', running: true, ready: [] }],
  ]),
});

/** What nginx does with the map (PCRE and JS agree on these patterns): the first matching line wins. */
function lookup(lines: [string, string][], key: string): string | undefined {
  for (const [pattern, value] of lines) {
    const match = new RegExp(pattern.slice(1)).exec(key);
    if (match) return value.replace(/\$(svc_t)/g, (_, name: string) => match.groups?.[name] ?? '');
  }
  return undefined;
}

test('the map sends each path where the router would, strip and segment boundaries included', () => {
  const r = routing();
  const { route, target } = workspaceLines(r, 'localhost');
  for (const uri of ['/', '/x?y=1', '/api', '/api?q=1', '/api/items?page=2', '/apix', '/api/v2/admin/x', '/docs/a', '/lazy/x']) {
    const match = matchRoute(r.routes.dev, uri)!;
    const name = lookup(route, `w12.localhost${uri}`);
    assert.equal(name || undefined, directRouteFor(r, hostTarget('w12.localhost', 'localhost', 'console'), uri), uri);
    if (name) assert.equal(lookup(target, `w12.localhost${uri}`), match.upstreamTarget, uri);
  }
  assert.match(lookup(route, 'w12-9000.localhost/p?q')!, /^svc_w12_web_9000_/);
  assert.equal(lookup(target, 'w12-9000.localhost/p?q'), '/p?q');
  assert.equal(lookup(route, 'w12-8080.localhost/'), undefined, 'an unpublished port is left to svc');
});

test('forward routes, sleeping services and workspaces not running are left to svc', () => {
  const { route } = workspaceLines(routing(), 'localhost');
  assert.equal(lookup(route, 'w12.localhost/docs/a'), '');
  assert.equal(lookup(route, 'w12.localhost/lazy/a'), '');
  assert.equal(workspaceLines(routing('sleeping'), 'localhost').route.length, 0);
});

test('an upstream group lists every ready replica and is renamed when they change', () => {
  const before = workspaceMap([routing()], 'localhost');
  assert.match(before, /upstream svc_w12_web_8080_\w+ \{ server 10\.0\.0\.2:8080; server 10\.0\.0\.3:8080; keepalive 256; \}/);
  const changed = routing();
  changed.services.set('web', ready('10.0.0.2'));
  const name = (text: string) => /svc_w12_web_8080_\w+/.exec(text)![0];
  assert.notEqual(name(workspaceMap([changed], 'localhost')), name(before));
});
