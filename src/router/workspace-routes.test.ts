import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { hostTarget } from './hosts.ts';
import { landscapeRoutes } from './routes.ts';
import { answerableWhileWaking, serviceAnswerableWhileWaking, type ServiceState, type WorkspaceRouting } from './workspace-routes.ts';

const landscape = normalizeLandscape(
  parseLandscape(`schema: svc/v1
services:
  web:
    type: steps
    steps: [{ run: web }]
    ports:
      - port: 8080
        public: true
        routes: [{ path: / }]
  api:
    type: steps
    steps: [{ run: api }]
    ports:
      - port: 3000
        public: true
        routes: [{ path: /api }]
  lazy:
    type: steps
    steps: [{ run: lazy }]
    ports:
      - port: 4000
        routes: [{ path: /lazy }]
  off:
    type: steps
    steps: [{ run: off }]
    ports:
      - port: 5000
        routes: [{ path: /off }]
  docs:
    type: forward
    target: https://docs.example.com/base
    routes: [{ path: /docs }]
`).landscape!,
);

// A workspace waking up: web has a ready replica, api still starts, lazy sleeps until a request, off is switched off.
const waking: WorkspaceRouting = {
  row: { id: 12, state: 'waking_up' } as WorkspaceRow,
  routes: landscapeRoutes(landscape),
  services: new Map<string, ServiceState>([
    ['web', { status: 'running', running: true, ready: ['10.0.0.2'] }],
    ['api', { status: 'starting', running: true, ready: [] }],
    ['lazy', { status: 'sleeping', running: true, ready: [] }],
    ['off', { status: 'stopped', running: false, ready: [] }],
  ]),
};
const at = (host: string, url: string) => answerableWhileWaking(waking, hostTarget(host, 'localhost', 'console'), url);

test('a waking workspace answers what does not wait for its editor: ready services, forwards, stopped services', () => {
  assert.equal(at('w12.localhost', '/'), true, 'web has a ready replica');
  assert.equal(at('w12-8080.localhost', '/x'), true, "web's public port");
  assert.equal(at('w12.localhost', '/docs/a'), true, 'a forward route waits for nothing of the workspace');
  assert.equal(at('w12.localhost', '/off'), true, 'a stopped service says so at once');
  assert.equal(serviceAnswerableWhileWaking(waking, 'web'), true);
});

test('a waking workspace holds the editor, services still starting, services asleep and addresses nothing serves', () => {
  assert.equal(at('ide-w12.localhost', '/'), false, 'the editor host waits for the editor');
  assert.equal(at('w12.localhost', '/api/x'), false, 'api has no ready replica yet');
  assert.equal(at('w12-3000.localhost', '/'), false, "api's public port");
  assert.equal(at('w12.localhost', '/lazy'), false, 'an asleep on-demand service wakes once the workspace runs');
  assert.equal(at('w12-9999.localhost', '/'), false, 'no service publishes the port: the wake shows first');
  const bare: WorkspaceRouting = { row: waking.row, routes: landscapeRoutes(undefined), services: new Map() };
  assert.equal(answerableWhileWaking(bare, hostTarget('w12.localhost', 'localhost', 'console'), '/'), false, 'no landscape: the dev URL waits for Running');
  assert.equal(serviceAnswerableWhileWaking(waking, 'api'), false);
});
