// The worker pool that checks landscape files: answers, budget, queue, close.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LandscapeChecker } from './landscape-checker.ts';

const member = { team: 1, user: 10 };
const valid = 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{run: npm start}]\n';

/** A file the yaml package needs seconds to read (anchors keep it away from the fast reader); `anchors / 10_000` s or so. */
function slowFile(anchors = 100_000): string {
  const lines = ['schema: svc/v1', 'x-values:'];
  for (let i = 0; i < anchors; i++) lines.push(`  - &a${i} v${i}`, `  - *a${i}`);
  return `${lines.join('\n')}\n`;
}

test('a file is checked and normalized in a worker; errors come back located', async () => {
  const checker = new LandscapeChecker({ budgetMs: 60_000, workers: 1 });
  try {
    const good = await checker.check(member, { text: valid });
    assert.equal(good.state, 'checked');
    assert.ok(good.state === 'checked' && good.normal?.services.web.type === 'steps');
    const bad = await checker.check(member, { text: 'schema: svc/v1\nservices:\n  web: {type: steps, stepz: []}\n' });
    assert.deepEqual(bad.state === 'checked' && bad.errors.map((e) => [e.code, e.line]), [['required', 3], ['unknown-key', 3]]);
  } finally {
    await checker.close();
  }
});

test('a check over its budget is too complex; its worker is ended and a new one takes the next check', async () => {
  const checker = new LandscapeChecker({ budgetMs: 20, workers: 1 });
  try {
    const slow = checker.check(member, { text: slowFile() });
    const next = checker.check(member, { text: 'not: [a, landscape' });
    assert.deepEqual(await slow, { state: 'too-complex', budgetMs: 20 });
    // Whether 20 ms suffice for a tiny file depends on the machine's load; that it answers at all does not.
    assert.ok(['checked', 'too-complex'].includes((await next).state));
  } finally {
    await checker.close();
  }
});

test('checks beyond the workers wait their turn; beyond maxWaiting they are refused with 503', async () => {
  const checker = new LandscapeChecker({ budgetMs: 60_000, workers: 1, maxWaiting: 2 });
  try {
    const first = checker.check(member, { text: valid });
    const second = checker.check(member, { text: valid });
    await assert.rejects(checker.check(member, { text: valid }), (error: { status?: number; type?: string }) => error.status === 503 && error.type === 'urn:svc:problem:unavailable');
    assert.equal((await first).state, 'checked');
    assert.equal((await second).state, 'checked');
    assert.equal((await checker.check(member, { text: valid })).state, 'checked');
  } finally {
    await checker.close();
  }
});

test('close refuses waiting checks and ends the workers', async () => {
  const checker = new LandscapeChecker({ budgetMs: 60_000, workers: 1 });
  const running = assert.rejects(checker.check(member, { text: slowFile() }));
  const waiting = assert.rejects(checker.check(member, { text: valid }), (error: { status?: number }) => error.status === 503);
  await checker.close();
  await Promise.all([running, waiting]);
  await assert.rejects(checker.check(member, { text: valid }), (error: { status?: number }) => error.status === 503);
});

test("a caller over its share is refused with 429 and Retry-After; another team's check runs on the worker kept for others", async () => {
  const checker = new LandscapeChecker({ budgetMs: 60_000, workers: 2, perUser: 3 });
  const finished: string[] = [];
  try {
    const heavy = Array.from({ length: 3 }, (_, i) => checker.check(member, { text: slowFile(10_000) }).then((check) => (finished.push(`heavy ${i}`), check)));
    await assert.rejects(checker.check(member, { text: valid }), (error: { status?: number; type?: string; headers?: Record<string, string> }) => {
      return error.status === 429 && error.type === 'urn:svc:problem:rate-limited' && error.headers?.['Retry-After'] === '60';
    });
    const other = await checker.check({ team: 2, user: 20 }, { text: valid });
    finished.push('other team');
    assert.equal(other.state, 'checked');
    await Promise.all(heavy);
    // The member's own checks ran one at a time on one worker, in order; the other team's did not wait for them all
    // (on a loaded machine the first of them may end before it: what it may not do is come after the last).
    assert.deepEqual(finished.filter((name) => name !== 'other team'), ['heavy 0', 'heavy 1', 'heavy 2']);
    assert.ok(finished.indexOf('other team') < 3, finished.join(', '));
  } finally {
    await checker.close();
  }
});
