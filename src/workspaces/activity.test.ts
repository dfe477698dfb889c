import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activityText, activityView, idleSleepAt, keepAwakeView, type ActivityFacts } from './activity.ts';

const at = (hhmm: string) => new Date(`2026-12-07T${hhmm}:00.000Z`);
const devUse = { kind: 'dev-url' as const, address: 'w7.example.com', firstAt: at('12:00'), lastAt: at('13:31') };
const keepAwake = { until: at('16:00'), askedBy: 3, askedByEmail: 'ann@example.com', askedAt: at('14:00') };

const asleep: ActivityFacts = { state: 'sleeping', sleepReason: 'idle', sleptAt: at('14:02'), idleTimeoutMinutes: 30, lastActivityAt: at('13:31'), lastUse: devUse };

test('an idle sleep says since when, for how long nobody used it, and the last use', () => {
  assert.equal(activityText(asleep, at('15:00')), 'asleep since 14:02 UTC: nobody used it for 30 min; last use: dev URL (w7.example.com) at 13:31 UTC');
  assert.deepEqual(activityView(asleep, at('15:00')), {
    text: 'asleep since 14:02 UTC: nobody used it for 30 min; last use: dev URL (w7.example.com) at 13:31 UTC',
    last_use_at: '2026-12-07T13:31:00.000Z',
    last_use_kind: 'dev-url',
    last_use_address: 'w7.example.com',
    asleep_since: '2026-12-07T14:02:00.000Z',
    asleep_reason_text: 'nobody used it for 30 min',
    sleeps_at: undefined,
  });
});

test('a sleep by hand names it; whole hours read as hours; a use without an address names only its kind', () => {
  assert.equal(activityText({ ...asleep, sleepReason: 'by-hand', lastUse: { ...devUse, kind: 'ssh', address: '' } }, at('15:00')), 'asleep since 14:02 UTC: put to sleep by hand; last use: ssh at 13:31 UTC');
  assert.equal(activityText({ ...asleep, idleTimeoutMinutes: 120, lastUse: undefined }, at('15:00')), 'asleep since 14:02 UTC: nobody used it for 2 h; no use recorded');
});

test('a keep-awake that held the workspace past its timeout is named once it slept after it', () => {
  const facts = { ...asleep, sleptAt: at('16:01'), keepAwake };
  assert.equal(activityView(facts, at('17:00')).asleep_reason_text, 'nobody used it for 30 min, then its keep-awake by ann@example.com ended at 16:00 UTC');
  // one that ended before the idle timeout did not keep it awake
  assert.equal(activityView({ ...facts, keepAwake: { ...keepAwake, until: at('13:45') } }, at('17:00')).asleep_reason_text, 'nobody used it for 30 min');
});

test('a running workspace says when it sleeps; a keep-awake in force says until when and who asked', () => {
  const running: ActivityFacts = { ...asleep, state: 'running', sleepReason: null, sleptAt: null };
  assert.equal(activityText(running, at('13:40')), 'awake: sleeps at 14:01 UTC if nobody uses it; last use: dev URL (w7.example.com) at 13:31 UTC');
  const kept = { ...running, keepAwake };
  assert.equal(activityText(kept, at('15:00')), 'kept awake until 16:00 UTC by ann@example.com; last use: dev URL (w7.example.com) at 13:31 UTC');
  assert.equal(idleSleepAt(kept)?.toISOString(), '2026-12-07T16:00:00.000Z');
  assert.deepEqual(keepAwakeView(keepAwake, at('15:00')), { until: '2026-12-07T16:00:00.000Z', asked_by: 3, asked_by_email: 'ann@example.com', asked_at: '2026-12-07T14:00:00.000Z' });
  assert.equal(keepAwakeView(keepAwake, at('16:00')), undefined, 'it ends by itself');
});
