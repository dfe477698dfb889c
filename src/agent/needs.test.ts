import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitForNeeds, type NeedsDeps } from './needs.ts';
import type { NeedAddress } from './replica-protocol.ts';

const need = (name: string): NeedAddress => ({ name, host: name, port: 5432 });

/** A fake clock that moves only when the waiter sleeps. */
function fakeDeps(answersAt: Record<string, number>, failingAt: Record<string, number> = {}): NeedsDeps & { lines: string[] } {
  let now = 0;
  const lines: string[] = [];
  return {
    lines,
    nowMs: () => now,
    sleep: async (ms) => void (now += ms),
    answers: async (n) => answersAt[n.name] !== undefined && now >= answersAt[n.name],
    isFailing: async (n) => failingAt[n.name] !== undefined && now >= failingAt[n.name],
    log: (text) => lines.push(text),
  };
}

test('a needed service that answers in time: waiting, then answered, starting', async () => {
  const deps = fakeDeps({ db: 3000 });
  assert.deepEqual(await waitForNeeds([need('db')], 300_000, 500, deps), ['answered']);
  assert.deepEqual(deps.lines, ['Waiting for db (up to 5m0s)', 'db answered, starting']);
});

test('a needed service that never answers: after 5 minutes the replica starts anyway', async () => {
  const deps = fakeDeps({});
  assert.deepEqual(await waitForNeeds([need('api')], 300_000, 500, deps), ['timed-out']);
  assert.deepEqual(deps.lines, ['Waiting for api (up to 5m0s)', 'api did not answer within 5m0s, starting anyway']);
  assert.equal(deps.nowMs(), 300_000);
});

test('a needed service that is failing ends the wait', async () => {
  const deps = fakeDeps({}, { queue: 2000 });
  assert.deepEqual(await waitForNeeds([need('queue')], 300_000, 500, deps), ['failing']);
  assert.deepEqual(deps.lines.at(-1), 'Not waiting any more for queue because the needed service is failing');
});

test('several needs are waited for side by side', async () => {
  const deps = fakeDeps({ db: 1000, cache: 0 });
  assert.deepEqual(await waitForNeeds([need('db'), need('cache')], 300_000, 500, deps), ['answered', 'answered']);
  assert.deepEqual(deps.lines.slice(0, 2), ['Waiting for db (up to 5m0s)', 'Waiting for cache (up to 5m0s)']);
});
