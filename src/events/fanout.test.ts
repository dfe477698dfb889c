import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import { encodeNotification, type EventRow, type StandingRow } from '../store/events.ts';
import { EventFanout, PING_INTERVAL_MS, type EventStore } from './fanout.ts';
import { FakeSink } from './fake-sink.ts';
import { EventFeed, type NotificationSource } from './feed.ts';
import type { Subscriber } from './hub.ts';

const ORG = '00000000-0000-4000-8000-000000000001';

class FakeHub implements NotificationSource {
  isLive = true;
  subscriber?: Subscriber;
  auth?: Subscriber;
  subscribe(channel: string, subscriber: Subscriber) {
    if (channel === 'svc_auth') this.auth = subscriber;
    else this.subscriber = subscriber;
    return () => (channel === 'svc_auth' ? (this.auth = undefined) : (this.subscriber = undefined));
  }
  async whenListening(): Promise<void> {}
  /** Notifications carrying only ids: the rows are read (events too large to carry). */
  notify(...ids: number[]) {
    for (const id of ids) this.subscriber!.notify(String(id));
  }
  /** Notifications carrying their events, as insertEvent sends them when they fit. */
  carry(...rows: EventRow[]) {
    for (const row of rows) this.subscriber!.notify(encodeNotification(row));
  }
  lose() {
    this.isLive = false;
    this.subscriber!.reset();
  }
  reconnect() {
    this.isLive = true;
    this.subscriber!.reset();
  }
}

class FakeStore implements EventStore {
  readonly events = new Map<number, EventRow>();
  readonly standings = new Map<number, StandingRow>();
  readonly reads: number[][] = [];
  readonly standingReads: number[][] = [];
  failing = false;

  add(id: number, type: string, ids: { team_id?: number; org_id?: string; user_id?: number } = {}): EventRow {
    const data = JSON.stringify({ type, at: '2025-01-01T00:00:00.000Z', team_id: ids.team_id, org_id: ids.org_id });
    const row = { id, type, team_id: ids.team_id ?? null, org_id: ids.org_id ?? null, workspace_id: null, user_id: ids.user_id ?? null, data };
    this.events.set(id, row);
    return row;
  }
  stand(userId: number, teams: number[], orgs: string[] = [], isAdmin = false) {
    this.standings.set(userId, { user_id: userId, is_admin: isAdmin, team_ids: teams, org_ids: orgs });
  }
  async findEvents(ids: readonly number[]) {
    if (this.failing) throw new Error('database down');
    this.reads.push([...ids]);
    // Unordered on purpose, as SQL answers.
    return ids.flatMap((id) => this.events.get(id) ?? []).reverse();
  }
  async loadStandings(userIds: readonly number[]) {
    this.standingReads.push([...userIds]);
    return userIds.flatMap((id) => this.standings.get(id) ?? []);
  }
  async orgMembersAmong(orgIds: readonly string[], userIds: readonly number[]) {
    return userIds.filter((id) => this.standings.get(id)?.org_ids.some((org) => orgIds.includes(org)));
  }
}

async function setUp(options: { pingMs?: number; limits?: { maxQueuedBytes: number; maxQueuedFrames: number } } = {}) {
  const hub = new FakeHub();
  const store = new FakeStore();
  const logged: string[] = [];
  const feed = new EventFeed({ hub, findEvents: (ids) => store.findEvents(ids), log: (m) => logged.push(m) });
  await feed.start();
  const fanout = new EventFanout({ store, hub, feed, clock: new ManualClock(new Date('2025-01-01T00:00:00Z')), log: (m) => logged.push(m), ...options });
  await fanout.start();
  const open = async (userId: number, team?: number, keyId?: string) => {
    const sink = new FakeSink();
    const subscription = fanout.open({ userId, team, keyId }, sink);
    await fanout.settled();
    return { sink, subscription };
  };
  return { hub, store, feed, fanout, open, logged };
}

test('ready goes out first; notified events are read in one query and delivered in notification order', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1]);
  store.stand(8, [1]);
  const a = await open(7);
  const b = await open(8);
  assert.deepEqual(a.sink.events, ['ready']);
  store.add(5, 'team.updated', { team_id: 1 });
  store.add(4, 'members.updated', { team_id: 1 });
  hub.notify(5, 4);
  await fanout.settled();
  assert.deepEqual(store.reads, [[5, 4]], 'one read for notifications that arrived together, once for all subscribers');
  assert.deepEqual(a.sink.events, ['ready', 'team.updated', 'members.updated']);
  assert.equal(b.sink.text, a.sink.text);
  assert.match(a.sink.text, /^id: 0\nevent: ready\ndata: \{"type":"ready","at":"2025-01-01T00:00:00.000Z"\}\n\nid: 5\nevent: team.updated\n/);
  await fanout.stop();
});

test('each subscriber gets what it may see; the team filter narrows further', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1], [ORG]);
  store.stand(8, [2]);
  store.stand(1, [], [], true);
  const seven = await open(7);
  const eight = await open(8);
  const admin = await open(1);
  const adminOfTwo = await open(1, 2);
  store.add(1, 'team.updated', { team_id: 1 });
  store.add(2, 'team.updated', { team_id: 2 });
  store.add(3, 'org.updated', { org_id: ORG });
  store.add(4, 'access.changed', { user_id: 8 });
  store.add(5, 'operation.updated', { team_id: 2, user_id: 7 });
  hub.notify(1, 2, 3, 4, 5);
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'team.updated', 'org.updated', 'operation.updated']);
  assert.deepEqual(eight.sink.events, ['ready', 'team.updated', 'access.changed', 'operation.updated']);
  assert.deepEqual(admin.sink.events, ['ready', 'team.updated', 'team.updated', 'org.updated', 'operation.updated']);
  assert.deepEqual(adminOfTwo.sink.events, ['ready', 'team.updated', 'operation.updated']);
  assert.match(adminOfTwo.sink.text, /id: 2\n/);
  await fanout.stop();
});

test('an access.changed is read before the events after it: a removed member misses the next event of the team', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1, 2]);
  const seven = await open(7);
  store.stand(7, [2]); // removed from team 1; the removal's transaction announced access.changed
  store.add(10, 'access.changed', { user_id: 7 });
  store.add(11, 'team.updated', { team_id: 1 });
  hub.notify(10, 11);
  await fanout.settled();
  store.add(12, 'team.updated', { team_id: 1 });
  store.add(13, 'team.updated', { team_id: 2 });
  hub.notify(12, 13);
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'access.changed', 'team.updated']);
  assert.match(seven.sink.text, /id: 13\n/);
  await fanout.stop();
});

test('a team created in an organization reaches its owners, whose standing is read again', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [], [ORG]);
  store.stand(8, [3]);
  const owner = await open(7);
  const outsider = await open(8);
  store.stand(7, [5], [ORG]);
  store.add(20, 'team.created', { team_id: 5, org_id: ORG });
  hub.notify(20);
  await fanout.settled();
  assert.deepEqual(owner.sink.events, ['ready', 'team.created']);
  assert.deepEqual(outsider.sink.events, ['ready']);
  assert.deepEqual(store.standingReads.at(-1), [7], 'only the members of that organization are read again');
  await fanout.stop();
});

test('ready again to every subscriber after a reconnect, not when the connection is lost; new streams wait for it', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1]);
  const seven = await open(7);
  hub.lose();
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready']);
  const late = await open(7);
  assert.deepEqual(late.sink.events, [], 'no ready while nothing is listened to');
  store.stand(7, []); // changed while down: read again before ready
  hub.reconnect();
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'ready']);
  assert.deepEqual(late.sink.events, ['ready']);
  store.add(30, 'team.updated', { team_id: 1 });
  hub.notify(30);
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'ready'], 'the standing was refreshed on reconnect');
  await fanout.stop();
});

test('a ping every 25 seconds to every stream', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const { store, fanout, open } = await setUp();
  store.stand(7, []);
  const seven = await open(7);
  t.mock.timers.tick(PING_INTERVAL_MS - 1);
  assert.deepEqual(seven.sink.events, ['ready']);
  t.mock.timers.tick(1);
  assert.deepEqual(seven.sink.events, ['ready', 'ping']);
  t.mock.timers.tick(PING_INTERVAL_MS);
  assert.deepEqual(seven.sink.events, ['ready', 'ping', 'ping']);
  await fanout.stop();
});

test('a subscriber that stops reading is dropped at its cap while the others keep receiving', async () => {
  const { hub, store, fanout, open } = await setUp({ limits: { maxQueuedBytes: 64 * 1024, maxQueuedFrames: 20 } });
  store.stand(7, [1]);
  const slow = await open(7);
  const fast = await open(7);
  slow.sink.full = true;
  for (let id = 100; id < 150; id++) {
    store.add(id, 'team.updated', { team_id: 1 });
    hub.notify(id);
    await fanout.settled();
    assert.ok(slow.subscription.writer.queued.frames <= 20, 'the queue never passes its cap');
  }
  assert.ok(slow.sink.destroyed, 'the slow client was dropped');
  assert.equal(slow.sink.chunks.length, 2, 'ready and the first event went to the socket; nothing after the drop');
  assert.equal(fanout.size, 1);
  assert.equal(fast.sink.events.length, 51);
  await fanout.stop();
  assert.ok(fast.sink.ended);
});

test('when the events cannot be read, every stream ends (clients reconnect and re-read)', async () => {
  const { hub, store, fanout, open, logged } = await setUp();
  store.stand(7, [1]);
  const seven = await open(7);
  store.failing = true;
  hub.notify(40);
  await fanout.settled();
  assert.ok(seven.sink.ended);
  assert.equal(fanout.size, 0);
  assert.match(logged.join('\n'), /cannot read events: database down/);
  await fanout.stop();
});

test('a stream closed before its ready gets none, and its user is forgotten', async () => {
  const { store, fanout } = await setUp();
  store.stand(7, [1]);
  const sink = new FakeSink();
  const subscription = fanout.open({ userId: 7 }, sink);
  fanout.close(subscription);
  await fanout.settled();
  assert.deepEqual(sink.events, []);
  assert.equal(fanout.size, 0);
  assert.deepEqual(store.standingReads, [], 'nothing was read for it');
  await fanout.stop();
  const after = new FakeSink();
  fanout.open({ userId: 7 }, after);
  assert.ok(after.ended, 'a stopped fan-out ends new streams at once');
});

test('deleting or regenerating an API key ends the streams opened with it', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1]);
  const withKey = await open(7, undefined, 'key-1');
  const withOtherKey = await open(7, undefined, 'key-2');
  const withSession = await open(7);
  hub.auth!.notify('key:key-1');
  hub.auth!.notify('user:7');
  assert.ok(withKey.sink.ended);
  assert.ok(!withOtherKey.sink.ended && !withSession.sink.ended);
  assert.equal(fanout.size, 2);
  await fanout.stop();
});

test('a batch goes to each stream in one write holding the events it may see, in order; streams seeing the same share it', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1]);
  store.stand(8, [2]);
  store.add(1, 'team.updated', { team_id: 1 });
  store.add(2, 'team.updated', { team_id: 2 });
  store.add(3, 'workspace.updated', { team_id: 1 });
  const first = await open(7);
  const second = await open(7);
  const filtered = await open(8, 2);
  const other = await open(9);
  const before = [first, second, filtered, other].map((s) => s.sink.chunks.length);
  hub.notify(1, 2, 3);
  await fanout.settled();
  assert.deepEqual(store.reads.at(-1), [1, 2, 3]);
  const written = [first, second, filtered, other].map((s, i) => s.sink.chunks.slice(before[i]));
  assert.equal(written[0].length, 1, 'one write for the whole batch');
  assert.equal(second.sink.texts.at(-1), first.sink.texts.at(-1), 'one encoded text (one Buffer) for both streams');
  assert.match(written[0][0], /^id: 1\nevent: team\.updated\n[^]*\n\nid: 3\nevent: workspace\.updated\n[^]*\n\n$/);
  assert.equal(written[1][0], written[0][0], 'the same user: the same text');
  assert.deepEqual(written[2].map((chunk) => [...chunk.matchAll(/^id: (\d+)$/gm)].map((m) => m[1])), [['2']]);
  assert.deepEqual(written[3], [], 'a user who may see none of them gets nothing');
});

test('events carried in their notifications are delivered without reading a row; a large one is read, in its place', async () => {
  const { hub, store, feed, fanout, open } = await setUp();
  store.stand(7, [1]);
  const seven = await open(7);
  const small = store.add(1, 'team.updated', { team_id: 1 });
  store.add(2, 'workspace.updated', { team_id: 1 }); // too large to carry: the notification holds its id
  const after = store.add(3, 'team.updated', { team_id: 1 });
  hub.carry(small);
  hub.notify(2);
  hub.carry(after);
  await fanout.settled();
  assert.deepEqual(store.reads, [[2]], 'only the row of the large event was read');
  assert.equal(feed.rowsRead, 1);
  assert.deepEqual(seven.sink.events, ['ready', 'team.updated', 'workspace.updated', 'team.updated']);
  assert.deepEqual([...seven.sink.text.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]), ['0', '1', '2', '3'], 'in notification order');
  assert.ok(seven.sink.text.includes(`data: ${small.data}\n\n`), 'the carried data is sent as it was written');
  await fanout.stop();
});

test('a carried access.changed is applied before the events after it, like a read one', async () => {
  const { hub, store, fanout, open } = await setUp();
  store.stand(7, [1, 2]);
  const seven = await open(7);
  store.stand(7, [2]);
  hub.carry(store.add(10, 'access.changed', { user_id: 7 }), store.add(11, 'team.updated', { team_id: 1 }), store.add(12, 'team.updated', { team_id: 2 }));
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'access.changed', 'team.updated']);
  assert.match(seven.sink.text, /id: 12\n/);
  assert.deepEqual(store.reads, []);
  await fanout.stop();
});

test('a notification that is neither an id nor an event is logged and ignored', async () => {
  const { hub, store, fanout, open, logged } = await setUp();
  store.stand(7, [1]);
  const seven = await open(7);
  hub.subscriber!.notify('12 team.updated 1 - - - not json');
  hub.subscriber!.notify('x');
  hub.carry(store.add(13, 'team.updated', { team_id: 1 }));
  await fanout.settled();
  assert.deepEqual(seven.sink.events, ['ready', 'team.updated']);
  assert.equal(logged.filter((m) => m.includes('ignored notification')).length, 2);
  await fanout.stop();
});
