// Normal form and comparison: formatting, key order, quoting, comments and x- keys do not change a landscape;
// a changed port does. And the plan of a Sync built from two normal forms.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compareLandscapes, landscapeHash, normalizeLandscape, type LandscapeVersion } from './normal-form.ts';
import { parseLandscape } from './parse-landscape.ts';
import { planLandscape, servicesToRestart } from './plan.ts';
import { defaultLandscapeDefaults, type LandscapeDefaults } from './types.ts';

const original = `schema: svc/v1
prepare:
  - run: npm ci
services:
  web:
    type: steps
    env:
      PORT: 8080
    ports:
      - port: 8080
        routes:
          - path: /
    steps:
      - run: npm start
  db:
    type: managed
    provider: postgresql
    resources:
      memory: 1Gi
`;

const reformatted = `# The same landscape, written differently.
services:
  db: {provider: "postgresql", type: managed, resources: {memory: 1024}, x-owner: me}
  web:
    x-note: reordered keys, flow style, quotes
    steps: [{run: 'npm start'}]
    ports: [{routes: [{path: "/", strip: false}], port: 8080, public: false}]
    env: {PORT: "8080"}
    type: "steps"
    replicas: 1

x-anchors: &unused {a: 1}
prepare: [{run: npm ci}]
schema: "svc/v1"
`;

const version = (text: string, defaults: LandscapeDefaults = defaultLandscapeDefaults): LandscapeVersion => {
  const { landscape, errors } = parseLandscape(text, { defaults });
  assert.deepEqual(errors, []);
  return { text, normal: normalizeLandscape(landscape!, defaults) };
};

describe('comparing landscapes', () => {
  test('the same text is the same', () => {
    assert.equal(compareLandscapes(version(original), version(original)), 'same');
  });

  test('reformatting, reordering keys, quoting, defaults written out and x- keys are formatting only', () => {
    assert.equal(compareLandscapes(version(original), version(reformatted)), 'formatting-only');
    assert.equal(landscapeHash(version(original).normal), landscapeHash(version(reformatted).normal));
  });

  test('a changed port is a change', () => {
    const changed = original.replace('- port: 8080', '- port: 8081');
    assert.equal(compareLandscapes(version(original), version(changed)), 'changed');
  });

  test('reordering list entries is a change (lists keep their order)', () => {
    const swapped = original.replace('prepare:\n  - run: npm ci', 'prepare:\n  - run: npm test\n  - run: npm ci');
    assert.equal(compareLandscapes(version(original), version(swapped)), 'changed');
  });

  test('defaults come from the installation: another default plan changes the normal form', () => {
    const other: LandscapeDefaults = { ...defaultLandscapeDefaults, servicePlan: 'large', servicePlans: { large: { maxReplicas: 20, availability: 'on-demand' } } };
    const web = version(original, other).normal.services.web;
    assert.deepEqual(web.type === 'steps' && [web.plan, web.maxReplicas, web.availability, web.idleTimeoutMinutes], ['large', 20, 'on-demand', 30]);
    assert.notEqual(landscapeHash(version(original).normal), landscapeHash(version(original, other).normal));
  });

  test('the normal form has every default filled in', () => {
    assert.deepEqual(version(original).normal, {
      schema: 'svc/v1',
      prepare: [{ run: 'npm ci' }],
      test: [],
      services: {
        web: {
          type: 'steps',
          plan: 'standard',
          replicas: 1,
          maxReplicas: 10,
          availability: 'always',
          idleTimeoutMinutes: 30,
          env: { PORT: '8080' },
          ports: [{ port: 8080, public: false, routes: [{ path: '/', strip: false }] }],
          mounts: [],
          needs: [],
          steps: [{ run: 'npm start' }],
          nixWritable: false,
        },
        db: { type: 'managed', provider: 'postgresql', resources: { memory: 1024 }, config: {}, secrets: {}, backups: true },
      },
    });
  });
});

describe('planning a Sync', () => {
  const before = version(original).normal;

  test('a first Sync creates every service and runs the new prepare steps', () => {
    const plan = planLandscape(null, before);
    assert.deepEqual(plan.services.map((s) => [s.name, s.action, s.type]), [['db', 'create', 'managed'], ['web', 'create', 'steps']]);
    assert.deepEqual(plan.prepare, { changed: true, changes: ['/prepare'] });
    assert.deepEqual(plan.test, { changed: false, changes: [] });
    assert.equal(plan.changed, true);
  });

  test('nothing to do when nothing changed, whatever the formatting', () => {
    const plan = planLandscape(before, version(reformatted).normal);
    assert.deepEqual([plan.services, plan.unchanged, plan.changed], [[], ['db', 'web'], false]);
  });

  test('changes name the changed fields as JSON Pointers; removed and replaced services are told apart', () => {
    const next = version(`schema: svc/v1
prepare:
  - run: npm ci --omit=dev
services:
  web:
    type: steps
    replicas: 2
    env: {PORT: 8081, NEW: x}
    ports: [{port: 8081, routes: [{path: /}]}]
    steps: [{run: npm start}]
  db:
    type: managed
    provider: mysql
  worker:
    type: container
    image: busybox:1
`).normal;
    const plan = planLandscape(before, next);
    assert.deepEqual(plan.services, [
      { name: 'db', action: 'replace', type: 'managed', previousType: 'managed', changes: ['/services/db/provider', '/services/db/resources/memory'], environment: [], restarts: true },
      {
        name: 'web',
        action: 'change',
        type: 'steps',
        changes: ['/services/web/env/NEW', '/services/web/env/PORT', '/services/web/ports/0/port', '/services/web/replicas'],
        environment: [],
        restarts: true,
      },
      { name: 'worker', action: 'create', type: 'container', changes: ['/services/worker'], environment: [], restarts: true },
    ]);
    assert.deepEqual(plan.prepare, { changed: true, changes: ['/prepare/0/run'] });
    const removal = planLandscape(next, before);
    assert.deepEqual(removal.services.find((s) => s.name === 'worker'), { name: 'worker', action: 'remove', type: 'container', changes: ['/services/worker'], environment: [], restarts: false });
  });

  test('a service whose filled-in environment changed is a change that restarts it, naming the variables only', () => {
    const environments = { before: { web: { PORT: '8080', APP_KEY: 'old-secret', GONE: '1' } }, after: { web: { PORT: '8080', APP_KEY: 'new-secret', ADDED: '' } } };
    const plan = planLandscape(before, before, environments);
    assert.deepEqual(plan.services, [
      {
        name: 'web',
        action: 'change',
        type: 'steps',
        changes: ['/services/web/env/ADDED', '/services/web/env/APP_KEY', '/services/web/env/GONE'],
        environment: ['ADDED', 'APP_KEY', 'GONE'],
        restarts: true,
      },
    ]);
    assert.deepEqual([plan.unchanged, plan.changed], [['db'], true]);
    assert.doesNotMatch(JSON.stringify(plan), /secret/);
    assert.deepEqual([...servicesToRestart(plan)], ['web']);
  });

  test('the same environments change nothing; scaling alone does not restart', () => {
    const same = { before: { web: { PORT: '8080' } }, after: { web: { PORT: '8080' } } };
    assert.equal(planLandscape(before, before, same).changed, false);
    assert.equal(planLandscape(before, before, same).hash, planLandscape(before, before).hash);
    const scaled = planLandscape(before, version(original.replace('type: steps', 'type: steps\n    replicas: 3')).normal, same);
    assert.deepEqual(scaled.services.map((s) => [s.name, s.restarts]), [['web', false]]);
  });

  test('environment names join the hash, so a Sync after a variable changed answers plan-changed', () => {
    const changed = { before: { web: { A: '1' } }, after: { web: { A: '2' } } };
    assert.notEqual(planLandscape(before, before, changed).hash, planLandscape(before, before).hash);
  });

  test('the hash is stable for the same landscapes and moves when either side changes', () => {
    const again = version(reformatted).normal;
    assert.equal(planLandscape(before, again).hash, planLandscape(before, before).hash);
    assert.match(planLandscape(before, before).hash, /^[0-9a-f]{64}$/);
    assert.notEqual(planLandscape(null, before).hash, planLandscape(before, before).hash);
    const changed = version(original.replace('8080\n    ports', '8081\n    ports')).normal;
    assert.notEqual(planLandscape(before, changed).hash, planLandscape(before, before).hash);
  });
});
