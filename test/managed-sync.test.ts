// A managed PostgreSQL bound to a real landscape: Sync creates it on the workspace's service network, a `steps`
// service reaches it by `${{ services.db.dsn }}` with no hand configuration, Teardown pauses it with its data, the
// next Sync resumes it with the row (after a stop and start of the workspace too), GET /managed-services/{ms} shows
// it, a stop and start of the workspace links it again without a Sync, and removing it from the file deletes it (a
// tombstone left; test/managed-services.test.ts has its expiry). Needs root and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { instanceDir } from '../src/managed/postgres-rules.ts';
import { assertProblem, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { runSvc } from './helpers/process.ts';
import { managedSkip as skip, managedSvcYml as svcYml, startManagedLandscape, webService, type ManagedLandscape } from './helpers/managed-landscape.ts';
import type { TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let landscape: ManagedLandscape;
let server: TestServer;
let dev: ApiClient;
let outsider: ApiClient;
let ws: number;
const finished = (operationId: string) => landscape.finished(operationId);
const sync = () => landscape.sync();
/** web's answer for `urlPath`, once it answers (it starts after the Sync). */
const ask = (urlPath: string) => landscape.ask(urlPath);

before(async () => {
  if (skip) return;
  landscape = await startManagedLandscape();
  ({ server, dev, outsider, ws } = landscape);
});

after(async () => {
  if (skip) return;
  await landscape?.close();
});

const instanceOf = async () => {
  const rows = await server.server.database.pool.query<{ id: string; number: number }>('SELECT id, number FROM managed_services WHERE workspace_id = $1 ORDER BY created_at', [ws]);
  return rows.rows;
};

test('Plan shows the DSN web will get before the instance exists; Sync creates it and web writes a row through it', { skip }, async () => {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  assert.deepEqual(plan.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['db', 'create'], ['web', 'create']]);
  const events = await EventStream.open(dev);
  await sync();
  const [instance] = await instanceOf();
  const shown = await dev.get(`/managed-services/${instance.id}`);
  assert.equal(shown.status, 200, shown.text);
  assert.deepEqual(
    { ...shown.body, created_at: undefined, updated_at: undefined },
    {
      id: instance.id, team_id: shown.body.team_id, workspace_id: ws, name: 'db', provider: 'postgres', version: '16', plan: 'small',
      resources: { cpu: 500, memory: 512, storage: 1024, connections: 100 }, status: 'synchronized', details: { host: 'db', port: 5432, database: 'app', user: 'app', version: '16' }, created_at: undefined, updated_at: undefined,
    },
  );
  await events.until('managed_service.updated', (d) => d.managed_service_id === instance.id && d.workspace_id === ws);
  events.close();
  assert.equal(await ask('/write'), 'CREATE TABLE\nINSERT 0 1');
  assert.equal(await ask('/'), '1');
});

test('a managed service has no run switch: its start and stop answer 409 saying so, the CLI says it, and it keeps serving', { skip }, async () => {
  const detail = 'db is a managed service: it has no steps to start or stop, so it has no run switch. Teardown of the landscape pauses it (its data kept) and the next Sync resumes it.';
  for (const action of ['stop', 'start']) {
    const refused = await dev.post(`/workspaces/${ws}/landscape/services/db/${action}`);
    assertProblem(refused, 409, 'managed-service-no-steps');
    assert.equal(refused.body.detail, detail);
    assert.equal(refused.body.service, 'db');
  }
  const cli = await runSvc(['service', 'stop', 'db', '--ws', String(ws)], { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, SVC_WORKSPACE: undefined, XDG_CONFIG_HOME: server.server.config.dataDir });
  assert.equal(cli.code, 1, cli.stdout);
  assert.equal(cli.stderr, `A managed service has no steps to start or stop: ${detail}\n`);
  const db = (await dev.get(`/workspaces/${ws}/landscape`)).body.services.find((s: { name: string }) => s.name === 'db');
  assert.equal(db.running, true);
  const [instance] = await instanceOf();
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'synchronized');
  // starting web, which needs db, leaves db as it is
  assert.equal((await dev.post(`/workspaces/${ws}/landscape/services/web/start`)).status, 200);
  assert.equal(await ask('/'), '1');
});

/** Stops the workspace and starts it again, until it runs. */
async function stopAndStart(): Promise<void> {
  for (const action of ['stop', 'start']) {
    const answer = await dev.post(`/workspaces/${ws}/${action}`);
    assert.ok(answer.status === 200 || answer.status === 202, answer.text); // a stop answers at once
    if (answer.status === 202) assert.equal((await finished(answer.body.id)).state, 'succeeded');
  }
  await until(async () => ((await dev.get(`/workspaces/${ws}`)).body.state === 'running' ? true : undefined), 'the workspace to run');
}

test('a stop takes the service network down with the instance\'s link; the start links it again, no Sync needed', { skip }, async () => {
  const [instance] = await instanceOf();
  await stopAndStart();
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'synchronized');
  assert.equal(await ask('/'), '1');
});

test('Teardown pauses the instance with its data; the next Sync resumes it and the row is still there', { skip }, async () => {
  const [instance] = await instanceOf();
  const teardown = await dev.post(`/workspaces/${ws}/landscape/teardown`);
  assert.equal((await finished(teardown.body.id)).state, 'succeeded');
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'paused');
  await stopAndStart(); // a paused instance stays paused across a stop and start of its workspace
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'paused');
  await sync();
  assert.equal((await dev.get(`/managed-services/${instance.id}`)).body.status, 'synchronized');
  assert.equal(await ask('/'), '1');
});

test('a managed service is seen only by its team', { skip }, async () => {
  const [instance] = await instanceOf();
  assertProblem(await outsider.get(`/managed-services/${instance.id}`), 404, 'not-found');
  assertProblem(await dev.get('/managed-services/00000000-0000-4000-8000-000000000000'), 404, 'not-found');
});

test('removing db from the file deletes the instance and its data; its tombstone is listed as recently deleted', { skip }, async () => {
  const [instance] = await instanceOf();
  const volume = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app');
  await writeFile(path.join(volume, 'svc.yml'), `schema: svc/v1\nservices:\n${webService.replace(/ {4}env:\n.*\n/, '')}`);
  await sync();
  const shown = (await dev.get(`/managed-services/${instance.id}`)).body;
  assert.equal(shown.status, 'deleted');
  assert.equal(typeof shown.deleted_at, 'string');
  assert.equal(existsSync(instanceDir(server.server.config.dataDir, instance.number)), false);
  const team = shown.team_id;
  assert.deepEqual((await dev.get(`/teams/${team}/managed-services?deleted=true`)).body.items.map((i: { id: string }) => i.id), [instance.id]);
  assert.deepEqual((await dev.get(`/teams/${team}/managed-services`)).body.items, []);
});

test('purging the workspace deletes its instances and their data', { skip }, async () => {
  const volume = path.join(server.server.config.dataDir, 'volumes', String(ws), 'app');
  await writeFile(path.join(volume, 'svc.yml'), svcYml);
  await sync();
  const live = (await instanceOf()).at(-1)!;
  const directory = instanceDir(server.server.config.dataDir, live.number);
  assert.equal(existsSync(directory), true);
  const shown = await dev.get(`/workspaces/${ws}`);
  const deleted = await dev.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await finished(deleted.body.id)).state, 'succeeded');
  const purged = await dev.post(`/workspaces/${ws}/purge`);
  assert.equal((await finished(purged.body.id)).state, 'succeeded');
  assert.equal(existsSync(directory), false);
});
