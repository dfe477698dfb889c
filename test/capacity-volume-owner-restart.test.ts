// The volume owner change is a durable operation (spec 4.7, issue 19): a server killed (kill -9) while it re-owns a
// volume leaves the operation running; started again, the server takes it up from the workspace it was at, and
// the workspace ends on its new UID, running again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const asRoot = process.getuid?.() === 0;
let database: TestDatabase;
let dataDir: string;
let running: SvcProcess | undefined;
const ids: number[] = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-owner-restart-'));
});
after(async () => {
  await stopSvc(running);
  await removeWorkspaces(createLocalDriver({ dataDir }), ids);
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(extra: string[] = []): Promise<string> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...extra], {
    DATABASE_URL: database.url,
    SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'),
    SVC_DATA_PLANE: 'node',
  });
  return (await running.waitFor(/listening on (\S+)\n/))[1];
}

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

test('kill -9 while a volume is re-owned, start again: the operation ends and the workspace runs under its new UID', { skip: !asRoot && 'needs root (chown)' }, async () => {
  const first = await start();
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  await query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const session = await new ApiClient(first).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await session.mintKey();
  const org = (await key.post('/orgs', { name: 'Restart' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Restart' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'many-files' });
  const id = Number(created.body.target.split('/')[2]);
  ids.push(id);
  assert.equal((await operationFinished(key, created.body.id)).state, 'succeeded');
  const volume = path.join(dataDir, 'volumes', String(id));
  const oldUid = (await lstat(volume)).uid;
  // Enough files that the walk is still under way when the server is killed.
  for (let d = 0; d < 20; d++) {
    const dir = path.join(volume, 'app', 'files', String(d));
    await mkdir(dir, { recursive: true });
    execFileSync('sh', ['-c', 'seq 1 4000 | xargs touch'], { cwd: dir });
  }
  execFileSync('chown', ['-R', `${oldUid}:0`, volume]);
  await stopSvc(running);

  const second = await start(['--default-uid', '300001']);
  const admin = new ApiClient(second, session.auth);
  const started = await admin.post(`/teams/${team}/volume-owner`);
  assert.equal(started.status, 202, started.text);
  await until(async () => ((await query<{ before_reown: string | null }>('SELECT before_reown FROM workspaces WHERE id = $1', [id]))[0].before_reown ? true : undefined), 'the workspace to be held for the change', 60_000);
  running!.child.kill('SIGKILL');
  await running!.exited;
  const [cut] = await query<{ state: string }>('SELECT state FROM operations WHERE id = $1', [started.body.id]);
  assert.equal(cut.state, 'running', 'the operation was cut off while running');

  const third = await start(['--default-uid', '300001']);
  const again = new ApiClient(third, session.auth);
  const finished = await operationFinished(again, started.body.id);
  assert.equal(finished.state, 'succeeded', JSON.stringify(finished));
  const newUid = oldUid - 100001 + 300001;
  const owners = execFileSync('find', [volume, '-printf', '%U:%G\\n'], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(owners.length, 80_000 + 26); // the files, their 21 directories, the volume's root, app/, home/, .svc/ and .svc/layout
  assert.deepEqual([...new Set(owners)], [`${newUid}:0`]);
  await until(async () => ((await again.get(`/workspaces/${id}`)).body.state === 'running' ? true : undefined), 'the workspace to run again', 120_000);
  const record = JSON.parse(await readFile(path.join(dataDir, 'pods', `${id}.json`), 'utf8')) as { pid: number };
  assert.match(await readFile(`/proc/${record.pid}/status`, 'utf8'), new RegExp(`^Uid:\\s+${newUid}\\s`, 'm'));
});
