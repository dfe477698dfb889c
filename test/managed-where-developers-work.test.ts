// Managed services where developers work (issue 34, item 4), through the real server, real pods, a real PostgreSQL
// and the real CLI: the connection values of the landscape's managed services in `svc exec` shells of the editor pod
// (psql connects with no arguments) and of a replica (SVC_MANAGED_* only), current after a Sync that adds one; the
// password revealed to a developer (API and `svc managed show --reveal`), refused to a viewer with 403, each reveal
// audited; and the documented `svc port-forward WS db:5432:LOCAL` then `psql` with the revealed password.
// Needs root (pods with their own network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { managedSkip as skip, removeManagedInstances, startManagedServer } from './helpers/managed-landscape.ts';
import { runSvc, startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import type { TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      DATABASE_URL: from-the-file
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    secrets:
      password: \${{ secrets.DB_PASSWORD }}
`;
const webJs = `require('node:http').createServer((req, res) => res.end('web')).listen(8080, '0.0.0.0');\n`;
const PASSWORD = 'p@ss word';

let server: TestServer;
let driver: RuntimeDriver;
let tools: string;
let dev: ApiClient;
let viewer: ApiClient;
let repository: BareRepository;
let ws: number;
let svcEnv: Record<string, string>;
const tunnels: SvcProcess[] = [];

async function sync(): Promise<void> {
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const done = await operationFinished(dev, started.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
}

async function managedId(name: string): Promise<string> {
  const list = await dev.get(`/teams/${(await dev.get(`/workspaces/${ws}`)).body.team_id}/managed-services?workspace=${ws}`);
  const found = (list.body.items as Array<{ id: string; name: string }>).find((m) => m.name === name);
  assert.ok(found, list.text);
  return found.id;
}

before(async () => {
  if (skip) return;
  ({ server, driver, tools } = await startManagedServer());
  const owner = await createPerson(server.admin, 'devday-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Devday' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Devday' })).body.id;
  const developer = await createPerson(server.admin, 'devday-dev@example.com');
  const watcher = await createPerson(server.admin, 'devday-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'web.js': webJs });
  const created = await dev.post('/workspaces', { team_id: team, name: 'devday', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
  await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: PASSWORD });
  await sync();
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, XDG_CONFIG_HOME: tools };
});

after(async () => {
  if (skip) return;
  for (const tunnel of tunnels) await stopSvc(tunnel);
  await removeWorkspaces(driver, [ws]);
  await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await repository?.remove();
  await rm(tools, { recursive: true, force: true });
});

const shownEnv = (names: string[]) => names.map((name) => `echo "${name}=\${${name}-unset}"`).join('; ');

test('svc exec in the editor pod has the managed service\'s connection values, and psql connects with no arguments', { skip }, async () => {
  const names = ['SVC_MANAGED_DB_HOST', 'SVC_MANAGED_DB_PORT', 'SVC_MANAGED_DB_USER', 'SVC_MANAGED_DB_PASSWORD', 'SVC_MANAGED_DB_DATABASE', 'SVC_MANAGED_DB_URL', 'DATABASE_URL', 'PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE'];
  const run = await runSvc(['exec', String(ws), '--', 'sh', '-c', shownEnv(names)], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  const url = 'postgresql://app:p%40ss%20word@db:5432/app';
  assert.equal(
    run.stdout,
    [
      'SVC_MANAGED_DB_HOST=db', 'SVC_MANAGED_DB_PORT=5432', 'SVC_MANAGED_DB_USER=app', `SVC_MANAGED_DB_PASSWORD=${PASSWORD}`, 'SVC_MANAGED_DB_DATABASE=app',
      `SVC_MANAGED_DB_URL=${url}`, `DATABASE_URL=${url}`, 'PGHOST=db', 'PGPORT=5432', 'PGUSER=app', `PGPASSWORD=${PASSWORD}`, 'PGDATABASE=app', '',
    ].join('\n'),
  );
  const psql = await runSvc(['exec', String(ws), '--', 'psql', '-tAc', 'SELECT current_user || \' \' || current_database()'], svcEnv);
  assert.equal(psql.code, 0, psql.stderr);
  assert.equal(psql.stdout.trim(), 'app app');
});

test('the editor pod keeps the values in its memory for the editor\'s terminals: an interactive sh reads them through $ENV', { skip }, async () => {
  const file = await until(async () => {
    const read = await runSvc(['exec', String(ws), '--', 'sh', '-c', 'cat /tmp/svc/managed-services.env && stat -c %a /tmp/svc/managed-services.env'], svcEnv);
    return read.code === 0 ? read.stdout : undefined;
  }, 'the values file in the editor pod');
  assert.match(file, /^export PGHOST=db$/m);
  assert.match(file, /^export SVC_MANAGED_DB_PASSWORD='p@ss word'$/m);
  assert.match(file, /^600$/m);
  // what code-server's terminal is: an interactive sh with the editor's environment, ENV included
  const editorEnv = await runSvc(['exec', String(ws), '--', 'sh', '-c', "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^ENV=/tmp/svc/managed-services.env$'"], svcEnv);
  assert.ok(Number(editorEnv.stdout.trim()) >= 1, `the editor's processes carry ENV: ${editorEnv.stdout} ${editorEnv.stderr}`);
  const terminal = await runSvc(['exec', String(ws), '--', 'env', '-i', 'ENV=/tmp/svc/managed-services.env', 'sh', '-i', '-c', 'echo "$PGUSER@$PGHOST:$PGPORT/$PGDATABASE $SVC_MANAGED_DB_PASSWORD"'], svcEnv);
  assert.equal(terminal.stdout, 'app@db:5432/app p@ss word\n', terminal.stderr);
});

test('a workspace variable of the same name wins over the usual name in the editor pod', { skip }, async () => {
  await dev.put(`/workspaces/${ws}/variables/PGDATABASE`, { value: 'mine' });
  try {
    const run = await runSvc(['exec', String(ws), '--', 'sh', '-c', shownEnv(['PGDATABASE', 'SVC_MANAGED_DB_DATABASE'])], svcEnv);
    assert.equal(run.stdout, 'PGDATABASE=mine\nSVC_MANAGED_DB_DATABASE=app\n', run.stderr);
  } finally {
    await dev.delete(`/workspaces/${ws}/variables/PGDATABASE`);
  }
});

test('svc exec in a replica gets SVC_MANAGED_* but never over the service\'s own env', { skip }, async () => {
  await until(async () => {
    const services = (await dev.get(`/workspaces/${ws}/landscape`)).body.services as Array<{ name: string; status: string }>;
    return ['running', 'internal'].includes(services.find((s) => s.name === 'web')?.status ?? '') ? true : undefined;
  }, 'web to run');
  const run = await runSvc(['exec', String(ws), '--service', 'web', '--', 'sh', '-c', shownEnv(['SVC_MANAGED_DB_HOST', 'SVC_MANAGED_DB_PASSWORD', 'DATABASE_URL', 'PGPASSWORD'])], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `SVC_MANAGED_DB_HOST=db\nSVC_MANAGED_DB_PASSWORD=${PASSWORD}\nDATABASE_URL=from-the-file\nPGPASSWORD=unset\n`);
});

test('a developer reveals the password (API and svc managed show --reveal), a viewer is refused with 403; each is audited', { skip }, async () => {
  const id = await managedId('db');
  const revealed = await dev.post(`/managed-services/${id}/reveal`);
  assert.equal(revealed.status, 200, revealed.text);
  assert.equal(revealed.headers.get('cache-control'), 'no-store');
  assert.deepEqual(revealed.body, { name: 'db', provider: 'postgres', host: 'db', port: 5432, user: 'app', database: 'app', password: PASSWORD, url: 'postgresql://app:p%40ss%20word@db:5432/app' });
  assertProblem(await viewer.post(`/managed-services/${id}/reveal`), 403, 'forbidden');
  // what a viewer may read never holds the password
  const seen = await viewer.get(`/managed-services/${id}`);
  assert.equal(seen.status, 200);
  assert.doesNotMatch(seen.text, /p@ss/);

  const shown = await runSvc(['managed', 'show', 'db', '--ws', String(ws), '--reveal'], svcEnv);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^Password: +p@ss word$/m);
  assert.match(shown.stdout, /^URL: +postgresql:\/\/app:p%40ss%20word@db:5432\/app$/m);
  const plain = await runSvc(['managed', 'show', 'db', '--ws', String(ws)], svcEnv);
  assert.doesNotMatch(plain.stdout, /Password|p@ss/);
  const refused = await runSvc(['managed', 'show', 'db', '--ws', String(ws), '--reveal'], { ...svcEnv, SVC_TOKEN: viewer.auth.token! });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /variables\.manage/);

  const entries = (await server.admin.get('/audit-log?action=managed_service.reveal&limit=200')).body.items as Array<{ outcome: number; actor_id: number; target: string }>;
  const target = `/managed-services/${id}/reveal`;
  assert.equal(entries.filter((e) => e.outcome === 200 && e.actor_id === dev.auth.userId && e.target === target).length, 2, JSON.stringify(entries));
  assert.equal(entries.filter((e) => e.outcome === 403 && e.actor_id === viewer.auth.userId && e.target === target).length, 2, JSON.stringify(entries));
});

test('the documented svc port-forward WS db:5432:LOCAL then psql works with the revealed password', { skip }, async () => {
  const password = (await dev.post(`/managed-services/${await managedId('db')}/reveal`)).body.password as string;
  const tunnel = startSvc(['port-forward', String(ws), 'db:5432:0'], svcEnv);
  tunnels.push(tunnel);
  await tunnel.waitFor(/Press Ctrl-C to stop/);
  const port = Number(/Forwarding 127\.0\.0\.1:(\d+) ->/.exec(tunnel.stdout())![1]);
  const { stdout } = await promisify(execFile)('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'app', 'app', '-tAc', 'SELECT 40 + 2'], {
    env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '20' },
  });
  assert.equal(stdout.trim(), '42');
});

test('a Sync that adds a managed service: the next shell has its values, the usual names stay with the first', { skip }, async () => {
  const added = startSvc(['exec', '-i', String(ws), '--', 'sh', '-c', 'cat >> svc.yml'], svcEnv);
  added.child.stdin.end('  cache-db:\n    type: managed\n    provider: postgres\n    providerVersion: "16"\n');
  assert.equal(await added.exited, 0, added.stderr());
  await sync();
  const run = await runSvc(['exec', String(ws), '--', 'sh', '-c', shownEnv(['SVC_MANAGED_CACHE_DB_HOST', 'SVC_MANAGED_CACHE_DB_USER', 'SVC_MANAGED_DB_HOST', 'PGHOST'])], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'SVC_MANAGED_CACHE_DB_HOST=cache-db\nSVC_MANAGED_CACHE_DB_USER=app\nSVC_MANAGED_DB_HOST=db\nPGHOST=db\n');
  const file = await runSvc(['exec', String(ws), '--', 'cat', '/tmp/svc/managed-services.env'], svcEnv);
  assert.match(file.stdout, /^export SVC_MANAGED_CACHE_DB_HOST=cache-db$/m, 'the Sync rewrote the editor pod\'s file');
  const password = (await runSvc(['exec', String(ws), '--', 'sh', '-c', 'echo "$SVC_MANAGED_CACHE_DB_PASSWORD"'], svcEnv)).stdout.trim();
  assert.equal(password.length, 32); // generated (docs/managed.md, "Secrets")
  const psql = await runSvc(['exec', String(ws), '--', 'sh', '-c', 'psql "$SVC_MANAGED_CACHE_DB_URL" -tAc "SELECT 1"'], svcEnv);
  assert.equal(psql.stdout.trim(), '1', psql.stderr);
});

test('after a sleep and a wake the editor pod has the values file again (its /tmp is new)', { skip }, async () => {
  const slept = await dev.post(`/workspaces/${ws}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  const woken = await runSvc(['exec', String(ws), '--', 'true'], svcEnv); // wakes it
  assert.equal(woken.code, 0, woken.stderr);
  const file = await until(async () => {
    const read = await runSvc(['exec', String(ws), '--', 'cat', '/tmp/svc/managed-services.env'], svcEnv);
    return read.code === 0 ? read.stdout : undefined;
  }, 'the values file after the wake');
  assert.match(file, /^export SVC_MANAGED_DB_HOST=db$/m);
  assert.match(file, /^export SVC_MANAGED_CACHE_DB_HOST=cache-db$/m);
});
