import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtInPlans } from '../capacity/plans.ts';
import { parsePlansFile } from '../capacity/plans-file.ts';
import { CatalogSettingError, findProvider, managedCatalog } from './catalog.ts';
import { storedSettingsRefusal } from './check.ts';
import { observedStatus, refusedSettingsReason } from './statuses.ts';

const base = `workspace:\n  default: standard\n  plans:\n    standard: { cpu: 2, memory: 4GiB, storageGib: 10 }\nservice:\n  default: standard\n  plans:\n    standard: { cpu: 1, memory: 1GiB, maxReplicas: 10 }\n`;
const plan = (id: string, connections = '{ value: 50, min: 10, max: 100 }') =>
  `      ${id}:\n        resources:\n          cpu: { value: 500, min: 250, max: 2000 }\n          memory: { value: 256, min: 128, max: 1024 }\n          storage: { value: 1024, min: 512, max: 8192 }\n          connections: ${connections}\n`;
const withPostgres = (plans: string, defaultPlan = 'small') => parsePlansFile(`${base}managed:\n  postgres:\n    default: ${defaultPlan}\n    plans:\n${plans}`);

test("a plans file's managed section replaces a provider's plans; a plan that does not fit its provider stops the server", () => {
  const catalog = managedCatalog([], withPostgres(plan('small') + plan('medium')));
  const postgres = findProvider(catalog, 'postgres')!;
  assert.deepEqual([postgres.plans.map((p) => p.id), postgres.defaultPlan], [['small', 'medium'], 'small']);
  assert.deepEqual(findProvider(catalog, 'redis')!.plans, findProvider(managedCatalog(), 'redis')!.plans, 'other providers keep their own');
  assert.throws(() => withPostgres(plan('small'), 'large'), /managed\.postgres\.default is "large", which is not one of its plans \(small\)/);
  assert.throws(() => withPostgres(plan('small', '{ value: 500, min: 10, max: 100 }')), /value 500 is not within min 10 and max 100/);
  const lacking = parsePlansFile(`${base}managed:\n  postgres:\n    default: small\n    plans:\n      small:\n        resources:\n          cpu: { value: 500, min: 250, max: 2000 }\n`);
  assert.throws(() => managedCatalog([], lacking), (error: Error) => error instanceof CatalogSettingError && /plans\.small lacks memory, storage, connections/.test(error.message));
  const unknown = parsePlansFile(`${base}managed:\n  mysql:\n    default: small\n    plans:\n${plan('small')}`);
  assert.throws(() => managedCatalog([], unknown), /managed\.mysql is not a provider of the catalog/);
});

test('deployed settings the catalog no longer accepts are named with the setting and why; accepted ones give nothing', () => {
  const stored = { name: 'db', provider: 'postgres', plan: 'medium', resources: { cpu: 500, memory: 256, storage: 1024, connections: 80 }, config: { work_mem: 8 } };
  const both = managedCatalog([], withPostgres(plan('small') + plan('medium')));
  assert.equal(storedSettingsRefusal(both, stored), undefined);
  assert.equal(storedSettingsRefusal(managedCatalog([], withPostgres(plan('small'))), stored), 'plan "medium" of service db is not a plan of provider postgres any more; choose small');
  const narrower = managedCatalog([], withPostgres(plan('small') + plan('medium', '{ value: 20, min: 10, max: 40 }')));
  assert.equal(storedSettingsRefusal(narrower, stored), 'resource connections of service db is 80; plan medium of postgres allows 10 to 40');
  assert.match(storedSettingsRefusal(managedCatalog([], builtInPlans), { ...stored, plan: 'small', resources: {}, config: { work_mem: 'lots' } })!, /^config work_mem of service db /);
});

test('refused settings make a settled instance invalid-provider with the reason, as it runs; accepted again it comes back', () => {
  const state = { status: 'synchronized' as const, details: { host: 'db' }, provider: 'postgres', version: '16' };
  const reason = refusedSettingsReason('plan "medium" of service db is not a plan of provider postgres any more; choose small');
  const refused = observedStatus(state, { versionEnabled: true, running: true, settingsRefusal: 'plan "medium" of service db is not a plan of provider postgres any more; choose small' });
  assert.deepEqual(refused, { status: 'invalid-provider', details: { host: 'db', reason } });
  assert.equal(observedStatus({ ...state, ...refused! }, { versionEnabled: true, running: true, settingsRefusal: 'plan "medium" of service db is not a plan of provider postgres any more; choose small' }), undefined);
  assert.deepEqual(observedStatus({ ...state, ...refused! }, { versionEnabled: true, running: true }), { status: 'synchronized', details: { host: 'db' } });
  assert.deepEqual(observedStatus({ ...state, status: 'paused' }, { versionEnabled: true, running: false, settingsRefusal: 'x' })?.status, 'invalid-provider');
});
