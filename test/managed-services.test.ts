// Managed services through the API beyond Sync (spec 3.4, 4.10, 6): a team's list with its filters and pages,
// pause and resume by hand (operations, their refusals), the health check (`unknown` when the process is gone,
// `invalid-provider` when the operator disabled the version), managed_service.updated reaching team members only,
// and the tombstone purged 7 days after the deletion. Needs root and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import path from 'node:path';
import { rename, stat, writeFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { DAY } from '../src/core/clock.ts';
import { postgresEngine } from '../src/managed/postgres-engine.ts';
import { instanceDataDir } from '../src/managed/postgres-rules.ts';
import { insertManagedService, setManagedServiceStatus } from '../src/store/managed-services.ts';
import { assertProblem } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { runSvc } from './helpers/process.ts';
import { managedSkip as skip, startManagedLandscape, webService, type ManagedLandscape } from './helpers/managed-landscape.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

let m: ManagedLandscape;
/** The server's log messages. */
const logged: string[] = [];
let db: { id: string; number: number };
/** A workspace made in the store (no pod) with instances inserted as rows: a paused one of a disabled version and a tombstone. */
let other: { ws: number; old: string; tombstone: string };

before(async () => {
  if (skip) return;
  m = await startManagedLandscape({ env: { SVC_MANAGED_DISABLE: 'postgres:15' }, onLog: (message) => logged.push(message) });
  await m.sync();
  const pool = m.server.server.database.pool;
  db = (await pool.query('SELECT id, number FROM managed_services WHERE workspace_id = $1', [m.ws])).rows[0];
  assert.equal(await m.ask('/write'), 'CREATE TABLE\nINSERT 0 1');
  const { id: ws } = await stoppedWorkspace(pool, m.server.server.config.dataDir, { teamId: m.team, createdBy: 1, name: 'rows' });
  const row = (name: string, version: string) => insertManagedService(pool, { workspace_id: ws, team_id: m.team, name, provider: 'postgres', version, plan: 'small', status: 'paused' }, m.server.clock.now());
  const old = await row('old', '15');
  const gone = await row('gone', '16');
  await setManagedServiceStatus(pool, gone.id, { status: 'deleted' }, new Date(m.server.clock.nowMs() - DAY)); // a day before db's
  other = { ws, old: old.id, tombstone: gone.id };
});

after(async () => {
  if (!skip) await m?.close();
});

const status = async (id: string) => (await m.dev.get(`/managed-services/${id}`)).body.status;
const ids = (answer: { body: { items: Array<{ id: string }> } }) => answer.body.items.map((i) => i.id);

test("a team's list: live instances in creation order, narrowed by workspace and status, deleted=true the tombstones, in pages", { skip }, async () => {
  const list = (query = '') => m.dev.get(`/teams/${m.team}/managed-services${query}`);
  assert.deepEqual(ids(await list()), [db.id, other.old]);
  const inLandscape = (await m.dev.get(`/workspaces/${m.ws}/landscape`)).body.services.find((s: { name: string }) => s.name === 'db');
  assert.deepEqual([inLandscape.status, inLandscape.detail], ['running', 'postgres 16 synchronized']);
  assert.deepEqual(ids(await list(`?workspace=${m.ws}`)), [db.id]);
  assert.deepEqual(ids(await list('?status=synchronized')), [db.id]);
  assert.deepEqual(ids(await list('?deleted=true')), [other.tombstone]);
  const first = await list('?limit=1');
  assert.deepEqual(ids(first), [db.id]);
  const second = await list(`?limit=1&cursor=${first.body.next_cursor}`);
  assert.deepEqual([ids(second), second.body.next_cursor], [[other.old], undefined]);
  assertProblem(await list(`?deleted=true&cursor=${first.body.next_cursor}`), 422, 'invalid-cursor');
  assertProblem(await list('?status=sleeping'), 422, 'validation');
  assertProblem(await m.outsider.get(`/teams/${m.team}/managed-services`), 404, 'not-found');
});

test('pause by hand: an operation, pausing then paused, web loses its database and the data stays; managed_service.updated reaches team members only', { skip }, async () => {
  const member = await EventStream.open(m.dev);
  const stranger = await EventStream.open(m.outsider);
  await Promise.all([member.until('ready'), stranger.until('ready')]);
  const paused = await m.dev.post(`/managed-services/${db.id}/pause`);
  assert.equal(paused.status, 202, paused.text);
  assert.equal(paused.body.kind, 'managed_service.pause');
  assert.equal(paused.headers.get('location'), `/api/v1/operations/${paused.body.id}`);
  assert.equal((await m.finished(paused.body.id)).state, 'succeeded');
  assert.equal(await status(db.id), 'paused');
  const ofInstance = (d: { managed_service_id?: string; team_id?: number; workspace_id?: number }) => d.managed_service_id === db.id && d.team_id === m.team && d.workspace_id === m.ws;
  await member.until('managed_service.updated', ofInstance);
  await member.until('managed_service.updated', ofInstance);
  assert.equal((await m.askRaw('/')).status, 500);
  const shown = (await m.dev.get(`/workspaces/${m.ws}/landscape`)).body.services.find((s: { name: string }) => s.name === 'db');
  assert.deepEqual([shown.status, shown.detail, shown.replicas], ['stopped', 'postgres 16 paused; its data is kept', { ready: 0, desired: 1 }]);
  assertProblem(await m.dev.post(`/managed-services/${db.id}/pause`), 409, 'conflict');
  // Events arrive in commit order: the stranger's own team's event after the pause shows none of the pause's came first.
  await m.outsider.patch(`/teams/${m.outsiderTeam}`, { name: 'Elsewhere still' }, { headers: { 'if-match': '*' } });
  const strangerSaw = await stranger.until('team.updated');
  assert.deepEqual(strangerSaw.filter((e) => e.event === 'managed_service.updated'), []);
  member.close();
  stranger.close();

  const resumed = await m.dev.post(`/managed-services/${db.id}/resume`);
  assert.equal(resumed.status, 202, resumed.text);
  assert.equal((await m.finished(resumed.body.id)).state, 'succeeded');
  assert.equal(await status(db.id), 'synchronized');
  assert.equal(await m.ask('/'), '1');
  assertProblem(await m.dev.post(`/managed-services/${db.id}/resume`), 409, 'conflict');
});

test('a Sync resumes an instance paused by hand (the file asks for it); a resume is refused while the workspace is stopped', { skip }, async () => {
  assert.equal((await m.finished((await m.dev.post(`/managed-services/${db.id}/pause`)).body.id)).state, 'succeeded');
  await m.sync();
  assert.equal(await status(db.id), 'synchronized');
  assert.equal((await m.finished((await m.dev.post(`/managed-services/${db.id}/pause`)).body.id)).state, 'succeeded');
  assert.equal((await m.dev.post(`/workspaces/${m.ws}/stop`)).status, 200);
  const refused = await m.dev.post(`/managed-services/${db.id}/resume`);
  assertProblem(refused, 409, 'workspace-not-running');
  assert.match(refused.body.detail, /start or wake the workspace first/);
  const started = await m.dev.post(`/workspaces/${m.ws}/start`);
  assert.equal((await m.finished(started.body.id)).state, 'succeeded');
  assert.equal((await m.finished((await m.dev.post(`/managed-services/${db.id}/resume`)).body.id)).state, 'succeeded');
  assert.equal(await m.ask('/'), '1');
});

test('after Teardown a resume is refused: the next Sync brings the instance back', { skip }, async () => {
  assert.equal((await m.finished((await m.dev.post(`/workspaces/${m.ws}/landscape/teardown`)).body.id)).state, 'succeeded');
  assert.equal(await status(db.id), 'paused');
  const refused = await m.dev.post(`/managed-services/${db.id}/resume`);
  assertProblem(refused, 409, 'conflict');
  assert.match(refused.body.detail, /torn down: Sync brings it back/);
  await m.sync();
  assert.equal(await status(db.id), 'synchronized');
});

test('the health check: an instance whose process ended is unknown with its last known details; a resume by hand starts it again', { skip }, async () => {
  const host = { dataDir: m.server.server.config.dataDir, toolsDir: m.tools, log: () => undefined };
  await postgresEngine.stop(host, db.number); // as if its server had crashed
  await m.server.server.managed.checkHealth();
  const shown = (await m.dev.get(`/managed-services/${db.id}`)).body;
  assert.equal(shown.status, 'unknown');
  assert.deepEqual(shown.details, { host: 'db', port: 5432, database: 'app', user: 'app', version: '16', reason: 'its server process does not run' });
  assert.equal((await m.finished((await m.dev.post(`/managed-services/${db.id}/resume`)).body.id)).state, 'succeeded');
  const back = (await m.dev.get(`/managed-services/${db.id}`)).body;
  assert.deepEqual([back.status, back.details.reason], ['synchronized', undefined]);
  assert.equal(await m.ask('/'), '1');
});

test('svc managed list|show|pause|resume: the team\'s instances, one by name in --ws, pause and resume followed to their end', { skip }, async () => {
  const svc = (...args: string[]) => runSvc(args, { SVC_URL: m.server.url, SVC_TOKEN: m.dev.auth.token!, SVC_TEAM: String(m.team), SVC_WORKSPACE: String(m.ws), XDG_CONFIG_HOME: '/nonexistent' });
  const listed = await svc('managed', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^NAME\s+WORKSPACE\s+PROVIDER\s+PLAN\s+STATUS\s+DETAILS\s+ID\n/);
  assert.match(listed.stdout, new RegExp(`db\\s+${m.ws}\\s+postgres 16\\s+small\\s+synchronized\\s+host=db port=5432 user=app version=16 database=app\\s+${db.id}`));
  assert.match((await svc('managed', 'list', '--deleted')).stdout, new RegExp(`gone .*deleted .*${other.tombstone}`));
  const shown = await svc('managed', 'show', 'db', '--json');
  assert.equal(JSON.parse(shown.stdout).id, db.id);
  const paused = await svc('managed', 'pause', 'db');
  assert.deepEqual([paused.code, paused.stdout], [0, 'Paused db: paused.\n']);
  const again = await svc('managed', 'pause', db.id);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /paused already/);
  const resumed = await svc('managed', 'resume', 'db');
  assert.deepEqual([resumed.code, resumed.stdout], [0, 'Resumed db: synchronized.\n']);
  const missing = await svc('managed', 'show', 'nothing');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /has no managed service named "nothing"/);
});

test('an instance of a version the operator disabled is invalid-provider; its resume is refused with the reason', { skip }, async () => {
  await m.server.server.managed.checkHealth();
  const shown = (await m.dev.get(`/managed-services/${other.old}`)).body;
  assert.equal(shown.status, 'invalid-provider');
  assert.match(shown.details.reason, /postgres 15 is disabled on this installation/);
  const refused = await m.dev.post(`/managed-services/${other.old}/resume`);
  assertProblem(refused, 409, 'conflict');
  assert.match(refused.body.detail, /cannot resume: postgres 15 is disabled/);
  assertProblem(await m.dev.post(`/managed-services/${other.tombstone}/resume`), 409, 'conflict');
});

test('a new password in the vault: Plan says db restarts to take it and web gets a new DSN; Sync restarts db once and web connects with it', { skip }, async () => {
  const ofDb = (text: string) => text.includes(`managed PostgreSQL instance ${db.number}`) && /password of app changed|restarts to apply/.test(text);
  // postmaster.pid is written anew at every start (its PID is the sandbox's, the same each time, and its start time
  // counts whole seconds, so a restart within the second reads the same): its modification time in nanoseconds
  const postmaster = async () => String((await stat(path.join(instanceDataDir(m.server.server.config.dataDir, db.number), 'postmaster.pid'), { bigint: true })).mtimeNs);
  const before = await postmaster();
  assert.equal((await m.dev.put(`/workspaces/${m.ws}/secrets/DB_PASSWORD`, { value: "n3w 'pass'" })).status, 200);
  const planned = await m.dev.get(`/workspaces/${m.ws}/landscape/plan`);
  assert.equal(planned.status, 200, planned.text);
  assert.deepEqual(planned.body.services.map(({ name, action, changes, environment, restarts, reason }: Record<string, unknown>) => ({ name, action, changes, environment, restarts, reason })), [
    { name: 'db', action: 'change', changes: ['/services/db/secrets/password'], environment: ['password'], restarts: true, reason: 'the server restarts to apply the new password' },
    { name: 'web', action: 'change', changes: ['/services/web/env/DSN'], environment: ['DSN'], restarts: true, reason: undefined },
  ]);
  assert.ok(!planned.text.includes('n3w'), 'the plan names the secret, never its value');
  const events = await EventStream.open(m.dev);
  await events.until('ready');
  const logStart = logged.length;
  await m.sync();
  // One restart that gives the server its new password, not another one for the plan's restart.
  assert.deepEqual(logged.slice(logStart).filter(ofDb), [`managed PostgreSQL instance ${db.number}: the password of app changed`]);
  // updating, then synchronized
  const seen = [...(await events.until('managed_service.updated', (d) => d.managed_service_id === db.id)), ...(await events.until('managed_service.updated', (d) => d.managed_service_id === db.id))];
  events.close();
  assert.equal(seen.filter((e) => e.event === 'managed_service.updated').length, 2);
  assert.equal(await status(db.id), 'synchronized');
  assert.notEqual(await postmaster(), before, 'the server was restarted');
  assert.equal(await m.ask('/'), '1');
  const again = await m.dev.get(`/workspaces/${m.ws}/landscape/plan`);
  assert.deepEqual([again.body.changed, again.body.services], [false, []]);
});

test('a server that cannot start: Sync fails with managed-service-failed, db is unknown with PostgreSQL\'s reason and web runs; once it can, the next Sync brings it back', { skip }, async () => {
  assert.equal((await m.finished((await m.dev.post(`/workspaces/${m.ws}/landscape/teardown`)).body.id)).state, 'succeeded');
  const control = path.join(instanceDataDir(m.server.server.config.dataDir, db.number), 'global', 'pg_control');
  await rename(control, `${control}.kept`);
  const failed = await m.trySync();
  assert.equal(failed.state, 'failed', JSON.stringify(failed));
  assert.deepEqual([failed.error.type, failed.error.status], ['urn:svc:problem:managed-service-failed', 503]);
  assert.deepEqual(failed.error.managed_services.map((s: { name: string; status: string }) => [s.name, s.status]), [['db', 'unknown']]);
  assert.match(failed.error.managed_services[0].reason, /did not start: .*pg_control/);
  const shown = (await m.dev.get(`/managed-services/${db.id}`)).body;
  assert.equal(shown.status, 'unknown');
  // a server that exits at once may be seen ending by the sandbox's start (then "the sandbox of ..."): PostgreSQL's reason either way
  assert.match(shown.details.reason, /^(the sandbox of )?PostgreSQL instance \d+ did not start: .*pg_control/);
  assert.equal(shown.details.host, 'db', 'its last known details stay');
  const web = await m.askRaw('/'); // web runs; its database does not answer
  assert.equal(web.status, 500);
  assert.match(web.text, /psql/);
  const services = (await m.dev.get(`/workspaces/${m.ws}/landscape`)).body.services;
  assert.deepEqual(services.map((s: { name: string; status: string }) => [s.name, s.status]), [['db', 'failure'], ['web', 'internal']]); // internal: running, reachable inside the workspace
  await rename(`${control}.kept`, control);
  await m.sync();
  assert.equal(await status(db.id), 'synchronized');
  assert.equal(await m.ask('/'), '1');
});

test('removed from the file, the instance is deleted; its tombstone is purged 7 days later (an event), then GET answers 404', { skip }, async () => {
  await writeFile(path.join(m.server.server.config.dataDir, 'volumes', String(m.ws), 'app', 'svc.yml'), `schema: svc/v1\nservices:\n${webService.replace(/ {4}env:\n.*\n/, '')}`);
  await m.sync();
  assert.equal(await status(db.id), 'deleted');
  assertProblem(await m.dev.post(`/managed-services/${db.id}/pause`), 409, 'conflict');
  m.server.clock.advance(7 * DAY - 60_000);
  assert.deepEqual(await m.server.server.managed.purgeTombstones(), [other.tombstone]);
  const events = await EventStream.open(m.dev);
  await events.until('ready');
  m.server.clock.advance(120_000);
  assert.deepEqual(await m.server.server.managed.purgeTombstones(), [db.id]);
  await events.until('managed_service.updated', (d) => d.managed_service_id === db.id && d.team_id === m.team && d.workspace_id === m.ws);
  events.close();
  assertProblem(await m.dev.get(`/managed-services/${db.id}`), 404, 'not-found');
  assert.deepEqual(ids(await m.dev.get(`/teams/${m.team}/managed-services?deleted=true`)), []);
});
