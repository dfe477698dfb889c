import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration } from './activity.ts';

test('keep-awake durations: hours, minutes, seconds, their mix, or plain seconds; anything else is none', () => {
  assert.equal(parseDuration('2h'), 7200);
  assert.equal(parseDuration('90m'), 5400);
  assert.equal(parseDuration('1h30m'), 5400);
  assert.equal(parseDuration('45s'), 45);
  assert.equal(parseDuration('3600'), 3600);
  for (const bad of ['', 'h', '2 hours', '1.5h', '-1h', '30m1h']) assert.equal(parseDuration(bad), undefined, bad);
});
