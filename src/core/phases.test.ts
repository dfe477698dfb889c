import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePhases, PhaseTimeline } from './phases.ts';

test('each phase ends at its mark; a mark behind the last (another process\'s clock) counts 0 ms; the text reads back', () => {
  const timeline = new PhaseTimeline(1000);
  timeline.mark('queue and claim', 1004);
  timeline.mark('node start', 1002);
  timeline.mark('pod network', 1040.4);
  assert.deepEqual(timeline.phases, [{ name: 'queue and claim', ms: 4 }, { name: 'node start', ms: 0 }, { name: 'pod network', ms: 36.40000000000009 }]);
  assert.equal(timeline.text(), '40 ms: queue and claim 4, node start 0, pod network 36');
  assert.deepEqual(parsePhases(timeline.text()), [{ name: 'queue and claim', ms: 4 }, { name: 'node start', ms: 0 }, { name: 'pod network', ms: 36 }]);
});
