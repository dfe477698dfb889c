// ${{ ... }} templates: reading them, checking them in a file, and filling them in at Sync.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Problem } from '../core/problems.ts';
import { normalizeLandscape } from './normal-form.ts';
import { parseLandscape } from './parse-landscape.ts';
import { placeProblem } from './places.ts';
import { fillTemplates, referencedSecrets, type TemplateContext } from './template-fill.ts';
import { parseTemplate } from './templates.ts';

describe('parseTemplate', () => {
  test('reads every kind of reference, with or without spaces', () => {
    const parsed = parseTemplate('${{workspace.id}}-${{ workspace.devDomain }}-${{ team.id }}-${{ env.HOME }}-${{ secrets.PW }}');
    assert.equal(parsed.error, undefined);
    assert.deepEqual(parsed.parts.filter((part) => typeof part !== 'string').map((part) => (part as { reference: unknown }).reference), [
      { root: 'workspace', field: 'id' },
      { root: 'workspace', field: 'devDomain' },
      { root: 'team', field: 'id' },
      { root: 'env', name: 'HOME' },
      { root: 'secrets', name: 'PW' },
    ]);
    assert.deepEqual(parseTemplate('postgres://${{ services.my-db.host }}:${{ services.my-db.port }}/${{ services.my-db.details.database }}').parts, [
      'postgres://',
      { reference: { root: 'services', service: 'my-db', field: 'host' }, source: '${{ services.my-db.host }}', index: 11 },
      ':',
      { reference: { root: 'services', service: 'my-db', field: 'port' }, source: '${{ services.my-db.port }}', index: 38 },
      '/',
      { reference: { root: 'services', service: 'my-db', field: 'details', detail: 'database' }, source: '${{ services.my-db.details.database }}', index: 65 },
    ]);
  });

  test('$${{ writes a literal ${{', () => {
    assert.deepEqual(parseTemplate('cost: $${{ not a template }}'), { parts: ['cost: ${{ not a template }}'] });
  });

  const refused: [string, 'template-syntax' | 'template-unknown'][] = [
    ['${{ secrets.A', 'template-syntax'],
    ['${{ }}', 'template-syntax'],
    ['${{ a || b }}', 'template-syntax'],
    ["${{ secrets['A'] }}", 'template-syntax'],
    ['${{ env.MY-VAR }}', 'template-syntax'],
    ['${{ vars.A }}', 'template-unknown'],
    ['${{ workspace.name }}', 'template-unknown'],
    ['${{ team }}', 'template-unknown'],
    ['${{ secrets.A.B }}', 'template-unknown'],
    ['${{ services.db }}', 'template-unknown'],
    ['${{ services.db.password }}', 'template-unknown'],
    ['${{ services.db.details }}', 'template-unknown'],
    ['${{ services.Db.host }}', 'template-unknown'],
  ];
  for (const [text, code] of refused) {
    test(`${text} is refused with ${code}`, () => {
      assert.equal(parseTemplate(text).error?.code, code);
    });
  }
});

const file = `schema: svc/v1
services:
  web:
    type: steps
    steps: [{run: start}]
    env:
      PORT: 8080
      DEBUG: false
      URL: https://\${{ workspace.devDomain }}/w/\${{ workspace.id }}
      DSN: \${{ services.db.dsn }}
      NAME: \${{ services.db.details.database }}
      KEY: \${{ secrets.API_KEY }}
      HOME_DIR: \${{ env.HOME }}-\${{ env.EMPTY }}
  db:
    type: managed
    provider: postgresql
    config:
      owner: team-\${{ team.id }}
      list: ["\${{ env.HOME }}", 1]
    secrets:
      PASSWORD: \${{ secrets.DB_PASSWORD }}
  fwd:
    type: forward
    target: https://\${{ services.db.host }}:\${{ services.db.port }}
    routes: [{path: /db}]
`;

const context: TemplateContext = {
  workspace: { id: 42, devDomain: 'ws-42.dev.example.com' },
  team: { id: 7 },
  env: { HOME: '/data/app', EMPTY: '' },
  secrets: { API_KEY: 'k-123', DB_PASSWORD: 'pw' },
  services: { db: { host: 'db.internal', port: 5432, dsn: 'postgres://u:pw@db.internal:5432/app', secret: 'pw', details: { database: 'app' } } },
};

describe('fillTemplates', () => {
  const landscape = parseLandscape(file).landscape!;

  test('the file is valid and names its secrets', () => {
    assert.ok(landscape);
    assert.deepEqual(referencedSecrets(landscape), ['API_KEY', 'DB_PASSWORD']);
  });

  test('fills env values (as text), managed config and secrets, and forward targets', () => {
    const filled = fillTemplates(normalizeLandscape(landscape), context);
    assert.equal(filled.problem, undefined);
    const services = filled.landscape!.services;
    assert.deepEqual(services.web.type === 'steps' && services.web.env, {
      PORT: '8080',
      DEBUG: 'false',
      URL: 'https://ws-42.dev.example.com/w/42',
      DSN: 'postgres://u:pw@db.internal:5432/app',
      NAME: 'app',
      KEY: 'k-123',
      HOME_DIR: '/data/app-',
    });
    assert.deepEqual(services.db.type === 'managed' && [services.db.config, services.db.secrets], [{ owner: 'team-7', list: ['/data/app', 1] }, { PASSWORD: 'pw' }]);
    assert.equal(services.fwd.type === 'forward' && services.fwd.target, 'https://db.internal:5432');
  });

  test('secrets without a value are reported together in one missing-secrets problem', () => {
    const filled = fillTemplates(landscape, { ...context, secrets: {} });
    assert.equal(filled.landscape, undefined);
    assert.ok(filled.problem instanceof Problem);
    const body = filled.problem.toBody();
    assert.equal(body.type, 'urn:svc:problem:missing-secrets');
    assert.equal(body.status, 409);
    assert.deepEqual(body.secrets, ['API_KEY', 'DB_PASSWORD']);
    assert.deepEqual(body.errors?.map((e) => [e.pointer, e.subject]), [['/services/web/env/KEY', 'API_KEY'], ['/services/db/secrets/PASSWORD', 'DB_PASSWORD']]);
  });

  test('a managed service Sync has no values for is an invalid-landscape problem', () => {
    const filled = fillTemplates(landscape, { ...context, services: {} });
    assert.equal(filled.problem?.type, 'urn:svc:problem:invalid-landscape');
    assert.deepEqual([...new Set(filled.problem?.errors?.map((e) => e.pointer))], ['/services/web/env/DSN', '/services/web/env/NAME', '/services/fwd/target']);
  });

  test('a forward target filled in from templates must be an http(s) URL', () => {
    const text = 'schema: svc/v1\nservices:\n  fwd:\n    type: forward\n    target: ${{ env.API }}\n    routes: [{path: /api}]\n';
    const forward = parseLandscape(text).landscape!;
    assert.equal(fillTemplates(forward, { ...context, env: { API: 'https://api.example.com' } }).problem, undefined);
    const refused = fillTemplates(forward, { ...context, env: { API: 'ftp://files.example.com' } }).problem;
    assert.deepEqual(refused?.errors?.map((e) => [e.code, e.pointer]), [['invalid-url', '/services/fwd/target']]);
  });

  test('a variable that is not set is an error at its place in the file, never empty text', () => {
    const filled = fillTemplates(normalizeLandscape(landscape), { ...context, env: { HOME: '/data/app' } });
    assert.equal(filled.landscape, undefined);
    const body = placeProblem(filled.problem!, file).toBody();
    assert.deepEqual([body.type, body.status], ['urn:svc:problem:invalid-landscape', 422]);
    assert.deepEqual(body.errors, [
      {
        pointer: '/services/web/env/HOME_DIR',
        code: 'missing-variable',
        subject: 'EMPTY',
        message: '${{ env.EMPTY }} has no value: the workspace has no variable EMPTY; set it (it may be empty) and plan again',
        line: 13,
        column: 17,
      },
    ]);
  });

  test('an unset variable in a forward target is told once, not also as a bad URL', () => {
    const text = 'schema: svc/v1\nservices:\n  fwd:\n    type: forward\n    target: ${{ env.API }}\n    routes: [{path: /api}]\n';
    const refused = fillTemplates(parseLandscape(text).landscape!, context).problem!;
    assert.deepEqual(placeProblem(refused, text).errors?.map((e) => [e.code, e.pointer, e.line, e.column]), [['missing-variable', '/services/fwd/target', 5, 13]]);
  });

  test('missing secrets keep their problem and get their places too', () => {
    const filled = fillTemplates(landscape, { ...context, secrets: {} });
    const placed = placeProblem(filled.problem!, file).toBody();
    assert.deepEqual([placed.type, placed.secrets], ['urn:svc:problem:missing-secrets', ['API_KEY', 'DB_PASSWORD']]);
    assert.deepEqual(placed.errors?.map((e) => [e.pointer, e.line, e.column]), [['/services/web/env/KEY', 12, 12], ['/services/db/secrets/PASSWORD', 21, 17]]);
  });

  test('at most 100 places are listed; the detail counts them all', () => {
    const env = Array.from({ length: 150 }, (_, i) => `      V${i}: \${{ env.UNSET }}`).join('\n');
    const text = `schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{run: start}]\n    env:\n${env}\n`;
    const placed = placeProblem(fillTemplates(parseLandscape(text).landscape!, context).problem!, text);
    assert.equal(placed.errors?.length, 100);
    assert.deepEqual([placed.errors?.[0].line, placed.errors?.[99].line], [7, 106]);
    assert.match(placed.detail ?? '', /The first 100 of 150 places are listed\.$/);
  });
});
