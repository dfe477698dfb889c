// The managed-service catalog over HTTP: GET /providers and /plans, Plan refusing managed entries the catalog
// does not allow with their place in svc.yml, and Sync refusing managed services on a runtime driver that places
// none (this server's: the local driver without its managed-service placement).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SecretBox } from '../src/core/secret-box.ts';
import { landscapeHash, normalizeLandscape, parseLandscape } from '../src/landscape/index.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { saveDeployedLandscape } from '../src/store/landscapes.ts';
import { sealDeployedEnv } from '../src/workspaces/service-runner.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const secretsKey = randomBytes(32);
let server: TestServer;
let dev: ApiClient;
let ws: number;
let volume: string;

before(async () => {
  server = await startTestServer({
    env: { SVC_MANAGED_DISABLE: 'postgres:15', SVC_SECRETS_KEY: secretsKey.toString('base64') },
    driver: ({ dataDir, clock }) => ({ ...createLocalDriver({ dataDir, clock }), placeManagedService: undefined }),
  });
  const owner = await createPerson(server.admin, 'catalog-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Catalog' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Catalog' })).body.id;
  dev = owner.key;
  ({ id: ws, volume } = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: owner.id, name: 'catalog' }));
});
after(async () => server?.close());

const withDb = (db: string) => `schema: svc/v1
services:
  web:
    type: steps
    steps: [{run: npm start}]
  db:
    type: managed
${db}`;
const plan = () => dev.get(`/workspaces/${ws}/landscape/plan`);

test('GET /providers lists postgres, redis and nats with versions (the disabled one off), resources, config schema, secrets, details', async () => {
  assertProblem(await server.anonymous.get('/providers'), 401, 'unauthenticated');
  const answer = await dev.get('/providers');
  assert.equal(answer.status, 200, answer.text);
  assert.deepEqual(answer.body.items.map((p: { name: string }) => p.name), ['postgres', 'redis', 'nats']);
  const postgres = answer.body.items[0];
  assert.deepEqual(postgres.versions, [
    { version: '15', enabled: false, default: false },
    { version: '16', enabled: true, default: false },
    { version: '17', enabled: true, default: true },
  ]);
  assert.equal(postgres.default_version, '17');
  assert.equal(postgres.default_plan, 'small');
  assert.deepEqual(postgres.resources.map((r: { name: string; update: string }) => [r.name, r.update]), [['cpu', 'live'], ['memory', 'restart'], ['storage', 'grow'], ['connections', 'restart']]);
  assert.equal(postgres.config_schema.properties.locale['x-update'], 'never');
  assert.deepEqual(postgres.secrets.map((s: { name: string }) => s.name), ['password']);
  assert.ok(postgres.details.some((d: { name: string }) => d.name === 'host'));
  assert.deepEqual(postgres.capabilities, { dump: true, backups: true, pause: true, http: false });
  assert.equal(answer.body.items[2].capabilities.http, true);
});

test('GET /plans lists workspace, service and managed plans, filtered by kind and provider', async () => {
  const all = (await dev.get('/plans')).body.items;
  assert.deepEqual([...new Set(all.map((p: { kind: string }) => p.kind))], ['workspace', 'service', 'managed']);
  const service = await dev.get('/plans?kind=service');
  assert.deepEqual(service.body.items.map((p: { id: string; default: boolean; max_replicas: number }) => [p.id, p.default, p.max_replicas]), [['small', false, 5], ['standard', true, 10]]);
  assert.deepEqual(service.body.items[1], { id: 'standard', kind: 'service', provider: null, title: 'Standard', default: true, cpu_millis: 1000, memory_mib: 1024, max_replicas: 10, availability: 'always' });
  const redis = (await dev.get('/plans?provider=redis')).body.items;
  assert.deepEqual(redis.map((p: { id: string; default: boolean }) => [p.id, p.default]), [['small', true], ['medium', false]]);
  assert.deepEqual(redis[0].resources.memory, { value: 256, min: 64, max: 1024 });
  assert.deepEqual((await dev.get('/plans?kind=service&provider=redis')).body.items, []);
  assertProblem(await dev.get('/plans?kind=database'), 422, 'validation');
});

test('Plan refuses each managed entry the catalog does not allow, with its place in the file', async () => {
  const cases: Array<[string, { code: string; pointer: string; line: number; column: number }]> = [
    ['    provider: postgresql\n', { code: 'unknown-provider', pointer: '/services/db/provider', line: 8, column: 15 }],
    ['    provider: postgres\n    providerVersion: "14"\n', { code: 'unknown-version', pointer: '/services/db/providerVersion', line: 9, column: 22 }],
    ['    provider: postgres\n    providerVersion: "15"\n', { code: 'unknown-version', pointer: '/services/db/providerVersion', line: 9, column: 22 }],
    ['    provider: postgres\n    plan: huge\n', { code: 'unknown-plan', pointer: '/services/db/plan', line: 9, column: 11 }],
    ['    provider: postgres\n    resources:\n      storage: 1.5GiB\n      memory: 8Gi\n', { code: 'out-of-range', pointer: '/services/db/resources/memory', line: 11, column: 15 }],
    ['    provider: redis\n    config:\n      maxmemoryPolicy: lru\n', { code: 'invalid-config', pointer: '/services/db/config/maxmemoryPolicy', line: 10, column: 24 }],
  ];
  for (const [db, expected] of cases) {
    await writeFile(path.join(volume, 'svc.yml'), withDb(db));
    const answer = await plan();
    assertProblem(answer, 422, 'invalid-landscape');
    assert.deepEqual(answer.body.errors.map(({ code, pointer, line, column, subject }: Record<string, unknown>) => ({ code, pointer, line, column, subject })), [{ ...expected, subject: 'db' }], db);
  }
});

test('a Sync of a landscape with managed services on a runtime driver that places none is refused with 501 naming them; the landscape stays as it was', async () => {
  await writeFile(path.join(volume, 'svc.yml'), withDb('    provider: redis\n    resources: {memory: 512Mi}\n'));
  const planned = await plan();
  assert.equal(planned.status, 200, planned.text);
  assert.deepEqual(planned.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['db', 'create'], ['web', 'create']]);
  const answer = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: planned.body.hash });
  assertProblem(answer, 501, 'not-available');
  assert.deepEqual(answer.body.managed_services, ['db']);
  assert.equal(answer.body.detail, 'The runtime driver local runs no managed services, so the landscape cannot be synced: db (redis). Remove them from the file to sync the rest.');
  assert.deepEqual((await dev.get(`/workspaces/${ws}/landscape`)).body.banner, { state: 'no-landscape', detail: 'Not synced yet: Sync applies the file' });
});

test('Plan refuses a change the update constraints forbid against the deployed landscape, with its place', async () => {
  // This server's driver places no managed services, so no Sync can deploy one: the deployed landscape is recorded directly.
  const deployed = withDb('    provider: postgres\n    providerVersion: "16"\n    resources: {storage: 4Gi}\n    config: {locale: C}\n');
  const normal = normalizeLandscape(parseLandscape(deployed).landscape!);
  await saveDeployedLandscape(server.server.database.pool, {
    workspaceId: ws, profile: null, text: deployed, normal, hash: landscapeHash(normal), variablesHash: '',
    env: sealDeployedEnv(new SecretBox(secretsKey), ws, { env: { web: {} }, targets: {} }), by: null, at: new Date(),
  });
  await writeFile(path.join(volume, 'svc.yml'), deployed.replace('storage: 4Gi', 'storage: 8Gi').replace('locale: C', 'locale: C.UTF-8'));
  const answer = await plan();
  assertProblem(answer, 422, 'invalid-landscape');
  assert.deepEqual(answer.body.errors.map(({ code, pointer, line, column }: Record<string, unknown>) => ({ code, pointer, line, column })), [
    { code: 'update-forbidden', pointer: '/services/db/config/locale', line: 11, column: 22 },
  ]);
  await writeFile(path.join(volume, 'svc.yml'), deployed.replace('storage: 4Gi', 'storage: 8Gi'));
  const grown = await plan();
  assert.equal(grown.status, 200, grown.text);
  assert.deepEqual(grown.body.services.map((s: { name: string; action: string; changes: string[] }) => [s.name, s.action, s.changes]), [['db', 'change', ['/services/db/resources/storage']]]);
});
