import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseGeneral, parseTimestamptz } from './timestamps.ts';

const time = (value: Date | number | null) => (value instanceof Date ? value.getTime() : value);

test('timestamptz text gives the same Date as pg\'s general parser, in the usual shape and every other', () => {
  const samples = [
    '2026-11-25 09:01:32.291+00', '2026-11-25 09:01:32.123456+00', '2026-11-25 09:01:32+05:30', '2026-11-25 09:01:32.5-03',
    '1969-12-31 23:59:59.999999+00', '2024-02-29 12:00:00-09:45', 'infinity', '-infinity', '0099-01-01 00:00:00+00',
    '2000-01-01 00:00:00+00 BC', '1900-01-01 00:00:00+00:19:32', '12026-01-01 00:00:00+00',
  ];
  for (let t = -2e12; t < 4e12; t += 7_777_777_777) {
    const iso = new Date(t).toISOString();
    for (const fraction of ['', '.1', `.${String(t % 1000).padStart(3, '0')}`, `.${String(t % 999_983).padStart(6, '0')}`]) {
      for (const offset of ['+00', '-07', '+05:30', '+14']) samples.push(`${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}${offset}`);
    }
  }
  for (const text of samples) assert.equal(time(parseTimestamptz(text)), time(parseGeneral(text)), text);
  assert.equal((parseTimestamptz('2026-11-25 09:01:32.291+00') as Date).toISOString(), '2026-11-25T09:01:32.291Z');
});
