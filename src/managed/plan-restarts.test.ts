import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape, planLandscape } from '../landscape/index.ts';
import { managedCatalog } from './catalog.ts';
import { generatedSecret, withGeneratedSecrets } from './generated-secrets.ts';
import { withManagedRestarts } from './plan-restarts.ts';
import { postgresSettings } from './postgres-settings.ts';
import { checkLandscapeText } from '../workspaces/landscape-check.ts';

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
  // Another plan changes the values it does not override: memory and connections of medium restart the server (cpu is live).
  assert.deepEqual(planned(base, '    provider: postgres\n    plan: medium\n    resources: {connections: 100}\n')[0].reason, 'the server restarts to apply memory 512 MiB -> 2048 MiB');
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

test('a new value of a managed secret in the vault: the plan changes db (restarts, the new password) and web (its DSN); names only', () => {
  const text = 'schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: postgres\n    secrets: {password: "${{ secrets.P }}"}\n  web:\n    type: steps\n    steps: [{run: node web.js}]\n    env: {DSN: "${{ services.db.dsn }}"}\n';
  const previous = normalizeLandscape(parseLandscape(text).landscape!);
  const context = (password: string) => ({ workspace: { id: 1, devDomain: 'w1.localhost' }, team: { id: 1 }, env: {}, secrets: { P: password }, services: {} });
  const planOf = (password: string, managedSecretsBefore?: Record<string, Record<string, string>>) => {
    const deployed = checkLandscapeText({ text, plan: { previous, before: {}, context: context('old one') } });
    assert.ok(deployed.state === 'checked' && deployed.planned && !deployed.planned.problem);
    const checked = checkLandscapeText({ text, plan: { previous, before: deployed.planned.env, context: context(password), ...(managedSecretsBefore && { managedSecretsBefore }) } });
    assert.ok(checked.state === 'checked' && checked.planned && !checked.planned.problem);
    return checked.planned.plan;
  };
  const changed = planOf('new one', { db: { password: 'old one' } });
  assert.deepEqual(changed.services.map(({ name, action, changes, environment, restarts, reason }) => ({ name, action, changes, environment, restarts, reason })), [
    { name: 'db', action: 'change', changes: ['/services/db/secrets/password'], environment: ['password'], restarts: true, reason: 'the server restarts to apply the new password' },
    { name: 'web', action: 'change', changes: ['/services/web/env/DSN'], environment: ['DSN'], restarts: true, reason: undefined },
  ]);
  assert.ok(!JSON.stringify(changed).includes('new one'), 'no value in the plan');
  // The same value: nothing changes. A deployment that recorded no secrets of db: db is not compared.
  assert.deepEqual(planOf('old one', { db: { password: 'old one' } }).services, []);
  assert.deepEqual(planOf('new one', {}).services.map((s) => s.name), ['web']);
});
