// GET /api/v1/events end to end: ready first, each caller only the events they may see, the team filter,
// removal taking effect at once, ready again after the listening connection is cut.
// Events reach a server in commit order, so "X was not delivered" is shown by waiting for a later event Y.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { EVENT_RETENTION_MS, publishEvent, sweepEvents } from '../src/events/publish.ts';
import { operationView } from '../src/operations/view.ts';
import { withTransaction } from '../src/store/database.ts';
import { decodeNotification, EVENTS_CHANNEL, findEvents, NOTIFY_PAYLOAD_LIMIT } from '../src/store/events.ts';
import { findOperation } from '../src/store/operations.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream, type StreamEvent } from './helpers/events.ts';
import { until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

type Person = { session: ApiClient; key: ApiClient; id: number };

let server: TestServer;
let owner: Person;
let alice: Person;
let bob: Person;
let carol: Person;
let org: string;
const team = { a: 0, b: 0, c: 0 };
const streams: EventStream[] = [];

before(async () => {
  server = await startTestServer();
  owner = await createPerson(server.admin, 'owner@example.com');
  alice = await createPerson(server.admin, 'alice@example.com');
  bob = await createPerson(server.admin, 'bob@example.com');
  carol = await createPerson(server.admin, 'carol@example.com');
  org = (await owner.key.post('/orgs', { name: 'Events Org' })).body.id;
  for (const name of ['a', 'b', 'c'] as const) {
    team[name] = (await owner.key.post('/teams', { org_id: org, name: `Team ${name}` })).body.id;
  }
  await addMember(team.a, alice, 'developer');
  await addMember(team.b, bob, 'viewer');
  await addMember(team.a, carol, 'viewer');
  await addMember(team.c, carol, 'viewer');
});
after(async () => {
  for (const stream of streams) stream.close();
  await server?.close();
});

async function addMember(teamId: number, person: { id: number }, role = 'viewer') {
  const answer = await owner.key.put(`/teams/${teamId}/members/${person.id}`, { role });
  assert.equal(answer.status, 204, answer.text);
}

let renames = 0;
async function renameTeam(teamId: number) {
  const current = await owner.key.get(`/teams/${teamId}`);
  const answer = await owner.key.patch(`/teams/${teamId}`, { name: `Renamed ${++renames}` }, { headers: { 'if-match': current.headers.get('etag')! } });
  assert.equal(answer.status, 200, answer.text);
}

/** Opens a stream and consumes its `ready`. */
async function subscribe(client: ApiClient, query = ''): Promise<EventStream> {
  const stream = await EventStream.open(client, query);
  streams.push(stream);
  await stream.next('ready');
  return stream;
}

const teamOf = (id: number) => (data: { team_id?: number }) => data.team_id === id;
const summary = (events: StreamEvent[]) => events.map((e) => `${e.event} ${e.data.team_id ?? e.data.user_id ?? ''}`.trim());

describe('GET /api/v1/events', () => {
  test('without credentials, or with a bad key, the stream answers 401', async () => {
    assertProblem(await EventStream.answer(server.anonymous), 401, 'unauthenticated');
    assertProblem(await EventStream.answer(server.anonymous.withToken('svc_nope_nope')), 401, 'unauthenticated');
  });

  test('the answer is text/event-stream, not stored, and starts with ready (id 0) once the subscription is live', async () => {
    const stream = await EventStream.open(alice.session);
    streams.push(stream);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(stream.headers.get('cache-control'), 'no-store');
    assert.ok(stream.headers.get('svc-version'));
    const first = await stream.until('ready');
    assert.equal(first.length, 1, 'ready is the first event');
    assert.equal(first[0].id, '0');
    assert.equal(first[0].data.type, 'ready');
    assert.ok(!Number.isNaN(Date.parse(first[0].data.at)));
    stream.close();
  });

  test('each subscriber receives only its own teams\' events, an administrator both; API key and session alike', async () => {
    const ofAlice = await subscribe(alice.session);
    const ofBob = await subscribe(bob.key);
    const ofAdmin = await subscribe(server.admin);
    const eve = await createPerson(server.admin, 'eve@example.com');
    await renameTeam(team.a);
    await renameTeam(team.b);
    await addMember(team.a, eve);
    await addMember(team.b, eve);
    await renameTeam(team.a);
    await renameTeam(team.b);

    await ofAlice.until('team.updated', teamOf(team.a));
    const aliceSaw = await ofAlice.until('team.updated', teamOf(team.a));
    assert.deepEqual(summary(ofAlice.received), ['ready', `team.updated ${team.a}`, `members.updated ${team.a}`, `team.updated ${team.a}`]);
    assert.equal(aliceSaw.at(-1)!.data.type, 'team.updated');
    assert.ok(Number(aliceSaw.at(-1)!.id) > 0);

    await ofBob.until('team.updated', teamOf(team.b));
    await ofBob.until('team.updated', teamOf(team.b));
    assert.deepEqual(summary(ofBob.received), ['ready', `team.updated ${team.b}`, `members.updated ${team.b}`, `team.updated ${team.b}`]);

    await ofAdmin.until('team.updated', teamOf(team.b));
    await ofAdmin.until('team.updated', teamOf(team.b));
    assert.deepEqual(summary(ofAdmin.received), [
      'ready',
      `team.updated ${team.a}`,
      `team.updated ${team.b}`,
      `members.updated ${team.a}`,
      `members.updated ${team.b}`,
      `team.updated ${team.a}`,
      `team.updated ${team.b}`,
    ], 'administrators see every team but not other users\' access.changed');
    const ids = ofAdmin.received.slice(1).map((e) => Number(e.id));
    assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'ids rise in commit order here');
    for (const stream of [ofAlice, ofBob, ofAdmin]) stream.close();
  });

  test('the team filter narrows to one team; a team the caller cannot see is 404, a malformed one 422', async () => {
    const filtered = await subscribe(server.admin, `?team=${team.b}`);
    await renameTeam(team.a);
    await renameTeam(team.b);
    assert.deepEqual(summary(await filtered.until('team.updated')), [`team.updated ${team.b}`]);
    assertProblem(await EventStream.answer(alice.key, `?team=${team.b}`), 404, 'not-found');
    assertProblem(await EventStream.answer(alice.key, '?team=987654'), 404, 'not-found');
    assertProblem(await EventStream.answer(alice.key, '?team=0'), 422, 'validation');
    assertProblem(await EventStream.answer(alice.key, '?team=first'), 422, 'validation');
    assert.equal((await EventStream.answer(alice.key, `?team=${team.a}`)).status, 200);
    filtered.close();
  });

  test('workspace events reach the team with the full workspace; operation events also the operation\'s creator', async () => {
    const ofAlice = await subscribe(alice.key);
    const ofBob = await subscribe(bob.key);
    const pool = server.server.database.pool;
    const workspace = { id: 4242, team_id: team.a, name: 'api', state: 'running' };
    // A finished operation started by Bob (inserted finished, so no worker picks it up and announces it too).
    const inserted = await pool.query(
      `INSERT INTO operations (id, kind, state, target, team_id, created_by, created_at, updated_at, finished_at)
       VALUES ($1, 'workspace.create', 'succeeded', '/workspaces/4242', $2, $3, now(), now(), now()) RETURNING id`,
      [randomUUID(), team.a, bob.id],
    );
    const operation = (await findOperation(pool, inserted.rows[0].id))!;
    await withTransaction(pool, async (db) => {
      const at = new Date().toISOString();
      await publishEvent(db, { type: 'workspace.updated', at, team_id: team.a, workspace_id: workspace.id, workspace });
      await publishEvent(db, { type: 'operation.updated', at, team_id: team.a, operation: operationView(operation) });
    });
    await renameTeam(team.b);

    const aliceSaw = await ofAlice.until('operation.updated');
    assert.deepEqual(summary(aliceSaw), [`workspace.updated ${team.a}`, `operation.updated ${team.a}`]);
    assert.deepEqual(aliceSaw[0].data.workspace, workspace);
    assert.equal(aliceSaw[0].data.workspace_id, 4242);
    assert.equal(aliceSaw[1].data.operation.id, operation.id);
    assert.equal(aliceSaw[1].data.operation.state, 'succeeded');

    const bobSaw = await ofBob.until('team.updated');
    assert.deepEqual(summary(bobSaw), [`operation.updated ${team.a}`, `team.updated ${team.b}`], 'the creator sees the operation, not the workspace');
    assert.ok(!('user_id' in bobSaw[0].data), 'the recipient field stays inside the server');
    ofAlice.close();
    ofBob.close();
  });

  test('an event travels in its notification when it fits; a larger one is announced by id and read from its row', async () => {
    const pool = server.server.database.pool;
    const listener = await pool.connect();
    const payloads: string[] = [];
    listener.on('notification', (message) => message.channel === EVENTS_CHANNEL && payloads.push(message.payload ?? ''));
    await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
    try {
      const ofAlice = await subscribe(alice.key);
      const big = { id: 4243, team_id: team.a, name: 'x'.repeat(NOTIFY_PAYLOAD_LIMIT) };
      await withTransaction(pool, async (db) => {
        const at = new Date().toISOString();
        await publishEvent(db, { type: 'workspace.updated', at, team_id: team.a, workspace_id: 4243, workspace: { id: 4243, name: 'small' } });
        await publishEvent(db, { type: 'workspace.updated', at, team_id: team.a, workspace_id: 4243, workspace: big });
      });
      const saw = await ofAlice.until('workspace.updated', (data) => data.workspace.name !== 'small');
      assert.deepEqual(saw.map((e) => e.data.workspace.name.length), [5, NOTIFY_PAYLOAD_LIMIT], 'both arrive whole, in order');
      await until(async () => (payloads.length >= 2 ? true : undefined), 'both notifications');
      const [carried, announced] = payloads.slice(-2).map(decodeNotification);
      assert.ok(typeof carried === 'object' && carried !== null, 'the small event is in its notification');
      assert.equal(typeof announced, 'number', 'the large one is announced by its id');
      const [row] = await findEvents(pool, [carried.id]);
      assert.deepEqual(carried, row, 'the carried event is the row, to the byte');
      assert.equal(Number(saw[1].id), announced);
      ofAlice.close();
    } finally {
      listener.release();
    }
  });

  test('a member removed from a team stops receiving its events at once, and gets access.changed', async () => {
    const ofCarol = await subscribe(carol.key);
    const ofAdmin = await subscribe(server.admin);
    assert.equal((await owner.key.delete(`/teams/${team.a}/members/${carol.id}`)).status, 204);
    await renameTeam(team.a);
    await renameTeam(team.c);
    const carolSaw = await ofCarol.until('team.updated', teamOf(team.c));
    assert.ok(carolSaw.some((e) => e.event === 'access.changed'), `access.changed in ${summary(carolSaw)}`);
    assert.ok(!carolSaw.some((e) => e.event === 'team.updated' && e.data.team_id === team.a), `no team.updated of A in ${summary(carolSaw)}`);
    const adminSaw = await ofAdmin.until('team.updated', teamOf(team.c));
    assert.ok(!adminSaw.some((e) => e.event === 'access.changed'), 'access.changed goes only to its user');

    await addMember(team.a, carol);
    await renameTeam(team.a);
    // members.updated of the same commit may come before Carol's standing is read again; the rename after it may not.
    const back = summary(await ofCarol.until('team.updated')).filter((e) => !e.startsWith('members.updated'));
    assert.deepEqual(back, [`access.changed`, `team.updated ${team.a}`]);
    ofCarol.close();
    ofAdmin.close();
  });

  test('an org owner sees a team created after they subscribed', async () => {
    const ofOwner = await subscribe(owner.key);
    const created = await owner.key.post('/teams', { org_id: org, name: 'Late team' });
    assert.equal(created.status, 201, created.text);
    await renameTeam(created.body.id);
    assert.deepEqual(summary(await ofOwner.until('team.updated')), [`team.created ${created.body.id}`, `team.updated ${created.body.id}`]);
    ofOwner.close();
  });

  test('after the listening connection is cut, every subscriber gets ready again and events flow again', async () => {
    const ofAlice = await subscribe(alice.session);
    const ofBob = await subscribe(bob.key);
    const cut = await server.server.database.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    );
    assert.ok(cut.rowCount! >= 1, 'the listening connection was found');
    assert.deepEqual(summary(await ofAlice.until('ready', undefined, 10_000)), ['ready']);
    assert.deepEqual(summary(await ofBob.until('ready', undefined, 10_000)), ['ready']);
    await renameTeam(team.b);
    await renameTeam(team.a);
    await renameTeam(team.b);
    assert.deepEqual(summary(await ofAlice.until('team.updated')), [`team.updated ${team.a}`]);
    await ofBob.until('team.updated');
    assert.deepEqual(summary(await ofBob.until('team.updated')), [`team.updated ${team.b}`]);
    ofAlice.close();
    ofBob.close();
  });

  test('deleting the API key a stream was opened with ends the stream at once', async () => {
    const key = await alice.session.mintKey('stream key');
    const stream = await subscribe(key);
    const keyId = key.auth.token!.split('_')[1];
    assert.equal((await key.delete(`/me/api-keys/${keyId}`)).status, 204);
    await Promise.race([
      stream.ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stream stayed open')), 5000).unref()),
    ]);
    assertProblem(await EventStream.answer(key), 401, 'unauthenticated');
  });

  test('signing out ends the streams the session opened', async () => {
    const dave = await createPerson(server.admin, 'events-dave@example.com');
    const stream = await subscribe(dave.session);
    assert.equal((await dave.session.delete('/sessions/current')).status, 204);
    await Promise.race([
      stream.ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stream stayed open')), 5000).unref()),
    ]);
    assertProblem(await EventStream.answer(dave.session), 401, 'unauthenticated');
  });

  test('event rows are kept for an hour, then swept by housekeeping', async () => {
    const pool = server.server.database.pool;
    const now = new Date();
    await publishEvent(pool, { type: 'team.updated', at: new Date(now.getTime() - EVENT_RETENTION_MS - 1000).toISOString(), team_id: team.c });
    await publishEvent(pool, { type: 'team.updated', at: now.toISOString(), team_id: team.c });
    assert.ok((await sweepEvents(pool, now)) >= 1);
    const left = await pool.query('SELECT count(*)::int AS n FROM events WHERE at < $1', [new Date(now.getTime() - EVENT_RETENTION_MS)]);
    assert.equal(left.rows[0].n, 0);
    const recent = await pool.query('SELECT count(*)::int AS n FROM events WHERE at = $1', [now]);
    assert.equal(recent.rows[0].n, 1);
  });
});
