// The CLI's pure formatting: problems with their positions, the plan as a diff, tables, events, versions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeUrl, versionsDiffer } from './api.ts';
import { formatEvent } from './events.ts';
import { formatPlan, type Plan } from './landscape.ts';
import { formatProblem, logTime, pointerPath, table } from './output.ts';
import { formatSwitched } from './services.ts';
import { gitProvider } from './workspaces.ts';

test('a problem prints as title: detail, then each error with its pointer or its file:line:column', () => {
  const text = formatProblem(
    {
      type: 'urn:svc:problem:invalid-landscape',
      title: 'The landscape file has errors',
      status: 422,
      detail: 'svc.ci.yml has 2 errors.',
      errors: [
        { pointer: '/services/web/replicas', message: 'must be at least 1', line: 5, column: 15, code: 'minimum' },
        { pointer: '/profile', message: 'is not a profile name', in: 'query' },
        { pointer: '/name', message: 'is required', in: 'body' },
      ],
    },
    'svc.ci.yml',
  );
  assert.equal(
    text,
    'The landscape file has errors: svc.ci.yml has 2 errors.\n' +
      '  svc.ci.yml:5:15: minimum: must be at least 1\n' +
      '  query /profile: is not a profile name\n' +
      '  /name: is required\n',
  );
  assert.equal(formatProblem({ type: 'x', title: 'Not found', status: 404 }), 'Not found\n');
});

test("a validation problem's detail that only repeats its errors is left out", () => {
  const errors = [{ pointer: '/name', message: 'must be a variable name: letters, digits and _', in: 'path' }];
  const repeated = { type: 'urn:svc:problem:validation', title: 'Invalid input', status: 422, detail: '/name must be a variable name: letters, digits and _', errors };
  assert.equal(formatProblem(repeated), 'Invalid input\n  path /name: must be a variable name: letters, digits and _\n');
  assert.equal(formatProblem({ ...repeated, detail: 'SVC_X is reserved.' }), 'Invalid input: SVC_X is reserved.\n  path /name: must be a variable name: letters, digits and _\n');
});

test('a log line time: local HH:MM:SS.mmm today, the date in front on other days', () => {
  const at = new Date(2026, 4, 1, 9, 5, 7, 42);
  assert.equal(logTime(at.toISOString(), new Date(2026, 4, 1, 23, 0)), '09:05:07.042');
  assert.equal(logTime(at.toISOString(), new Date(2026, 4, 2, 0, 1)), '2026-05-01 09:05:07.042');
  assert.equal(logTime('not a time'), 'not a time');
});

test('a switched service: its status, readiness and run switch', () => {
  const view = { name: 'web', type: 'steps', status: 'starting', running: true, replicas: { ready: 0, desired: 2 } };
  assert.equal(formatSwitched(view), 'web: starting, 0/2 ready; its run switch is on.\n');
  assert.equal(formatSwitched({ ...view, status: 'stopped', running: false, replicas: { ready: 0, desired: 0 } }), 'web: stopped; its run switch is off.\n');
});

test('the plan shows + create, ~ change with the changed fields, - remove, -/+ replace, stage changes', () => {
  const plan: Plan = {
    profile: null,
    hash: 'a'.repeat(64),
    changed: true,
    services: [
      { name: 'api', action: 'create', type: 'steps', changes: ['/services/api'], environment: [], restarts: false },
      { name: 'web', action: 'change', type: 'steps', changes: ['/services/web/ports/0/port', '/services/web/env/GREETING'], environment: [], restarts: false },
      { name: 'db', action: 'replace', type: 'container', previousType: 'managed', changes: ['/services/db/type'], environment: [], restarts: false },
      { name: 'old', action: 'remove', type: 'forward', changes: ['/services/old'], environment: [], restarts: false },
    ],
    unchanged: ['cache'],
    prepare: { changed: true, changes: ['/prepare/0/run'] },
    test: { changed: true, changes: ['/test'] },
    images: [],
  };
  assert.equal(
    formatPlan(plan),
    '+ api (steps)\n~ web (steps): ports[0].port, env.GREETING\n-/+ db (managed -> container, replaced: type)\n- old (forward)\n' +
      '~ prepare: steps[0].run\n~ test: steps\n  unchanged: cache\n',
  );
  const restarts: Plan = {
    ...plan,
    services: [
      { name: 'api', action: 'change', type: 'steps', changes: ['/services/api/env/APP_KEY'], environment: ['APP_KEY'], restarts: true },
      { name: 'web', action: 'change', type: 'steps', changes: ['/services/web/replicas', '/services/web/env/A'], environment: ['A', 'B'], restarts: true },
      { name: 'db', action: 'change', type: 'steps', changes: ['/services/db/replicas'], environment: [], restarts: false },
    ],
  };
  assert.equal(
    formatPlan(restarts).split('\n').slice(0, 3).join('\n'),
    '~ api (steps), restarts: environment APP_KEY changed\n~ web (steps), restarts: replicas, environment A, B changed\n~ db (steps): replicas',
  );
  const none: Plan = { ...plan, changed: false, services: [], prepare: { changed: false, changes: [] }, test: { changed: false, changes: [] } };
  assert.equal(formatPlan(none), '  (no changes)\n  unchanged: cache\n');
  const digest = (c: string) => `sha256:${c.repeat(64)}`;
  const images: Plan = {
    ...none,
    images: [
      { service: 'api', image: 'team/api:2', digest: digest('a') },
      { service: 'web', image: 'web:1', digest: digest('b'), deployed_digest: digest('c') },
      { service: 'db', image: 'db:9', digest: null, problem: { detail: 'db:9: the registry has no image library/db:9' } },
    ],
  };
  assert.equal(
    formatPlan(images),
    `  (no changes)\n  unchanged: cache\n  image of api: team/api:2 → ${digest('a')}\n  image of web: web:1 → ${digest('b')} (runs ${digest('c')} now)\n` +
      '  image of db: db:9 → cannot be resolved: db:9: the registry has no image library/db:9\n',
  );
});

test('pointers read as paths; odd keys are quoted', () => {
  assert.equal(pointerPath('/services/web/env/a~1b', '/services/web'), 'env."a/b"');
  assert.equal(pointerPath('/0/run'), '[0].run');
  assert.equal(pointerPath('/services/web', '/services/web'), '');
});

test('tables pad every column but the last', () => {
  assert.equal(table(['ID', 'NAME', 'STATE'], [[1, 'shop', 'running'], [12, 'a', undefined]]), 'ID  NAME  STATE\n1   shop  running\n12  a\n');
});

test('an event is one line: time, type, ids and what it says', () => {
  const at = '2025-06-01T12:00:01.000Z';
  const line = formatEvent({ type: 'workspace.updated', at, team_id: 3, workspace_id: 12, workspace: { name: 'shop', state: 'running', status_detail: 'Workspace is running' } });
  assert.match(line, /^\d\d:\d\d:01 {2}workspace\.updated {2}team 3 ws 12 {2}shop: running \(Workspace is running\)\n$/);
  assert.match(formatEvent({ type: 'ready', at }), /ready {2}connected: events from now on\n$/);
  assert.match(formatEvent({ type: 'stage.updated', at, workspace_id: 12, stage: 'prepare', run_id: 4 }), /stage\.updated {2}ws 12 {2}prepare run 4\n$/);
});

test('versions differ by major or minor, not by patch', () => {
  assert.equal(versionsDiffer('1.5.0', '1.5.7'), false);
  assert.equal(versionsDiffer('1.5.0', '1.6.0'), true);
  assert.equal(versionsDiffer('1.5.0', 'v2.5.0'), true);
});

test('addresses are made canonical; the git provider is read from the host', () => {
  assert.equal(normalizeUrl('svc.example.com/'), 'https://svc.example.com');
  assert.equal(normalizeUrl('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080');
  assert.throws(() => normalizeUrl('ftp://x'), /not an http or https address/);
  assert.equal(gitProvider('https://github.com/acme/shop.git'), 'github');
  assert.equal(gitProvider('git@gitlab.example.com:acme/shop.git'), 'gitlab');
  assert.equal(gitProvider('file:///srv/repo.git'), 'git');
});
