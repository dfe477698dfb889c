import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape, planLandscape } from '../landscape/index.ts';
import { managedCatalog } from './catalog.ts';
import { generatedSecret, withGeneratedSecrets } from './generated-secrets.ts';
import { withManagedRestarts } from './plan-restarts.ts';
import { postgresSettings } from './postgres-settings.ts';

const catalog = managedCatalog();
const normal = (db: string) => normalizeLandscape(parseLandscape(`schema: svc/v1\nservices:\n  db:\n    type: managed\n${db}`).landscape!);

function planned(before: string, after: string) {
  const [previous, next] = [normal(before), normal(after)];
  return withManagedRestarts(planLandscape(previous, next), previous, next, catalog).services.map(({ name, action, restarts, reason }) => ({ name, action, restarts, reason }));
}

test('a managed change restarts only when a value whose rule is restart changes, and says which', () => {
  const base = '    provider: postgres\n    providerVersion: "16"\n    resources: {connections: 100}\n';
  assert.deepEqual(planned(base, base.replace('100', '150')), [
    { name: 'db', action: 'change', restarts: true, reason: 'the server restarts to apply connections 100 -> 150' },
  ]);
  // Live settings, the version's spelling (the instance keeps its own), backups and storage growing: no restart.
  const live = '    provider: postgres\n    resources: {connections: 100, storage: 2Gi}\n    config: {statement_timeout: 5000, timezone: Europe/Berlin}\n    backups: false\n';
  assert.deepEqual(planned(base, live), [{ name: 'db', action: 'change', restarts: false, reason: undefined }]);
  // Another plan changes the values it does not override: memory and connections of medium restart the server.
  assert.deepEqual(planned(base, '    provider: postgres\n    plan: medium\n    resources: {connections: 100}\n')[0].reason, 'the server restarts to apply cpu 500 -> 1000, memory 512 MiB -> 2048 MiB');
  // A restart setting of config (redis databases).
  assert.deepEqual(planned('    provider: redis\n', '    provider: redis\n    config: {databases: 4}\n')[0].reason, 'the server restarts to apply config databases default -> 4');
  // Creating and replacing still start afresh.
  assert.deepEqual(planned(base, '    provider: redis\n')[0], { name: 'db', action: 'replace', restarts: true, reason: undefined });
});

test('postgres settings: max_connections from the plan, a quarter of its memory for shared_buffers, config settings', () => {
  const plan = catalog.providers[0].plans[0];
  assert.deepEqual(postgresSettings(plan, {}), { max_connections: '100', shared_buffers: '128MB', effective_cache_size: '384MB' });
  assert.deepEqual(postgresSettings(undefined, { work_mem: 8, statement_timeout: 5000, timezone: 'Europe/Berlin', locale: 'C' }), {
    work_mem: '8MB', statement_timeout: '5000ms', timezone: 'Europe/Berlin',
  });
});

test('a provider secret the file leaves out is generated from the seed, stable, and one of the file is kept', () => {
  const filled = normal('    provider: postgres\n');
  const withSecret = normalizeLandscape(parseLandscape('schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: postgres\n    secrets: {password: "${{ secrets.P }}"}\n').landscape!);
  const generated = withGeneratedSecrets(filled, catalog, 'seed-1').services.db;
  assert.ok(generated.type === 'managed');
  assert.equal(generated.secrets.password, generatedSecret('seed-1', 'db', 'password'));
  assert.match(generated.secrets.password, /^[A-Za-z0-9_-]{32}$/);
  assert.notEqual(generatedSecret('seed-2', 'db', 'password'), generated.secrets.password);
  const kept = withGeneratedSecrets({ ...withSecret, services: { db: { ...withSecret.services.db, secrets: { password: 'from the vault' } } as never } }, catalog, 'seed-1');
  assert.deepEqual(kept.services.db.type === 'managed' && kept.services.db.secrets, { password: 'from the vault' });
  assert.equal(withGeneratedSecrets(filled, catalog, undefined), filled);
});
