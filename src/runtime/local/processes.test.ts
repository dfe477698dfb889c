import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSameProcess, parseProcStat, pollUntil, processStartTime } from './processes.ts';

const stat = (comm: string, state: string) =>
  `1234 (${comm}) ${state} 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0`;

test('the state and start time of /proc/<pid>/stat are read after the last parenthesis of the name', () => {
  assert.deepEqual(parseProcStat(stat('bwrap', 'S')), { state: 'S', startTime: '987654' });
  assert.deepEqual(parseProcStat(stat('we ird) (name', 'Z')), { state: 'Z', startTime: '987654' });
  assert.equal(parseProcStat('garbage'), undefined);
  assert.equal(parseProcStat('1 (x) S 1 2'), undefined);
});

test('a process is the same only with the same pid and start time', async () => {
  const own = await processStartTime(process.pid);
  assert.ok(own);
  assert.equal(await isSameProcess(process.pid, own), true);
  assert.equal(await isSameProcess(process.pid, `${own}0`), false);
  assert.equal(await processStartTime(2 ** 22 + 1), undefined);
});

test('polling stops as soon as the condition holds, and answers false at its deadline', async () => {
  let calls = 0;
  assert.equal(await pollUntil(async () => ++calls === 3, 5000, 1), true);
  assert.equal(calls, 3);
  assert.equal(await pollUntil(async () => false, 20, 5), false);
});
