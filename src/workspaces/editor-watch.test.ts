// Which statuses an editor restart retries from, and how long it waits between tries (pure: no database, no pods).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { restartDelayMs } from '../agent/backoff.ts';
import { editorRestartBackoff, restartsFrom } from './editor-watch.ts';

test("an editor restart retries from the editor's or its agent's failure, never from a clone's or a deleted workspace's", () => {
  const row = (status_detail: string, state: 'error' | 'running' = 'error', deleted_at: Date | null = null) => ({ state, status_detail, deleted_at });
  assert.equal(restartsFrom(row('The IDE does not start: its processes ended (its sandbox exited with code 1); it is started again')), true);
  assert.equal(restartsFrom(row('Installing the agent failed: the pod exited at once')), true);
  assert.equal(restartsFrom(row('Cloning the repository failed: not found')), false, 'a clone is retried by hand (Retry)');
  assert.equal(restartsFrom(row('The IDE does not start: x', 'running')), false);
  assert.equal(restartsFrom(row('The IDE does not start: x', 'error', new Date())), false);
});

test('restarts wait 1 s after the death, doubling up to a minute', () => {
  assert.deepEqual([1, 2, 3, 6, 7, 8, 50].map((n) => restartDelayMs(n, editorRestartBackoff)), [1000, 2000, 4000, 32_000, 60_000, 60_000, 60_000]);
});
