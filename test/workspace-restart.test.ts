// A server killed in the middle of a workspace operation finishes it after a restart: no operation stays running.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startSvc, stopSvc, type SvcProcess } from './helpers/process.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

let database: TestDatabase;
let repository: BareRepository | undefined;
let dataDir: string;
let running: SvcProcess | undefined;
const workspaceIds: number[] = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-restart-'));
});
after(async () => {
  await stopSvc(running);
  await removeWorkspaces(createLocalDriver({ dataDir }), workspaceIds);
  await repository?.remove();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ url: string; link?: string }> {
  running = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--allow-local-repositories', 'true'], {
    DATABASE_URL: database.url,
  });
  const [, url] = await running.waitFor(/listening on (\S+)\n/);
  const link = /^\s+(http\S+#token=\S+)$/m.exec(running.stdout())?.[1];
  return { url, link };
}

test('kill -9 while cloning, start again: the create operation ends and the workspace runs', async () => {
  // A repository large enough that the clone is still under way when the server is killed.
  repository = await createBareRepository({ 'README.md': 'big\n', 'blob.bin': randomBytes(24 * 1024 * 1024).toString('base64') });
  const first = await start();
  const [, link] = await running!.waitFor(/^\s+(http\S+#token=\S+)$/m);
  await offsetWorkspaceIds(database);
  const admin = await new ApiClient(first.url).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await admin.mintKey();
  const org = (await key.post('/orgs', { name: 'Restart' })).body.id;
  const team = (await key.post('/teams', { org_id: org, name: 'Restart' })).body.id;
  const created = await key.post('/workspaces', { team_id: team, name: 'survivor', git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  workspaceIds.push(id);
  const deadline = Date.now() + 30_000;
  while ((await key.get(`/workspaces/${id}`)).body.state !== 'cloning') {
    if (Date.now() > deadline) throw new Error('never saw the clone start');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  running!.child.kill('SIGKILL');
  await running!.exited;
  assert.equal((await findState(database.url, created.body.id)), 'running', 'the operation was cut off while running');

  const second = await start();
  const again = new ApiClient(second.url, { token: key.auth.token });
  const finishBy = Date.now() + 120_000;
  let operation;
  do {
    operation = (await again.get(`/operations/${created.body.id}`)).body;
    if (Date.now() > finishBy) throw new Error(`operation still ${operation.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (operation.state === 'running' || operation.state === 'pending');
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  const ws = (await again.get(`/workspaces/${id}`)).body;
  assert.equal(ws.state, 'running');
});

/** This file's own block of workspace ids (pods are named by id on the one machine; see helpers/database.ts). */
async function offsetWorkspaceIds(db: TestDatabase): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${db.firstWorkspaceId}`);
  await client.end();
}

async function findState(url: string, id: string): Promise<string> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const state = (await client.query('SELECT state FROM operations WHERE id = $1', [id])).rows[0].state;
  await client.end();
  return state;
}
