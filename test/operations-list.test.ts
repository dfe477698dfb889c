// GET /operations: what a person may see (their own and their teams'), newest first, filters and pages.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { insertOperation } from '../src/store/operations.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let alice: ApiClient;
let bob: ApiClient;
let teamA: number;
let teamB: number;
const ids: Record<string, string> = {};

before(async () => {
  server = await startTestServer();
  const a = await createPerson(server.admin, 'ops-alice@example.com');
  const b = await createPerson(server.admin, 'ops-bob@example.com');
  alice = a.key;
  bob = b.key;
  const org = (await server.admin.post('/orgs', { name: 'Ops' })).body.id;
  teamA = (await server.admin.post('/teams', { org_id: org, name: 'Ops A' })).body.id;
  teamB = (await server.admin.post('/teams', { org_id: org, name: 'Ops B' })).body.id;
  await server.admin.put(`/teams/${teamA}/members/${a.id}`, { role: 'viewer' });
  await server.admin.put(`/teams/${teamB}/members/${b.id}`, { role: 'viewer' });
  const pool = server.server.database.pool;
  const start = Date.now() - 60_000;
  const add = async (name: string, teamId: number | null, createdBy: number | null, offset: number, state: 'succeeded' | 'running' | 'failed', kind = 'test.listed', target: string | null = null) => {
    const id = randomUUID();
    await insertOperation(pool, { id, kind, target, teamId, createdBy, input: {}, at: new Date(start + offset) });
    // a lease held elsewhere keeps this server's worker away from these made-up operations
    await pool.query("UPDATE operations SET state = $2, lease_owner = 'elsewhere', lease_until = now() + interval '1 hour' WHERE id = $1", [id, state]);
    ids[name] = id;
  };
  await add('a1', teamA, null, 1, 'succeeded');
  await add('a2', teamA, null, 2, 'running');
  await add('b1', teamB, null, 3, 'succeeded');
  await add('mine', null, a.id, 4, 'succeeded');
  await add('a3', teamA, null, 4, 'succeeded');
  await add('sync-failed', teamA, null, 5, 'failed', 'landscape.sync', '/workspaces/4242');
});
after(async () => server?.close());

const names = (items: { id: string }[]) => items.map((i) => Object.keys(ids).find((k) => ids[k] === i.id)).filter(Boolean);

test('each person sees their own operations and their teams\', newest first', async () => {
  const seen = (await alice.get('/operations')).body;
  assert.deepEqual(names(seen.items).sort(), ['a1', 'a2', 'a3', 'mine', 'sync-failed']);
  assert.deepEqual(names(seen.items).slice(-2), ['a2', 'a1']);
  assert.deepEqual(names((await bob.get('/operations')).body.items), ['b1']);
  assert.deepEqual(names((await server.admin.get('/operations')).body.items).sort(), ['a1', 'a2', 'a3', 'b1', 'mine', 'sync-failed']);
});

test('filters: a team, only active ones; a team one cannot see is not found', async () => {
  assert.deepEqual(names((await alice.get(`/operations?team=${teamA}&active=true`)).body.items), ['a2']);
  assert.deepEqual(names((await alice.get(`/operations?team=${teamA}`)).body.items).sort(), ['a1', 'a2', 'a3', 'sync-failed']);
  assertProblem(await alice.get(`/operations?team=${teamB}`), 404, 'not-found');
});

test('pages follow next_cursor without gaps or repeats, also for operations created in the same instant', async () => {
  const collected: string[] = [];
  let cursor: string | undefined;
  do {
    const page = (await alice.get(`/operations?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
    collected.push(...(names(page.items) as string[]));
    cursor = page.next_cursor;
  } while (cursor);
  assert.deepEqual(collected.sort(), ['a1', 'a2', 'a3', 'mine', 'sync-failed']);
  assertProblem(await alice.get('/operations?cursor=forged.cursor'), 422, 'invalid-cursor');
  const other = (await alice.get('/operations?limit=1')).body.next_cursor;
  assertProblem(await alice.get(`/operations?active=true&cursor=${encodeURIComponent(other)}`), 422, 'invalid-cursor');
});

test('filters: state, kind and workspace; each keeps its own cursors; bad values are 422', async () => {
  assert.deepEqual(names((await alice.get('/operations?state=failed')).body.items), ['sync-failed']);
  assert.deepEqual(names((await alice.get('/operations?state=succeeded')).body.items).sort(), ['a1', 'a3', 'mine']);
  assert.deepEqual(names((await alice.get('/operations?kind=landscape.sync')).body.items), ['sync-failed']);
  assert.deepEqual(names((await alice.get('/operations?workspace=4242&state=failed')).body.items), ['sync-failed']);
  assert.deepEqual(names((await alice.get('/operations?workspace=4243')).body.items), []);
  const next = (await alice.get('/operations?state=succeeded&limit=1')).body.next_cursor;
  assertProblem(await alice.get(`/operations?state=failed&cursor=${encodeURIComponent(next)}`), 422, 'invalid-cursor');
  assertProblem(await alice.get('/operations?state=done'), 422, 'validation');
  assertProblem(await alice.get('/operations?kind=DROP%20TABLE'), 422, 'validation');
  assertProblem(await alice.get('/operations?workspace=abc'), 422, 'validation');
});
