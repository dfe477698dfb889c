// Volume owner migration (spec 4.7, issue 19): after security.defaultUid (--default-uid) changed and the server
// restarted, POST /teams/{team}/volume-owner hands every volume of the team, soft-deleted ones included, to its new
// UID with group 0; a volume with a file that cannot be changed fails the operation and keeps its old UID.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ManualClock } from '../src/core/clock.ts';
import { loadServerConfig } from '../src/core/config.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { EventStream } from './helpers/events.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { startTestServer, TEST_VOLUME_BACKEND } from './helpers/server.ts';

const asRoot = process.getuid?.() === 0;
let database: TestDatabase;
let dataDir: string;
let server: RunningServer | undefined;
const ids: number[] = [];
let locked: string | undefined;

async function start(extra: string[]): Promise<RunningServer> {
  const config = loadServerConfig(['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '0', ...extra], {
    DATABASE_URL: database.url,
    SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'),
    SVC_DATA_PLANE: 'node',
    SVC_VOLUME_BACKEND: TEST_VOLUME_BACKEND,
  });
  return startServer({ ...config, logLevel: 'silent' }, { clock: new ManualClock(new Date()), logger: false });
}

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-owner-'));
});
after(async () => {
  if (locked) execFileSync('chattr', ['-i', locked]);
  await server?.close();
  await removeWorkspaces(createLocalDriver({ dataDir }), ids);
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const volume = (id: number) => path.join(dataDir, 'volumes', String(id));

/** Owner, group and mode of every entry of the volume (the root as '.'). */
async function ownership(id: number): Promise<Map<string, { uid: number; gid: number; mode: number; dir: boolean }>> {
  const found = new Map();
  const walk = async (rel: string) => {
    const s = await lstat(path.join(volume(id), rel));
    found.set(rel, { uid: s.uid, gid: s.gid, mode: s.mode & 0o7777, dir: s.isDirectory() });
    if (s.isDirectory()) for (const name of await readdir(path.join(volume(id), rel))) await walk(rel === '.' ? name : `${rel}/${name}`);
  };
  await walk('.');
  return found;
}

function assertOwnedBy(entries: Awaited<ReturnType<typeof ownership>>, uid: number, except: string[] = []): void {
  for (const [rel, entry] of entries) {
    if (except.includes(rel)) continue;
    assert.equal(entry.uid, uid, `${rel} belongs to ${entry.uid}`);
    assert.equal(entry.gid, 0, `${rel} has group ${entry.gid}`);
    assert.equal((entry.mode >> 3) & 0o7, (entry.mode >> 6) & 0o7, `${rel}: group permissions equal the user's (${entry.mode.toString(8)})`);
    if (entry.dir) assert.ok(entry.mode & 0o2000, `${rel}: setgid on directories`);
  }
}

/** The UID the workspace's editor pod runs as, from its record and /proc. */
async function podUid(id: number): Promise<number> {
  const record = JSON.parse(await readFile(path.join(dataDir, 'pods', `${id}.json`), 'utf8')) as { pid: number };
  const status = await readFile(`/proc/${record.pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
}

test('volume owner: three workspaces (one soft-deleted, one with a file the job cannot change), the exact outcomes', { skip: !asRoot && 'needs root (chown, chattr)' }, async () => {
  server = await start([]);
  await server.database.pool.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const anonymous = new ApiClient(server.url);
  const session = await anonymous.signInWithLink(new URL(server.firstSignInLink!).hash.replace('#token=', ''));
  const key = await session.mintKey();
  const org = (await key.post('/orgs', { name: 'Owners' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Owners' })).body.id;
  const made: Record<string, number> = {};
  for (const name of ['alpha', 'bravo', 'charlie']) {
    const created = await key.post('/workspaces', { team_id: team, name });
    assert.equal(created.status, 202, created.text);
    made[name] = Number(created.body.target.split('/')[2]);
    ids.push(made[name]);
    assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  }
  const { alpha, bravo, charlie } = made;
  const oldUid = (id: number) => lstat(volume(id)).then((s) => s.uid);
  const before = { alpha: await oldUid(alpha), bravo: await oldUid(bravo), charlie: await oldUid(charlie) };
  assert.equal(await podUid(alpha), before.alpha, 'pods run as the volume owner');
  // Files as the workspace's processes leave them: its UID's, some private to the user.
  for (const [name, id] of Object.entries(made)) {
    await mkdir(path.join(volume(id), 'app', 'src', 'deep'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(volume(id), 'app', 'src', 'deep', 'main.txt'), 'hello\n', { mode: 0o640 });
    await writeFile(path.join(volume(id), 'home', 'private.txt'), 'mine\n', { mode: 0o600 });
    if (id === charlie) await writeFile(path.join(volume(id), 'app', 'locked.txt'), 'cannot change\n');
    execFileSync('chown', ['-R', `${before[name as keyof typeof before]}:0`, volume(id)]);
  }
  locked = path.join(volume(charlie), 'app', 'locked.txt');
  execFileSync('chattr', ['+i', locked]);
  const deleted = await key.delete(`/workspaces/${bravo}`, { headers: { 'if-match': '*' } });
  assert.equal(deleted.status, 202, deleted.text);
  assert.equal((await operationFinished(key, deleted.body.id)).state, 'succeeded');
  await server.close();

  // The operator moves security.defaultUid: every workspace's UID moves by the same amount.
  server = await start(['--default-uid', '300001']);
  const moved = (uid: number) => uid - 100001 + 300001;
  const admin = new ApiClient(server.url, session.auth);
  const adminKey = new ApiClient(server.url, key.auth);
  const person = await createPerson(adminKey, 'member@example.com');

  assertProblem(await adminKey.post(`/teams/${team}/volume-owner`), 403, 'session-required');
  assertProblem(await person.session.post(`/teams/${team}/volume-owner`), 403, 'forbidden');
  assertProblem(await admin.post(`/teams/${team}/volume-owner`, undefined, { noCsrf: true }), 403, 'csrf');
  assertProblem(await admin.post('/teams/99999999/volume-owner'), 404, 'not-found');
  assert.equal((await admin.post('/teams/0/volume-owner')).status, 422);

  const events = await EventStream.open(admin);
  await events.next('ready');
  const started = await admin.post(`/teams/${team}/volume-owner`);
  assert.equal(started.status, 202, started.text);
  assert.equal(started.headers.get('location'), `/api/v1/operations/${started.body.id}`);
  assert.equal(started.body.kind, 'workspace.volume_owner');
  assertProblem(await admin.post(`/teams/${team}/volume-owner`), 409, 'volume-owner-running');

  const finished = await operationFinished(admin, started.body.id);
  assert.equal(finished.state, 'failed');
  assert.equal(finished.error.type, 'urn:svc:problem:volume-owner-failed');
  assert.deepEqual(finished.error.workspaces, [
    { id: charlie, name: 'charlie', reason: 'could not change /data/app/locked.txt (operation not permitted (immutable or append-only file?))' },
  ]);
  assert.match(finished.error.detail, /^2 of 3 volumes now belong to their new UID; these keep their old UID: charlie: /);

  // Each one showed Stopped "Changing the owner of the volume" on the way (workspace.updated events).
  for (const id of [alpha, bravo, charlie]) {
    await events.next('workspace.updated', (e) => e.workspace_id === id && e.workspace.state === 'stopped' && e.workspace.status_detail === 'Changing the owner of the volume', 30_000);
  }

  // alpha: every file the new UID's, running again under it.
  assertOwnedBy(await ownership(alpha), moved(before.alpha));
  await until(async () => ((await admin.get(`/workspaces/${alpha}`)).body.state === 'running' ? true : undefined), 'alpha to run again', 120_000);
  assert.equal(await podUid(alpha), moved(before.alpha));
  // bravo: re-owned, still soft-deleted.
  assertOwnedBy(await ownership(bravo), moved(before.bravo));
  const bravoNow = (await admin.get(`/workspaces/${bravo}`)).body;
  assert.deepEqual([bravoNow.state, bravoNow.status_detail, typeof bravoNow.deleted_at], ['deleting', '(soft-deleted)', 'string']);
  // charlie: keeps its old UID and runs again as it; the locked file is untouched.
  await until(async () => ((await admin.get(`/workspaces/${charlie}`)).body.state === 'running' ? true : undefined), 'charlie to run again', 120_000);
  assert.equal(await podUid(charlie), before.charlie);
  assert.equal((await lstat(locked)).uid, before.charlie);

  // Once the file can be changed, a second run finishes charlie; then nothing needs it any more.
  execFileSync('chattr', ['-i', locked]);
  locked = undefined;
  const again = await admin.post(`/teams/${team}/volume-owner`);
  assert.equal(again.status, 202, again.text);
  const second = await operationFinished(admin, again.body.id);
  assert.equal(second.state, 'succeeded', JSON.stringify(second));
  assert.equal(second.detail, '1 of 1 volumes now belong to their new UID');
  assertOwnedBy(await ownership(charlie), moved(before.charlie));
  await until(async () => ((await admin.get(`/workspaces/${charlie}`)).body.state === 'running' ? true : undefined), 'charlie to run again', 120_000);
  assert.equal(await podUid(charlie), moved(before.charlie));
  assertProblem(await admin.post(`/teams/${team}/volume-owner`), 409, 'volume-owner-unneeded');

  // A new workspace takes its UID from the new range.
  const fresh = await adminKey.post('/workspaces', { team_id: team, name: 'delta' });
  const delta = Number(fresh.body.target.split('/')[2]);
  ids.push(delta);
  assert.equal((await operationFinished(adminKey, fresh.body.id)).state, 'succeeded');
  assert.equal(await oldUid(delta), moved(before.charlie) + 1);
  events.close();
});

test('a runtime that cannot re-own files (the local one without root) answers 501 not-available', async () => {
  const plain = await startTestServer({ driver: ({ dataDir: dir, clock }) => createLocalDriver({ dataDir: dir, clock, asRoot: false }) });
  try {
    const org = (await plain.admin.post('/orgs', { name: 'Plain' })).body.id;
    const team = (await plain.admin.post('/teams', { org_id: org, name: 'Plain' })).body.id;
    const refused = await plain.adminSession.post(`/teams/${team}/volume-owner`);
    assertProblem(refused, 501, 'not-available');
    assert.match(refused.body.detail, /cannot change the owner of volumes/);
  } finally {
    await plain.close();
  }
});
