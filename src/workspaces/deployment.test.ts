import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape, planLandscape, servicesToRestart, type NormalLandscape } from '../landscape/index.ts';
import type { ReplicaObservation } from '../runtime/driver.ts';
import { devService, devUrlState, needsOrder, replicaSpecs, servicesToSleep, serviceViews, withNeeds } from './deployment.ts';

function landscapeOf(text: string): NormalLandscape {
  const parsed = parseLandscape(text);
  assert.deepEqual(parsed.errors, []);
  return normalizeLandscape(parsed.landscape!);
}

const file = `schema: svc/v1
services:
  web:
    type: steps
    needs: [api]
    steps: [{ run: node web.js }]
    ports: [{ port: 8080, routes: [{ path: / }] }]
  api:
    type: steps
    replicas: 2
    needs: [db]
    steps: [{ run: make }, { run: ./api }]
    ports: [{ port: 3000 }]
    health: { port: 3000, path: /health, mode: http-2xx }
    mounts: [{ from: config, to: /etc/api }]
  db:
    type: steps
    steps: [{ run: ./db }]
    ports: [{ port: 5432 }]
  docs:
    type: forward
    target: https://example.com
    routes: [{ path: /docs }]
`;

test('needs come first, and withNeeds follows them transitively', () => {
  const landscape = landscapeOf(file);
  const order = needsOrder(landscape);
  assert.ok(order.indexOf('db') < order.indexOf('api') && order.indexOf('api') < order.indexOf('web'));
  assert.deepEqual([...withNeeds(landscape, ['web'])].sort(), ['api', 'db', 'web']);
  assert.deepEqual([...withNeeds(landscape, ['db'])], ['db']);
});

test('replica specs: one per replica, needs by health check else first port, the env of the Sync', () => {
  const landscape = landscapeOf(file);
  const api = replicaSpecs(landscape, 'api', { api: { A: '1' } });
  assert.deepEqual(api.map((s) => s.index), [0, 1]);
  assert.deepEqual(api[0].needs, [{ name: 'db', port: 5432 }]);
  assert.deepEqual(api[0].env, { A: '1' });
  assert.deepEqual(api[0].mounts, [{ from: 'config', to: '/etc/api' }]);
  assert.deepEqual(replicaSpecs(landscape, 'web', {})[0].needs, [{ name: 'api', port: 3000, healthPath: '/health', healthMode: 'http-2xx' }]);
  assert.deepEqual(replicaSpecs(landscape, 'docs', {}), []);
});

const seen = (service: string, index: number, status: ReplicaObservation['status'], extra: Partial<ReplicaObservation> = {}): ReplicaObservation => ({
  service, index, status, ready: status === 'running', restarts: 0, ...extra,
});

test('statuses of 3.2 from what the driver sees', () => {
  const landscape = landscapeOf(file);
  const views = (observed: ReplicaObservation[], extra: Partial<Parameters<typeof serviceViews>[0]> = {}) =>
    Object.fromEntries(serviceViews({ landscape, tornDown: false, workspaceState: 'running', stopped: new Set(), observed, ...extra }).map((v) => [v.name, v]));
  const running = views([seen('api', 0, 'running'), seen('api', 1, 'starting'), seen('web', 0, 'running'), seen('db', 0, 'running')]);
  assert.equal(running.api.status, 'starting');
  assert.deepEqual(running.api.replicas, { ready: 1, desired: 2 });
  assert.equal(running.web.status, 'running');
  assert.equal(running.db.status, 'internal');
  assert.equal(running.docs.status, 'running');
  assert.equal(running.docs.detail, 'no pods, the router forwards');
  const failed = views([seen('api', 0, 'failure', { detail: 'Step exited with code 2' }), seen('api', 1, 'running')]);
  assert.deepEqual([failed.api.status, failed.api.detail], ['failure', 'Step exited with code 2']);
  assert.equal(failed.web.status, 'pending');
  assert.equal(views([seen('db', 0, 'finished', { detail: 'done' })]).db.status, 'finished');
  assert.equal(views([], { stopped: new Set(['web']) }).web.status, 'stopped');
  assert.equal(views([], { tornDown: true }).api.status, 'stopped');
  assert.equal(views([], { workspaceState: 'sleeping' }).api.detail, 'Asleep with the workspace; 2 replica(s) come back when woken');
});

test('Sync restarts what changed beyond scaling, and services whose filled env changed', () => {
  const before = landscapeOf(file);
  const scaled = landscapeOf(file.replace('replicas: 2', 'replicas: 3'));
  const changed = landscapeOf(file.replace('./db', './db --fast'));
  assert.deepEqual([...servicesToRestart(planLandscape(before, scaled))], []);
  assert.deepEqual([...servicesToRestart(planLandscape(before, changed))], ['db']);
  assert.deepEqual([...servicesToRestart(planLandscape(before, before, { before: { web: { A: '1' } }, after: { web: { A: '2' } } }))], ['web']);
});

test('the dev URL state follows the workspace, then the service that serves /', () => {
  const landscape = landscapeOf(file);
  const views = (status: string) => [{ name: 'web', type: 'steps', status, running: true, replicas: { ready: 0, desired: 1 } }];
  assert.equal(devUrlState(landscape, false, 'sleeping', []).state, 'asleep');
  assert.equal(devUrlState(landscape, false, 'waking_up', []).state, 'waking-up');
  assert.equal(devUrlState(landscape, false, 'running', views('running')).state, 'served');
  assert.equal(devUrlState(landscape, false, 'running', views('starting')).state, 'starting');
  assert.equal(devUrlState(landscape, false, 'running', views('failure')).state, 'failed');
  assert.equal(devUrlState(landscape, false, 'running', views('stopped')).state, 'stopped');
  assert.deepEqual(devUrlState(landscape, true, 'running', []), { state: 'not-served', detail: 'Nothing is served at / yet' });
  assert.equal(devUrlState(undefined, false, 'running', []).state, 'not-served');
});

test('dev_service: the service serving / with its needs (transitively, needs first) and those failing; none without one', () => {
  const landscape = landscapeOf(file);
  const views = serviceViews({ landscape, tornDown: false, workspaceState: 'running', stopped: new Set(), observed: [seen('web', 0, 'running'), seen('db', 0, 'failure', { detail: 'exit 1' })] });
  assert.deepEqual(devService(landscape, false, views, 7), { name: 'web', state: 'running', wake_seconds: 7, needs: ['db', 'api'], failing_needs: ['db'] });
  const asleep = serviceViews({ landscape, tornDown: false, workspaceState: 'sleeping', stopped: new Set(), observed: [] });
  assert.equal(devService(landscape, false, asleep, 7)?.state, 'sleeping');
  assert.equal(devService(landscape, true, views, 7), undefined);
  assert.equal(devService(landscapeOf(file.replace('routes: [{ path: / }]', 'routes: [{ path: /web }]')), false, views, 7), undefined);
  assert.equal(devService(undefined, false, [], 7), undefined);
});

test('idle on-demand services sleep, except those an awake service needs', () => {
  const landscape = landscapeOf(`schema: svc/v1
services:
  web:
    type: steps
    availability: on-demand
    idleTimeoutMinutes: 5
    needs: [api]
    steps: [{ run: web }]
  api:
    type: steps
    availability: on-demand
    idleTimeoutMinutes: 5
    steps: [{ run: api }]
  admin:
    type: steps
    needs: [api]
    steps: [{ run: admin }]
`);
  const minutesAgo = (m: number) => 60 * 60_000 - m * 60_000;
  const input = (web: number, api: number, stopped: string[] = []) => ({
    stopped: new Set(stopped),
    asleep: new Set<string>(),
    lastRequestMs: new Map([['web', minutesAgo(web)], ['api', minutesAgo(api)]]),
    nowMs: 60 * 60_000,
  });
  assert.deepEqual(servicesToSleep(landscape, input(10, 10)), ['web'], 'admin (always) keeps api awake');
  assert.deepEqual(servicesToSleep(landscape, input(10, 10, ['admin'])).sort(), ['api', 'web']);
  assert.deepEqual(servicesToSleep(landscape, input(1, 10, ['admin'])), [], 'an awake web keeps api');
  assert.deepEqual(servicesToSleep(landscape, input(4, 4)), []);
  const views = serviceViews({ landscape, tornDown: false, workspaceState: 'running', stopped: new Set(), asleep: new Set(['web']), observed: [] });
  assert.equal(views.find((v) => v.name === 'web')!.status, 'sleeping');
});
