import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../core/clock.ts';
import type { EventRow, StandingRow } from '../store/events.ts';
import { EventFanout, PING_INTERVAL_MS, type EventStore, type NotificationSource } from './fanout.ts';
import { FakeSink } from './fake-sink.ts';
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
  notify(...ids: number[]) {
    for (const id of ids) this.subscriber!.notify(String(id));
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

  add(id: number, type: string, ids: { team_id?: number; org_id?: string; user_id?: number } = {}) {
    const data = JSON.stringify({ type, at: '2025-01-01T00:00:00.000Z', team_id: ids.team_id, org_id: ids.org_id });
    this.events.set(id, { id, type, team_id: ids.team_id ?? null, org_id: ids.org_id ?? null, user_id: ids.user_id ?? null, data });
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
  const fanout = new EventFanout({ store, hub, clock: new ManualClock(new Date('2025-01-01T00:00:00Z')), log: (m) => logged.push(m), ...options });
  await fanout.start();
  const open = async (userId: number, team?: number, keyId?: string) => {
    const sink = new FakeSink();
    const subscription = fanout.open({ userId, team, keyId }, sink);
    await fanout.settled();
    return { sink, subscription };
  };
  return { hub, store, fanout, open, logged };
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
  assert.match(written[0][0], /^id: 1\nevent: team\.updated\n[^]*\n\nid: 3\nevent: workspace\.updated\n[^]*\n\n$/);
  assert.equal(written[1][0], written[0][0], 'the same user: the same text');
  assert.deepEqual(written[2].map((chunk) => [...chunk.matchAll(/^id: (\d+)$/gm)].map((m) => m[1])), [['2']]);
  assert.deepEqual(written[3], [], 'a user who may see none of them gets nothing');
});
