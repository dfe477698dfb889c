import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape, type Landscape } from '../landscape/index.ts';
import { checkLandscapeText } from '../workspaces/landscape-check.ts';
import { CatalogSettingError, findProvider, managedCatalog } from './catalog.ts';
import { catalogErrors } from './check.ts';

function file(db: string): string {
  return `schema: svc/v1\nservices:\n  db:\n    type: managed\n${db}`;
}

function errorsOf(text: string, options: { previous?: string; disabled?: string[]; versions?: Record<string, string> } = {}) {
  const landscape = parseLandscape(text).landscape as Landscape;
  assert.ok(landscape, 'the file itself is valid');
  const previous = options.previous === undefined ? null : normalizeLandscape(parseLandscape(options.previous).landscape!);
  return catalogErrors(text, landscape, previous, managedCatalog(options.disabled), options.versions).map(({ code, line, column, pointer, subject }) => ({ code, line, column, pointer, subject }));
}

test('the newest enabled version is the default, and disabling versions moves it', () => {
  assert.equal(findProvider(managedCatalog(), 'postgres')?.defaultVersion, '17');
  const postgres = findProvider(managedCatalog(['postgres:17', 'postgres:16']), 'postgres')!;
  assert.equal(postgres.defaultVersion, '15');
  assert.deepEqual(postgres.versionStates, [{ version: '15', enabled: true }, { version: '16', enabled: false }, { version: '17', enabled: false }]);
  assert.equal(findProvider(managedCatalog(['redis:7']), 'redis')?.defaultVersion, undefined);
  assert.throws(() => managedCatalog(['postgres:9']), CatalogSettingError);
});

test('plans of kind service are the installation service plans; every provider has its default plan and values within bounds', () => {
  const catalog = managedCatalog();
  assert.deepEqual(catalog.plans.filter((p) => p.kind === 'service').map((p) => [p.id, p.default]), [['small', false], ['standard', true]]);
  assert.deepEqual(catalog.providers.map((p) => p.name), ['postgres', 'redis', 'nats']);
  for (const provider of catalog.providers) {
    assert.ok(provider.plans.some((p) => p.id === provider.defaultPlan), provider.name);
    for (const plan of provider.plans) {
      assert.deepEqual(Object.keys(plan.resources).sort(), provider.resources.map((r) => r.name).sort(), `${provider.name} ${plan.id}`);
      for (const { value, min, max } of Object.values(plan.resources)) assert.ok(min <= value && value <= max, `${provider.name} ${plan.id}`);
    }
  }
});

test('a managed entry within the catalog has no error, sizes in binary units included', () => {
  const text = file('    provider: postgres\n    providerVersion: "16"\n    plan: medium\n    resources: {memory: 2Gi, storage: 10240Mi, cpu: 1500}\n    config: {locale: C, extensions: [pgcrypto], timezone: "${{ env.TZ }}"}\n');
  assert.deepEqual(errorsOf(text), []);
});

test('each bad managed entry has its code and place', () => {
  assert.deepEqual(errorsOf(file('    provider: postgress\n')), [{ code: 'unknown-provider', line: 5, column: 15, pointer: '/services/db/provider', subject: 'db' }]);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    providerVersion: "9"\n')).map((e) => [e.code, e.line, e.column]), [['unknown-version', 6, 22]]);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    providerVersion: "15"\n'), { disabled: ['postgres:15'] }).map((e) => e.code), ['unknown-version']);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    plan: huge\n')).map((e) => [e.code, e.line, e.column]), [['unknown-plan', 6, 11]]);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    resources:\n      memory: 4GiB\n      disk: 10\n')).map((e) => [e.code, e.line, e.column]), [
    ['out-of-range', 7, 15],
    ['unknown-resource', 8, 13],
  ]);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    resources: {cpu: 1Gi}\n')).map((e) => e.code), ['type']);
  assert.deepEqual(errorsOf(file('    provider: postgres\n    config:\n      locale: klingon\n      shared_buffers: 1\n')).map((e) => [e.code, e.pointer, e.line]), [
    ['invalid-config', '/services/db/config/locale', 7],
    ['invalid-config', '/services/db/config/shared_buffers', 8],
  ]);
});

test('a config value that does not fit its pattern is told the rule in words, never the regular expression', () => {
  const text = file('    provider: postgres\n    config: {database: My-DB}\n');
  const landscape = parseLandscape(text).landscape as Landscape;
  const [error] = catalogErrors(text, landscape, null, managedCatalog());
  assert.equal(error.message, 'config database of service db must be a name of lowercase letters, digits and _, not starting with a digit, at most 63 characters, not "My-DB"');
});

test('update constraints against the deployed landscape: fixed settings, shrinking storage and the version are refused', () => {
  const before = file('    provider: postgres\n    providerVersion: "16"\n    resources: {storage: 4Gi}\n    config: {locale: C}\n');
  assert.deepEqual(errorsOf(before, { previous: before }), []);
  const after = file('    provider: postgres\n    providerVersion: "17"\n    resources: {storage: 2Gi, memory: 1Gi}\n    config: {locale: C.UTF-8, timezone: Europe/Berlin}\n');
  assert.deepEqual(errorsOf(after, { previous: before }).map((e) => [e.code, e.pointer, e.line]), [
    ['update-forbidden', '/services/db/providerVersion', 6],
    ['update-forbidden', '/services/db/resources/storage', 7],
    ['update-forbidden', '/services/db/config/locale', 8],
  ]);
  // A version disabled after the instance was created does not stop it from being planned.
  assert.deepEqual(errorsOf(before, { previous: before, disabled: ['postgres:16'] }), []);
});

test('the landscape-check worker refuses a file with catalog errors, with the update constraints only when planning', () => {
  const before = file('    provider: redis\n    config: {databases: 4}\n');
  const previous = normalizeLandscape(parseLandscape(before).landscape!);
  const text = file('    provider: redis\n    resources: {storage: 256}\n');
  const plain = checkLandscapeText({ text });
  assert.equal(plain.state === 'checked' && plain.errors.length, 0);
  const planned = checkLandscapeText({ text, plan: { previous, before: {}, context: { workspace: { id: 1, devDomain: 'w1.localhost' }, team: { id: 1 }, env: {}, secrets: {}, services: {} } } });
  assert.ok(planned.state === 'checked' && planned.normal === undefined);
  assert.deepEqual(planned.errors.map((e) => [e.code, e.line]), [['update-forbidden', 6]]);
  const disabled = checkLandscapeText({ text: file('    provider: redis\n'), managedDisabled: ['redis:7'] });
  assert.deepEqual(disabled.state === 'checked' && disabled.errors.map((e) => [e.code, e.pointer]), [['unknown-version', '/services/db/provider']]);
});

test('another provider replaces the instance, so it is checked as a new one and no update constraint applies', () => {
  const before = file('    provider: postgres\n    providerVersion: "16"\n    resources: {storage: 4Gi}\n');
  assert.deepEqual(errorsOf(file('    provider: redis\n    resources: {storage: 512}\n'), { previous: before }), []);
});

test('the worker lists at most 100 catalog errors and counts the rest, as for the file own errors', () => {
  const services = Array.from({ length: 150 }, (_, i) => `  db${i}:\n    type: managed\n    provider: mysql\n`).join('');
  const check = checkLandscapeText({ text: `schema: svc/v1\nservices:\n${services}` });
  assert.ok(check.state === 'checked');
  assert.deepEqual([check.errors.length, check.omitted, check.errors[0].line], [100, 50, 5]);
});

test('the version holds against the one the instance runs: created by default on 17, the file cannot name 16; without a name it keeps 17', () => {
  const created = file('    provider: postgres\n');
  assert.deepEqual(errorsOf(file('    provider: postgres\n    providerVersion: "16"\n'), { previous: created, versions: { db: '17' } }).map((e) => [e.code, e.line]), [['update-forbidden', 6]]);
  // The default moved (17 disabled, so 16): an instance of 17 is still planned without a version in the file.
  assert.deepEqual(errorsOf(created, { previous: created, versions: { db: '17' }, disabled: ['postgres:17'] }), []);
});

test('a secret the provider does not take is refused with its place; one it takes but the file leaves out is not an error', () => {
  assert.deepEqual(errorsOf(file('    provider: postgres\n    secrets:\n      password: "${{ secrets.P }}"\n      token: "${{ secrets.T }}"\n')), [
    { code: 'unknown-secret', line: 8, column: 14, pointer: '/services/db/secrets/token', subject: 'db' },
  ]);
  assert.deepEqual(errorsOf(file('    provider: postgres\n')), []);
});
