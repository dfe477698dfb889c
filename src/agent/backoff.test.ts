import assert from 'node:assert/strict';
import { test } from 'node:test';
import { editorBackoff, restartDelayMs } from './backoff.ts';

test('the restart delay doubles with each failure in a row from the base, up to the cap', () => {
  const policy = { baseMs: 250, maxMs: 10_000 };
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => restartDelayMs(n, policy)), [250, 500, 1000, 2000, 4000, 8000, 10_000]);
  assert.equal(restartDelayMs(1000, policy), 10_000);
});

test('no failure means no wait', () => {
  assert.equal(restartDelayMs(0, editorBackoff), 0);
  assert.equal(restartDelayMs(-3, editorBackoff), 0);
});
