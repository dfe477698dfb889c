// An instance whose deployed settings the installation no longer accepts (spec 3.4 `invalid-provider`, issue 14): a
// real `svc` server whose plans file offers postgres plans small and medium creates `db` on medium; restarted with a
// plans file that dropped medium, db shows invalid-provider with the setting and why (managed_service.updated), keeps
// running with its row, Plan refuses the file as it stands, and a Sync of the file on plan small brings it back.
// Needs root (the service network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ApiClient } from './helpers/client.ts';
import { managedSkip as skip, webService } from './helpers/managed-landscape.ts';
import { prepareManagedRestarts, type ManagedRestarts } from './helpers/managed-restarts.ts';
import { operationFinished, until } from './helpers/wait.ts';

const svcYml = (plan: string) => `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    plan: ${plan}
${webService}`;

const postgresPlan = (id: string, memory: number) => `      ${id}:
        resources:
          cpu: { value: 500, min: 250, max: 2000 }
          memory: { value: ${memory}, min: 128, max: 2048 }
          storage: { value: 1024, min: 512, max: 8192 }
          connections: { value: 50, min: 10, max: 200 }
`;
const plansFile = (postgresPlans: string) => `workspace:
  default: standard
  plans:
    standard: { cpu: 2, memory: 4GiB, storageGib: 10 }
service:
  default: standard
  plans:
    standard: { cpu: 1, memory: 1GiB, maxReplicas: 10 }
managed:
  postgres:
    default: small
    plans:
${postgresPlans}`;

let fixture: ManagedRestarts | undefined;
let plans: string;

before(async () => {
  if (skip) return;
  fixture = await prepareManagedRestarts('managed-settings', { 'svc.yml': svcYml('medium') });
  plans = path.join(fixture.tools, 'plans.yml');
});

after(() => fixture?.close());

/** Starts `svc server` on the same database and data directory with the plans file as it is now. */
const start = () => fixture!.startProcess({ SVC_PLANS_FILE: plans });

test('a plan the plans file dropped makes the instance invalid-provider at the restart; it keeps its data and a Sync brings it back', { skip }, async () => {
  const f = fixture!;
  await writeFile(plans, plansFile(postgresPlan('small', 256) + postgresPlan('medium', 512)));
  const key = await f.adminKey(await start());
  const { team, ws } = await f.createWorkspace(key, 'Settings', 'settings');
  const instance = f.instance;
  const made = await instance(key);
  assert.deepEqual([made.plan, made.status, made.resources.memory], ['medium', 'synchronized', 512]);
  assert.equal(await f.ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');
  await f.stopProcess();
  const [{ last }] = await f.query<{ last: string }>('SELECT coalesce(max(id), 0) AS last FROM events');

  // The operator drops plan medium: at the start db is invalid-provider, saying which setting and why.
  await writeFile(plans, plansFile(postgresPlan('small', 256)));
  const second = new ApiClient(await start(), { token: key.auth.token });
  // The health check runs when the server starts, before it listens; waiting costs nothing when it has.
  const refused = await until(async () => {
    const shown = await instance(second);
    return shown.status === 'invalid-provider' ? shown : undefined;
  }, 'db to be invalid-provider');
  assert.equal(
    refused.details.reason,
    'its settings are no longer accepted by this installation: plan "medium" of service db is not a plan of provider postgres any more; choose small; ' +
      'its data is kept, and a Sync with settings this installation accepts brings it back',
  );
  const events = await f.query<{ payload: { managed_service_id: string; team_id: number } }>("SELECT payload FROM events WHERE type = 'managed_service.updated' AND id > $1", [last]);
  assert.deepEqual(events.map((e) => [e.payload.managed_service_id, e.payload.team_id]), [[made.id, team]]);
  // Nothing was stopped or deleted: db still answers with its row.
  assert.equal(await f.ask('SELECT body FROM notes'), 'kept');
  const landscape = (await second.get(`/workspaces/${ws}/landscape`)).body.services.find((s: { name: string }) => s.name === 'db');
  assert.equal(landscape.status, 'failure');

  // The file as it stands names the dropped plan: Plan refuses it with its place.
  const stale = await second.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(stale.status, 422, stale.text);
  assert.deepEqual(stale.body.errors.map((e: { code: string; pointer: string; line: number }) => [e.code, e.pointer, e.line]), [['unknown-plan', '/services/db/plan', 7]]);

  // The file on plan small: Sync brings db back, its row kept.
  await writeFile(path.join(f.dataDir, 'volumes', String(ws), 'app', 'svc.yml'), svcYml('small'));
  await f.sync(second);
  const back = await instance(second);
  assert.deepEqual([back.status, back.plan, back.resources.memory, back.details.reason], ['synchronized', 'small', 256, undefined]);
  assert.equal(await f.ask('SELECT body FROM notes'), 'kept');

  // The purge deletes the instance and its data.
  const shown = await second.get(`/workspaces/${ws}`);
  const deleted = await second.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(second, deleted.body.id)).state, 'succeeded');
  assert.equal((await operationFinished(second, (await second.post(`/workspaces/${ws}/purge`)).body.id)).state, 'succeeded');
});
