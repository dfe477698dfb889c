import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wakePhaseLabel, wakePhaseSeconds } from './wake-phases.ts';

test("a wake's own phases are labels with underscores; a phase named after a service is `other`", () => {
  assert.equal(wakePhaseLabel('queue and claim'), 'queue_and_claim');
  assert.equal(wakePhaseLabel('readiness seen'), 'readiness_seen');
  assert.equal(wakePhaseLabel('my-secret-service queue'), 'other');
  assert.equal(wakePhaseLabel(''), 'other');
});

test('phases under one label add up, in seconds', () => {
  const seconds = wakePhaseSeconds([
    { name: 'pod gate', ms: 250 },
    { name: 'web queue', ms: 100 },
    { name: 'api service network', ms: 400 },
  ]);
  assert.deepEqual([...seconds], [['pod_gate', 0.25], ['other', 0.5]]);
});
