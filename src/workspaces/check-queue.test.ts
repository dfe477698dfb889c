// The landscape checker's queue: round robin over teams then users, running caps, held caps, drain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CheckQueue, checkQueueLimits, type CheckCaller } from './check-queue.ts';

const alice: CheckCaller = { team: 1, user: 10 };
const bob: CheckCaller = { team: 1, user: 11 };
const carol: CheckCaller = { team: 2, user: 20 };
const server: CheckCaller = { team: 3, user: null };

/** Takes checks until none may run, finishing none: their items in the order handed out. */
function takeAll(queue: CheckQueue<string>): string[] {
  const items: string[] = [];
  for (let taken = queue.take(); taken; taken = queue.take()) items.push(taken.item);
  return items;
}

test('checks are handed out round robin: team after team, and user after user within a team', () => {
  const queue = new CheckQueue<string>({ perUser: 10, perTeam: 20, runningPerTeam: 100 });
  for (let i = 0; i < 4; i++) queue.admit(alice, `alice ${i}`);
  queue.admit(bob, 'bob 0');
  queue.admit(carol, 'carol 0');
  queue.admit(carol, 'carol 1');
  queue.admit(server, 'server 0');
  assert.equal(queue.waiting, 8);
  assert.equal(queue.runnable(), 8);
  assert.deepEqual(takeAll(queue), ['alice 0', 'carol 0', 'server 0', 'bob 0', 'carol 1', 'alice 1', 'alice 2', 'alice 3']);
  assert.equal(queue.waiting, 0);
});

test("a team runs on at most runningPerTeam workers; another team's check is handed out while it waits", () => {
  const queue = new CheckQueue<string>(checkQueueLimits(2));
  assert.deepEqual(checkQueueLimits(2), { perUser: 8, perTeam: 16, runningPerTeam: 1 });
  assert.equal(checkQueueLimits(1).runningPerTeam, 1);
  assert.equal(checkQueueLimits(4).runningPerTeam, 3);
  for (let i = 0; i < 8; i++) assert.deepEqual(queue.admit(alice, `heavy ${i}`), { admitted: true });
  assert.equal(queue.runnable(), 1);
  assert.equal(queue.take()?.item, 'heavy 0');
  assert.equal(queue.runnable(), 0);
  assert.equal(queue.take(), undefined, 'the second worker stays for the others');
  queue.admit(carol, 'small');
  assert.equal(queue.runnable(), 1);
  assert.deepEqual(queue.take(), { caller: carol, item: 'small' });
  queue.finished(carol);
  queue.finished(alice);
  assert.equal(queue.take()?.item, 'heavy 1');
});

test('a team that comes while another runs goes before it: the longest unserved team is next, not the first queued', () => {
  const queue = new CheckQueue<string>({ perUser: 10, perTeam: 10, runningPerTeam: 1 });
  queue.admit(alice, 'alice 0');
  queue.admit(alice, 'alice 1');
  assert.equal(queue.take()?.item, 'alice 0');
  queue.admit(carol, 'carol 0');
  queue.admit(bob, 'bob 0');
  queue.finished(alice);
  assert.equal(queue.take()?.item, 'carol 0');
  // Within the team, bob (never served) before alice (served once).
  assert.equal(queue.take()?.item, 'bob 0');
  queue.finished(bob);
  assert.equal(queue.take()?.item, 'alice 1');
});

test('a user over perUser, or a team over perTeam, is refused until one of its checks finishes', () => {
  const queue = new CheckQueue<string>({ perUser: 2, perTeam: 3, runningPerTeam: 1 });
  assert.deepEqual(queue.admit(alice, 'a0'), { admitted: true });
  assert.deepEqual(queue.admit(alice, 'a1'), { admitted: true });
  assert.deepEqual(queue.admit(alice, 'a2'), { admitted: false, over: 'user' });
  assert.deepEqual(queue.admit(bob, 'b0'), { admitted: true });
  assert.deepEqual(queue.admit(bob, 'b1'), { admitted: false, over: 'team' });
  assert.deepEqual(queue.admit(carol, 'c0'), { admitted: true }, 'another team is not held by the first');
  // Running checks count too: the user's room is back only when a check finishes, not when it starts.
  const first = queue.take()!;
  assert.deepEqual(first, { caller: alice, item: 'a0' });
  assert.deepEqual(queue.admit(alice, 'a2'), { admitted: false, over: 'user' });
  queue.finished(alice);
  assert.deepEqual(queue.admit(alice, 'a2'), { admitted: true });
});

test("a queued operation's check is admitted over the caps and still waits its turn", () => {
  const queue = new CheckQueue<string>({ perUser: 1, perTeam: 1, runningPerTeam: 1 });
  queue.admit(alice, 'plan');
  assert.deepEqual(queue.admit(alice, 'another plan'), { admitted: false, over: 'user' });
  assert.deepEqual(queue.admit({ ...alice, operation: true }, 'sync'), { admitted: true });
  assert.deepEqual(queue.admit({ ...bob, operation: true }, 'sync of bob'), { admitted: true });
  assert.deepEqual(takeAll(queue), ['plan']);
  queue.finished(alice);
  assert.equal(queue.take()?.item, 'sync of bob');
  queue.finished(bob);
  assert.equal(queue.take()?.item, 'sync');
});

test('a user in two teams runs at most runningPerTeam checks across them', () => {
  const queue = new CheckQueue<string>({ perUser: 10, perTeam: 10, runningPerTeam: 1 });
  queue.admit(alice, 'team 1');
  queue.admit({ team: 2, user: alice.user }, 'team 2');
  assert.equal(queue.runnable(), 1);
  assert.equal(queue.take()?.item, 'team 1');
  assert.equal(queue.take(), undefined);
  queue.finished(alice);
  assert.equal(queue.take()?.item, 'team 2');
});

test('drain gives back the waiting checks and frees their room; finishing a running one afterwards forgets the caller', () => {
  const queue = new CheckQueue<string>({ perUser: 2, perTeam: 4, runningPerTeam: 1 });
  queue.admit(alice, 'a0');
  queue.admit(alice, 'a1');
  queue.admit(carol, 'c0');
  assert.equal(queue.take()?.item, 'a0');
  assert.deepEqual(queue.drain().sort(), ['a1', 'c0']);
  assert.equal(queue.waiting, 0);
  assert.equal(queue.runnable(), 0);
  assert.deepEqual(queue.admit(alice, 'a2'), { admitted: true }, 'a1 no longer counts');
  assert.deepEqual(queue.admit(alice, 'a3'), { admitted: false, over: 'user' }, 'a0 still runs');
  queue.finished(alice);
  assert.equal(queue.take()?.item, 'a2');
  queue.finished(alice);
  assert.equal(queue.take(), undefined);
  assert.deepEqual(queue.admit(alice, 'a4'), { admitted: true });
});
