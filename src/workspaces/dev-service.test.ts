import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ESTIMATED_WAKE_SECONDS, wakeSeconds } from './dev-service.ts';

test('wake_seconds: the last wake as measured, rounded up to whole seconds and at least 1; the estimate before any', () => {
  assert.equal(wakeSeconds(undefined), ESTIMATED_WAKE_SECONDS);
  assert.equal(wakeSeconds(0), 1);
  assert.equal(wakeSeconds(3.2), 4);
  assert.equal(wakeSeconds(8), 8);
});
