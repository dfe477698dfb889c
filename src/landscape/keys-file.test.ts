// Table-driven tests of the top-level keys, steps, managed and forward services of svc.yml: each case is a
// whole file, its expected code, pointer, line and column (1-based, of the offending key or value, or of the
// key holding a map that misses a required key).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LandscapeErrorCode } from './codes.ts';
import { landscapeProblem, parseLandscape } from './parse-landscape.ts';

type Expected = [code: LandscapeErrorCode, pointer: string, line: number, column: number, subject?: string];

const top = (rest: string): string => `schema: svc/v1\n${rest}`;
const managed = (body: string): string => top(`services:\n  db:\n    type: managed\n    provider: postgresql\n${body}`);
const forward = (body: string): string => top(`services:\n  fwd:\n    type: forward\n${body}`);
const fwdRoutes = '    routes: [{path: /api}]\n';

const cases: Record<string, Record<string, [text: string, expected?: Expected]>> = {
  schema: {
    valid: ['schema: svc/v1\n'],
    missing: ['services: {}\n', ['required', '/schema', 1, 1, 'schema']],
    'other version': ['schema: svc/v2\n', ['enum', '/schema', 1, 9, 'schema']],
    'not text': ['schema: 1\n', ['type', '/schema', 1, 9, 'schema']],
  },
  'top level': {
    'x- keys are ignored': [top('x-notes: anything\nx-anchors: &a {b: 1}\n')],
    'unknown key': [top('servics: {}\n'), ['unknown-key', '/servics', 2, 1, 'servics']],
    'empty file': ['', ['type', '', 1, 1, '']],
    'a list': ['- a\n', ['type', '', 1, 1, '']],
  },
  prepare: {
    valid: [top('prepare:\n  - name: install\n    run: npm ci\n  - run: |\n      make\n      make test\n')],
    'not a list': [top('prepare: npm ci\n'), ['type', '/prepare', 2, 10, 'prepare']],
    'run missing': [top('prepare:\n  - name: x\n'), ['required', '/prepare/0/run', 3, 5, 'run']],
    'empty run': [top('prepare:\n  - run: ""\n'), ['too-short', '/prepare/0/run', 3, 10, 'prepare']],
    'empty name': [top('prepare:\n  - name: ""\n    run: x\n'), ['too-short', '/prepare/0/name', 3, 11, 'prepare']],
    'name too long': [top(`prepare:\n  - name: ${'n'.repeat(101)}\n    run: x\n`), ['too-long', '/prepare/0/name', 3, 11, 'prepare']],
    'unknown step key': [top('prepare:\n  - cmd: x\n    run: x\n'), ['unknown-key', '/prepare/0/cmd', 3, 5, 'cmd']],
    'template in a step': [top('prepare:\n  - run: echo ${{ env.X }}\n'), ['template-not-allowed', '/prepare/0/run', 3, 10, 'prepare']],
  },
  test: {
    valid: [top('test:\n  - run: npm test\n')],
    'step not a map': [top('test:\n  - npm test\n'), ['type', '/test/0', 3, 5, 'test']],
  },
  services: {
    valid: [top('services: {}\n')],
    'a list': [top('services: [web]\n'), ['type', '/services', 2, 11, 'services']],
    'bad name': [top('services:\n  Web:\n    type: forward\n'), ['pattern', '/services/Web', 3, 3, 'Web']],
    'name too long': [top(`services:\n  ${'s'.repeat(33)}: {type: managed, provider: p}\n`), ['pattern', `/services/${'s'.repeat(33)}`, 3, 3]],
    'name ending in a dash': [top('services:\n  web-: {type: managed, provider: p}\n'), ['pattern', '/services/web-', 3, 3, 'web-']],
    'not a map': [top('services:\n  web: steps\n'), ['type', '/services/web', 3, 8, 'web']],
    'type missing': [top('services:\n  web:\n    replicas: 1\n'), ['required', '/services/web/type', 3, 3, 'type']],
    'duplicate service': [top('services:\n  web: {type: managed, provider: p}\n  web: {type: managed, provider: q}\n'), ['duplicate-key', '/services/web', 4, 3, 'web']],
  },
  provider: {
    missing: [top('services:\n  db:\n    type: managed\n'), ['required', '/services/db/provider', 3, 3, 'provider']],
    pattern: [top('services:\n  db:\n    type: managed\n    provider: Postgres\n'), ['pattern', '/services/db/provider', 5, 15, 'db']],
  },
  providerVersion: {
    valid: [managed('    providerVersion: "16.2"\n')],
    empty: [managed('    providerVersion: ""\n'), ['too-short', '/services/db/providerVersion', 6, 22, 'db']],
    'too long': [managed(`    providerVersion: ${'1'.repeat(65)}x\n`), ['too-long', '/services/db/providerVersion', 6, 22, 'db']],
    'a number': [managed('    providerVersion: 16\n'), ['type', '/services/db/providerVersion', 6, 22, 'db']],
  },
  'managed plan': {
    valid: [managed('    plan: small\n')],
    pattern: [managed('    plan: -small\n'), ['pattern', '/services/db/plan', 6, 11, 'db']],
  },
  resources: {
    valid: [managed('    resources:\n      memory: 1.5Gi\n      storage: 2 GiB\n      disk: 512Mi\n      cpu: 2\n')],
    'not a size': [managed('    resources:\n      memory: lots\n'), ['invalid-size', '/services/db/resources/memory', 7, 15, 'db']],
    'decimal unit': [managed('    resources:\n      memory: 1GB\n'), ['invalid-size', '/services/db/resources/memory', 7, 15, 'db']],
    'not whole MiB': [managed('    resources:\n      memory: 0.3Mi\n'), ['invalid-size', '/services/db/resources/memory', 7, 15, 'db']],
    negative: [managed('    resources:\n      cpu: -1\n'), ['out-of-range', '/services/db/resources/cpu', 7, 12, 'db']],
    fraction: [managed('    resources:\n      cpu: 0.5\n'), ['type', '/services/db/resources/cpu', 7, 12, 'db']],
    'bad name': [managed(`    resources:\n      ${'r'.repeat(65)}: 1\n`), ['pattern', `/services/db/resources/${'r'.repeat(65)}`, 7, 7, 'db']],
  },
  config: {
    valid: [managed('    config:\n      max_connections: 100\n      search_path: ${{ env.SCHEMA }}\n      nested: {list: [a, 1, true, null]}\n      x-note: dropped\n')],
    'not a map': [managed('    config: [a]\n'), ['type', '/services/db/config', 6, 13, 'db']],
    'secret in config': [managed('    config:\n      password: ${{ secrets.PW }}\n'), ['template-not-allowed', '/services/db/config/password', 7, 17, 'db']],
    'service in config': [managed('    config:\n      nested:\n        - ${{ services.db.host }}\n'), ['template-not-allowed', '/services/db/config/nested/0', 8, 11, 'db']],
  },
  secrets: {
    valid: [managed('    secrets:\n      PASSWORD: ${{ secrets.DB_PASSWORD }}\n      TOKEN: "${{secrets.T}}"\n')],
    'literal value': [managed('    secrets:\n      PASSWORD: hunter2\n'), ['secret-reference', '/services/db/secrets/PASSWORD', 7, 17, 'db']],
    'two references': [managed('    secrets:\n      P: ${{ secrets.A }}${{ secrets.B }}\n'), ['secret-reference', '/services/db/secrets/P', 7, 10, 'db']],
    'other root': [managed('    secrets:\n      P: ${{ env.A }}\n'), ['secret-reference', '/services/db/secrets/P', 7, 10, 'db']],
    'bad name': [managed('    secrets:\n      1P: ${{ secrets.A }}\n'), ['pattern', '/services/db/secrets/1P', 7, 7, 'db']],
  },
  backups: {
    valid: [managed('    backups: false\n')],
    type: [managed('    backups: "no"\n'), ['type', '/services/db/backups', 6, 14, 'db']],
    'ports on a managed service': [managed('    ports: [{port: 5432}]\n'), ['unknown-key', '/services/db/ports', 6, 5, 'ports']],
  },
  target: {
    valid: [forward(`    target: http://api.team.svc.cluster.local:8080/v1\n${fwdRoutes}`)],
    template: [forward(`    target: \${{ env.API_URL }}\n${fwdRoutes}`)],
    missing: [forward(fwdRoutes), ['required', '/services/fwd/target', 3, 3, 'target']],
    'other scheme': [forward(`    target: ftp://example.com\n${fwdRoutes}`), ['pattern', '/services/fwd/target', 5, 13, 'fwd']],
    'no host': [forward(`    target: https://\n${fwdRoutes}`), ['invalid-url', '/services/fwd/target', 5, 13, 'fwd']],
    credentials: [forward(`    target: https://user:pw@example.com\n${fwdRoutes}`), ['invalid-url', '/services/fwd/target', 5, 13, 'fwd']],
  },
  'forward routes': {
    missing: [forward('    target: https://example.com\n'), ['required', '/services/fwd/routes', 3, 3, 'routes']],
    empty: [forward('    target: https://example.com\n    routes: []\n'), ['too-short', '/services/fwd/routes', 6, 13, 'fwd']],
    'path missing': [forward('    target: https://example.com\n    routes:\n      - strip: true\n'), ['required', '/services/fwd/routes/0/path', 7, 9, 'path']],
  },
};

describe('top-level keys, steps, managed and forward services of svc.yml', () => {
  for (const [key, keyCases] of Object.entries(cases)) {
    for (const [name, [text, expected]] of Object.entries(keyCases)) {
      test(`${key}: ${name} is ${expected === undefined ? 'accepted' : `refused with ${expected[0]}`}`, () => {
        const { errors, landscape } = parseLandscape(text);
        if (expected === undefined) {
          assert.deepEqual(errors, []);
          assert.equal(landscape?.schema, 'svc/v1');
          return;
        }
        assert.equal(errors.length, 1, JSON.stringify(errors, null, 1));
        const [code, pointer, line, column, subject] = expected;
        const [error] = errors;
        assert.deepEqual({ code: error.code, pointer: error.pointer, line: error.line, column: error.column }, { code, pointer, line, column });
        if (subject !== undefined) assert.equal(error.subject, subject);
        assert.equal(landscape, undefined);
      });
    }
  }
});

test('the messages say what is wrong in plain words', () => {
  const text = top('services:\n  web:\n    type: steps\n    steps: [{run: x}]\n    ports: [{port: 3000}]\n    health: {port: 8080}\n    imagee: x\n    replicas: two\n');
  const messages = parseLandscape(text).errors.map((error) => error.message);
  assert.deepEqual(messages, [
    'health check port 8080 is not among the ports of service web (3000)',
    'unknown key "imagee" in service web (a steps service); did you mean image?',
    'replicas of service web must be a whole number, not the text "two"',
  ]);
});

test('installation defaults decide plan limits: a listed plan with a smaller maximum refuses more replicas', () => {
  const defaults = {
    servicePlan: 'small',
    servicePlans: { small: { maxReplicas: 2, availability: 'on-demand' as const }, big: { maxReplicas: 50, availability: 'always' as const } },
    servicePlansComplete: true,
    unlistedPlan: { maxReplicas: 10, availability: 'always' as const },
    idleTimeoutMinutes: 30,
  };
  const file = (extra: string): string => top(`services:\n  web:\n    type: steps\n    steps: [{run: x}]\n${extra}`);
  assert.deepEqual(parseLandscape(file('    replicas: 3\n'), { defaults }).errors.map((e) => [e.code, e.line, e.column]), [['out-of-range', 6, 15]]);
  assert.deepEqual(parseLandscape(file('    plan: big\n    replicas: 30\n'), { defaults }).errors, []);
  assert.deepEqual(parseLandscape(file('    plan: huge\n'), { defaults }).errors.map((e) => [e.code, e.pointer, e.line, e.column]), [['unknown-plan', '/services/web/plan', 6, 11]]);
  assert.deepEqual(parseLandscape(file('    plan: huge\n    replicas: 30\n')).errors, [], 'offline, an unlisted plan is not judged');
});

test('at most maxErrors errors are listed, the rest counted', () => {
  const services = Array.from({ length: 30 }, (_, i) => `  s${i}: {type: steps}\n`).join('');
  const result = parseLandscape(top(`services:\n${services}`), { maxErrors: 10 });
  assert.equal(result.errors.length, 10);
  assert.equal(result.omitted, 20);
  assert.deepEqual(result.errors.map((e) => e.line), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
});

test('a refused file becomes a 422 invalid-landscape problem listing every error', () => {
  const { errors, omitted } = parseLandscape(top('services:\n  web: {type: steps}\nfoo: 1\n'));
  const body = landscapeProblem(errors, { file: 'svc.ci.yml', omitted }).toBody('/api/v1/workspaces/1/landscape/sync');
  assert.equal(body.type, 'urn:svc:problem:invalid-landscape');
  assert.equal(body.status, 422);
  assert.equal(body.title, 'The landscape file has errors');
  assert.equal(body.detail, 'svc.ci.yml has 2 errors.');
  assert.deepEqual(body.errors?.map((e) => [e.code, e.pointer, e.line, e.column, e.subject]), [
    ['required', '/services/web/steps', 3, 3, 'steps'],
    ['unknown-key', '/foo', 4, 1, 'foo'],
  ]);
  const single = landscapeProblem(parseLandscape('schema: svc/v2\n').errors).toBody();
  assert.equal(single.detail, 'svc.yml has an error at line 1, column 9: schema must be svc/v1, not the text "svc/v2"; did you mean svc/v1?');
});
