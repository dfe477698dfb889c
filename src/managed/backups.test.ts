// When nightly backups are due: once per backup night (from 02:00 UTC), a new instance waiting for its first night.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backupNightStart, nightlyDue } from './backups.ts';

const at = (text: string) => new Date(text);

test('a backup night starts at 02:00 UTC; before that hour it is still the previous one', () => {
  assert.equal(backupNightStart(at('2025-03-10T02:00:00Z')).toISOString(), '2025-03-10T02:00:00.000Z');
  assert.equal(backupNightStart(at('2025-03-10T23:59:00Z')).toISOString(), '2025-03-10T02:00:00.000Z');
  assert.equal(backupNightStart(at('2025-03-10T01:59:59Z')).toISOString(), '2025-03-09T02:00:00.000Z');
  assert.equal(backupNightStart(at('2025-03-01T00:30:00Z')).toISOString(), '2025-02-28T02:00:00.000Z');
});

test('a dump is due once a night, from the first night after the instance was made', () => {
  const created = at('2025-03-10T15:00:00Z');
  assert.equal(nightlyDue(at('2025-03-10T18:00:00Z'), created, null), false, 'made today: waits for the night');
  assert.equal(nightlyDue(at('2025-03-11T01:59:00Z'), created, null), false);
  assert.equal(nightlyDue(at('2025-03-11T02:00:00Z'), created, null), true);
  assert.equal(nightlyDue(at('2025-03-11T02:01:00Z'), created, at('2025-03-11T02:00:30Z')), false, 'done tonight');
  assert.equal(nightlyDue(at('2025-03-11T14:00:00Z'), created, at('2025-03-10T02:00:30Z')), true, 'the server was down at 02:00: done when it is back');
  assert.equal(nightlyDue(at('2025-03-12T02:00:00Z'), created, at('2025-03-11T02:00:30Z')), true, 'the next night');
});

test('a nightly backup that failed is tried again an hour later within the night, and at once the next night', () => {
  const created = at('2025-03-01T15:00:00Z');
  const last = at('2025-03-10T02:00:30Z');
  const failed = at('2025-03-11T02:00:30Z');
  assert.equal(nightlyDue(at('2025-03-11T02:30:00Z'), created, last, failed), false, 'failed half an hour ago');
  assert.equal(nightlyDue(at('2025-03-11T03:00:31Z'), created, last, failed), true, 'an hour later');
  assert.equal(nightlyDue(at('2025-03-12T02:00:00Z'), created, last, at('2025-03-12T01:30:00Z')), true, 'a failure of the night before does not hold the new night');
  assert.equal(nightlyDue(at('2025-03-11T02:30:00Z'), created, at('2025-03-11T02:10:00Z'), failed), false, 'made since: not due whatever failed');
});
