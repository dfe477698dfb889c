import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../core/clock.ts';
import { RateLimiter } from './rate-limit.ts';

test('a burst up to the limit passes, the next waits, and tokens return with time', () => {
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const limiter = new RateLimiter(60, clock);
  for (let i = 0; i < 60; i++) assert.equal(limiter.take('a'), 0);
  assert.equal(limiter.take('a'), 1, 'one token a second at 60 a minute');
  assert.equal(limiter.take('b'), 0, 'callers are limited separately');
  clock.advance(1000);
  assert.equal(limiter.take('a'), 0);
  assert.equal(limiter.take('a'), 1);
});

test('sweep forgets callers whose bucket is full again', () => {
  const clock = new ManualClock();
  const limiter = new RateLimiter(10, clock);
  limiter.take('a');
  clock.advance(60_000);
  limiter.sweep();
  for (let i = 0; i < 10; i++) assert.equal(limiter.take('a'), 0);
});
