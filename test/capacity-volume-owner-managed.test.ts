// Volume owner migration with a managed service (spec 4.7, issue 19): the change pauses the workspace's managed
// PostgreSQL, hands its data to the new UID with its modes kept, and the instance starts again with the workspace as
// the new UID, its rows kept. A data file the job cannot change fails the operation like a volume's: the workspace and
// its instance keep the old UID and run again on it. Needs root and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ManualClock } from '../src/core/clock.ts';
import { loadServerConfig } from '../src/core/config.ts';
import { managedInstanceDir } from '../src/managed/instance-process.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { ApiClient } from './helpers/client.ts';
import { managedSkip as skip, webService } from './helpers/managed-landscape.ts';
import { prepareManagedRestarts, type ManagedRestarts } from './helpers/managed-restarts.ts';
import { TEST_VOLUME_BACKEND } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';

const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
${webService}`;

let fixture: ManagedRestarts | undefined;
let server: RunningServer | undefined;
let locked: string | undefined;

before(async () => {
  if (!skip) fixture = await prepareManagedRestarts('owner-managed', { 'svc.yml': svcYml });
});

after(async () => {
  if (skip) return;
  if (locked) execFileSync('chattr', ['-i', locked]);
  await server?.close();
  await fixture?.close();
});

/** This server runs in the test's process, on a manual clock. */
async function start(extra: string[]): Promise<RunningServer> {
  const { dataDir, database, tools } = fixture!;
  const config = loadServerConfig(['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '0', '--allow-local-repositories', 'true', ...extra], {
    DATABASE_URL: database.url,
    SVC_TOOLS_DIR: tools,
    SVC_DATA_PLANE: 'node',
    SVC_VOLUME_BACKEND: TEST_VOLUME_BACKEND,
  });
  return startServer({ ...config, logLevel: 'silent' }, { clock: new ManualClock(new Date()), logger: false });
}

/** The UID the instance's postgres (the one child of its sandbox's init) runs as, from /proc. */
async function instanceUid(number: number): Promise<number> {
  const record = JSON.parse(await readFile(path.join(managedInstanceDir(fixture!.dataDir, number), 'process.json'), 'utf8')) as { initPid: number };
  const [child] = (await readFile(`/proc/${record.initPid}/task/${record.initPid}/children`, 'utf8')).trim().split(/\s+/);
  return Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${child}/status`, 'utf8'))![1]);
}

/** What the database answers to `sql` (web and db may be restarting: up to two minutes). */
const ask = (sql: string) => fixture!.ask(sql, 120_000);

test('volume owner with a managed postgres: paused, its data re-owned, running again as the new UID with its row', { skip }, async () => {
  const f = fixture!;
  server = await start([]);
  const session = await new ApiClient(server.url).signInWithLink(new URL(server.firstSignInLink!).hash.replace('#token=', ''));
  const key = await session.mintKey();
  const { team, ws } = await f.createWorkspace(key, 'Owners', 'owned');
  const instance = f.instance;
  const { id: msId } = await instance(key);
  // Its number names its directory (and its ms-<number> host); the API does not show it.
  const number = (await server.database.pool.query<{ number: number }>('SELECT number FROM managed_services WHERE id = $1', [msId])).rows[0].number;
  assert.equal(await ask("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')"), 'CREATE TABLE\nINSERT 0 1');
  const oldUid = (await lstat(path.join(f.dataDir, 'volumes', String(ws)))).uid;
  const data = path.join(managedInstanceDir(f.dataDir, number), 'data');
  assert.equal(await instanceUid(number), oldUid, 'the instance runs as the workspace UID');
  assert.deepEqual([(await lstat(data)).uid, (await lstat(data)).mode & 0o7777], [oldUid, 0o700]);
  await server.close();

  server = await start(['--default-uid', '300001']);
  const newUid = oldUid - 100001 + 300001;
  const admin = new ApiClient(server.url, session.auth);
  const running = async (what: string) => {
    await until(async () => ((await admin.get(`/workspaces/${ws}`)).body.state === 'running' ? true : undefined), `${what}: the workspace to run again`, 120_000);
    return until(async () => {
      const shown = (await admin.get(`/managed-services/${msId}`)).body;
      return shown.status === 'synchronized' || shown.status === 'unknown' ? shown : undefined;
    }, `${what}: db to settle`, 120_000);
  };

  // A data file the job cannot change: the operation fails, the workspace and db keep the old UID and run on it.
  locked = path.join(data, 'PG_VERSION');
  execFileSync('chattr', ['+i', locked]);
  const refused = await operationFinished(admin, (await admin.post(`/teams/${team}/volume-owner`)).body.id);
  assert.equal(refused.state, 'failed');
  assert.equal(refused.error.type, 'urn:svc:problem:volume-owner-failed');
  assert.deepEqual(refused.error.workspaces, [
    { id: ws, name: 'owned', reason: 'could not change /managed/db/data/PG_VERSION (operation not permitted (immutable or append-only file?))' },
  ]);
  assert.equal((await running('after the failure')).status, 'synchronized');
  assert.equal(await instanceUid(number), oldUid);
  assert.equal((await lstat(data)).uid, oldUid, 'the data went back to the old UID');
  assert.equal(await ask('SELECT body FROM notes'), 'kept');

  // Once the file can be changed, the change goes through: db paused, re-owned, running again as the new UID.
  execFileSync('chattr', ['-i', locked]);
  locked = undefined;
  const done = await operationFinished(admin, (await admin.post(`/teams/${team}/volume-owner`)).body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  assert.equal(done.detail, '1 of 1 volumes now belong to their new UID');
  const resumed = await running('after the change');
  assert.equal(resumed.status, 'synchronized', JSON.stringify(resumed));
  assert.equal(resumed.resume_with_workspace, undefined, 'the mark is not shown');
  assert.equal(await instanceUid(number), newUid);
  const after = await lstat(data);
  assert.deepEqual([after.uid, after.gid, after.mode & 0o7777], [newUid, 0, 0o700], 'the data directory keeps the mode PostgreSQL asks for');
  assert.equal((await lstat(path.join(managedInstanceDir(f.dataDir, number), 'postgres.log'))).uid, 0, "the server's own files stay root's");
  assert.equal(await ask('SELECT body FROM notes'), 'kept');

  // The purge deletes the instance and its data.
  const shown = await admin.get(`/workspaces/${ws}`);
  const keyNow = new ApiClient(server.url, key.auth);
  const deleted = await keyNow.delete(`/workspaces/${ws}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(keyNow, deleted.body.id)).state, 'succeeded');
  assert.equal((await operationFinished(keyNow, (await keyNow.post(`/workspaces/${ws}/purge`)).body.id)).state, 'succeeded');
});
