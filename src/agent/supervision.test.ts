import assert from 'node:assert/strict';
import { test } from 'node:test';
import { editorAnswered, editorExited, exitReason, initialSupervision, type SupervisionPolicy } from './supervision.ts';

const policy: SupervisionPolicy = { baseMs: 100, maxMs: 1000, failedAfter: 3, stableMs: 10_000 };

test('an editor starts as starting and is ready once it answers', () => {
  assert.equal(initialSupervision.phase, 'starting');
  const ready = editorAnswered(initialSupervision, 5000);
  assert.deepEqual(ready, { phase: 'ready', failures: 0, restarts: 0, readySince: 5000, reason: undefined });
  assert.equal(editorAnswered(ready, 9000), ready, 'answering again changes nothing');
});

test('exits before a stable run count up with backoff, and the third in a row is a crash loop: failed', () => {
  let state = initialSupervision;
  const delays: number[] = [];
  const phases: string[] = [];
  for (let i = 0; i < 4; i++) {
    const { next, restartInMs } = editorExited(state, 'port is taken', 1000 * i, policy);
    state = next;
    delays.push(restartInMs);
    phases.push(next.phase);
  }
  assert.deepEqual(delays, [100, 200, 400, 800]);
  assert.deepEqual(phases, ['starting', 'starting', 'failed', 'failed']);
  assert.deepEqual([state.restarts, state.failures, state.reason], [4, 4, 'port is taken']);
});

test('a crash-looping editor that answers again is ready again', () => {
  let state = initialSupervision;
  for (let i = 0; i < 3; i++) state = editorExited(state, 'boom', i, policy).next;
  assert.equal(state.phase, 'failed');
  state = editorAnswered(state, 100);
  assert.equal(state.phase, 'ready');
  assert.equal(state.reason, undefined);
});

test('an editor that ran stably and then exits starts a fresh count; one that answered only briefly does not', () => {
  const ready = editorAnswered({ ...initialSupervision, failures: 2, restarts: 2 }, 0);
  const afterStable = editorExited(ready, 'killed', policy.stableMs, policy);
  assert.deepEqual([afterStable.next.phase, afterStable.next.failures, afterStable.restartInMs], ['starting', 1, 100]);
  const afterBrief = editorExited(ready, 'killed', policy.stableMs - 1, policy);
  assert.deepEqual([afterBrief.next.phase, afterBrief.next.failures], ['failed', 3]);
});

test('the exit reason is the last line the editor printed, else its exit code or signal', () => {
  assert.equal(exitReason('starting\nError: listen EADDRINUSE: address already in use :::8443\n\n', 1, null), 'Error: listen EADDRINUSE: address already in use :::8443');
  assert.equal(exitReason('', 3, null), 'the editor exited with code 3');
  assert.equal(exitReason('  \n', null, 'SIGKILL'), 'the editor was killed by SIGKILL');
  assert.equal(exitReason('x'.repeat(400), 1, null).length, 300);
});
