import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventConsumer } from '../events/feed.ts';
import { concerns, revocationCloseCode, StreamGuard, type GuardedStream, type Revocation, type StreamHolder } from './stream-guard.ts';

const holder: StreamHolder = { userId: 7, keyId: 'k1', teamId: 3, workspaceId: 11 };
const event = (type: string, ids: { team_id?: number; org_id?: string; workspace_id?: number; user_id?: number } = {}) => ({
  event: { type, team_id: ids.team_id ?? null, org_id: ids.org_id ?? null, workspace_id: ids.workspace_id ?? null, user_id: ids.user_id ?? null },
});

test('a key, session or user invalidation concerns the streams opened with it; any other payload concerns all', () => {
  assert.equal(concerns(holder, { auth: 'key:k1' }), true);
  assert.equal(concerns(holder, { auth: 'key:k2' }), false);
  assert.equal(concerns({ userId: 7, sessionHash: 'ab' }, { auth: 'session:ab' }), true);
  assert.equal(concerns(holder, { auth: 'session:ab' }), false);
  assert.equal(concerns(holder, { auth: 'user:7' }), true);
  assert.equal(concerns(holder, { auth: 'user:8' }), false);
  assert.equal(concerns(holder, { auth: 'all' }), true);
});

test("events concern the streams whose right they may change: the user's access.changed, the team's, the workspace's", () => {
  assert.equal(concerns(holder, event('access.changed', { user_id: 7 })), true);
  assert.equal(concerns(holder, event('access.changed', { user_id: 8 })), false);
  assert.equal(concerns(holder, event('members.updated', { team_id: 3 })), true);
  assert.equal(concerns(holder, event('members.updated', { team_id: 4 })), false);
  assert.equal(concerns(holder, event('members.updated', { org_id: 'o' })), false);
  assert.equal(concerns(holder, event('team.deleted', { team_id: 3 })), true);
  assert.equal(concerns(holder, event('org.deleted', { org_id: 'o' })), true);
  assert.equal(concerns({ userId: 7 }, event('org.deleted', { org_id: 'o' })), false);
  assert.equal(concerns(holder, event('workspace.updated', { team_id: 3, workspace_id: 11 })), true);
  assert.equal(concerns(holder, event('workspace.updated', { team_id: 3, workspace_id: 12 })), false);
  assert.equal(concerns(holder, event('operation.updated', { team_id: 3, workspace_id: 11 })), false);
});

test('revocations close WebSockets with 4000 + their status', () => {
  assert.equal(revocationCloseCode({ status: 401, reason: '' }), 4401);
  assert.equal(revocationCloseCode({ status: 403, reason: '' }), 4403);
});

function fakeSources() {
  let invalidate: (payload: string) => Promise<void> = async () => undefined;
  let consumer: EventConsumer | undefined;
  const logs: string[] = [];
  const sources = {
    onInvalidate: (listener: (payload: string) => Promise<void>) => void (invalidate = listener),
    feed: { subscribe: (c: EventConsumer) => ((consumer = c), () => (consumer = undefined)) },
    isLive: true,
    log: (m: string) => void logs.push(m),
  };
  return { sources, invalidate: (p: string) => invalidate(p), consumer: () => consumer!, logs };
}

/** A stream whose check answers what `verdict` holds at the time. */
function stream(of: StreamHolder, verdict: { now?: Revocation | Error }) {
  const revoked: Revocation[] = [];
  let checks = 0;
  const guarded: GuardedStream = {
    ...of,
    recheck: async () => {
      checks++;
      if (verdict.now instanceof Error) throw verdict.now;
      return verdict.now;
    },
    revoke: (r) => void revoked.push(r),
  };
  return { guarded, revoked, checks: () => checks };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('the guard checks the concerned streams again and revokes those that lost the right, once', async () => {
  const fake = fakeSources();
  const guard = new StreamGuard(fake.sources);
  const verdict: { now?: Revocation } = {};
  const a = stream({ userId: 7, keyId: 'k1' }, verdict);
  const b = stream({ userId: 8, keyId: 'k2' }, verdict);
  guard.open(a.guarded);
  guard.open(b.guarded);
  await fake.invalidate('key:k1');
  await settle();
  assert.deepEqual([a.checks(), b.checks(), a.revoked.length], [1, 0, 0]);
  verdict.now = { status: 401, reason: 'gone' };
  await fake.invalidate('key:k1');
  fake.consumer().events([{ id: 1, type: 'access.changed', team_id: null, org_id: null, workspace_id: null, user_id: 7, data: '{}' }], 0);
  await settle();
  assert.deepEqual(a.revoked, [{ status: 401, reason: 'gone' }]);
  assert.equal(b.revoked.length, 0);
  assert.equal(guard.size, 1);
  guard.close();
});

test('a failed check keeps the stream (the next trigger checks again); a released stream is never revoked', async () => {
  const fake = fakeSources();
  const guard = new StreamGuard(fake.sources);
  const verdict: { now?: Revocation | Error } = { now: new Error('database down') };
  const a = stream({ userId: 7 }, verdict);
  const release = guard.open(a.guarded);
  await fake.invalidate('user:7');
  await settle();
  assert.equal(a.revoked.length, 0);
  assert.match(fake.logs[0], /database down/);
  verdict.now = { status: 403, reason: 'no' };
  release();
  await fake.invalidate('user:7');
  await settle();
  assert.deepEqual([a.checks(), a.revoked.length, guard.size], [1, 0, 0]);
  guard.close();
});

test('a trigger during a check runs one more check after it; a reconnection checks every stream', async () => {
  const fake = fakeSources();
  const guard = new StreamGuard(fake.sources);
  const verdict: { now?: Revocation } = {};
  const a = stream({ userId: 7, teamId: 3 }, verdict);
  guard.open(a.guarded, true);
  await fake.invalidate('user:7');
  await settle();
  assert.equal(a.checks(), 2);
  fake.consumer().reset();
  await settle();
  assert.equal(a.checks(), 3);
  guard.close();
});
