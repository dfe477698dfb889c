import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration } from './service-log-texts.ts';
import {
  exitCodeOf, initialRun, replicaStatusOf, serverExited, serverPolicy, serverStarted, SETTLE_AFTER_RESTART_MS, stepExited, stepsStarted, type ServiceRun,
} from './service-run.ts';

/** Moves a fake clock: the server starts, runs `runMs`, exits with `code`, and is restarted after the decided delay. */
function crashLoop(times: number, code: number, runMs: number) {
  let now = 0;
  let run: ServiceRun = serverStarted(stepsStarted(initialRun), now);
  const delays: number[] = [];
  const lines: string[] = [];
  for (let i = 0; i < times && run.phase !== 'failure'; i++) {
    now += runMs;
    const decision = serverExited(run, code, now, serverPolicy);
    lines.push(...decision.lines);
    run = decision.next;
    if (decision.restartInMs === undefined) break;
    delays.push(decision.restartInMs);
    now += decision.restartInMs;
    run = serverStarted(run, now);
  }
  return { run, delays, lines };
}

test('the server restarts after a delay doubling from 1 s, capped at 1 min', () => {
  // failures 1 minute apart never reach 5 within 2 minutes, so the delays show the whole curve
  const { run, delays } = crashLoop(9, 1, 60_000);
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  assert.equal(run.phase, 'server');
  assert.equal(run.restarts, 9);
});

test('5 failures within 2 minutes make the service failed with the Giving-up text', () => {
  const { run, delays, lines } = crashLoop(10, 3, 100);
  assert.deepEqual(delays, [1000, 2000, 4000, 8000]);
  assert.equal(run.phase, 'failure');
  assert.equal(run.detail, 'Giving up: exited with 3; 5 failures in 2m0s');
  assert.equal(lines.at(-1), 'Giving up: exited with 3; 5 failures in 2m0s');
  assert.equal(replicaStatusOf(run, true), 'failure');
});

test('failures older than the window do not count, and a server that ran a whole window starts the backoff afresh', () => {
  let run: ServiceRun = serverStarted(initialRun, 0);
  run = serverExited(run, 1, 10, serverPolicy).next;
  run = serverStarted(run, 1010);
  const later = serverExited(run, 1, 1010 + 120_000, serverPolicy);
  assert.equal(later.restartInMs, 1000);
  assert.deepEqual(later.next.failureTimes, [121_010]);
});

test('exit 0 of the server finishes the service; no restart', () => {
  const decision = serverExited(serverStarted(initialRun, 0), 0, 5, serverPolicy);
  assert.equal(decision.restartInMs, undefined);
  assert.equal(decision.next.phase, 'finished');
  assert.deepEqual(decision.lines, ['The server exited with code 0: the service finished']);
  assert.equal(replicaStatusOf(decision.next, false), 'finished');
});

test('a step before the last that exits non-zero fails the run: Step exited with code N', () => {
  const failed = stepExited(stepsStarted(initialRun), 3);
  assert.equal(failed.next.phase, 'failure');
  assert.equal(failed.next.detail, 'Step exited with code 3');
  assert.equal(stepExited(stepsStarted(initialRun), 0).next.phase, 'steps');
});

test('exit codes 127 and 126 get the notes of rule 6', () => {
  assert.deepEqual(stepExited(initialRun, 127).lines, ['Exit code 127: the command is missing from the image', 'Step exited with code 127']);
  assert.match(serverExited(serverStarted(initialRun, 0), 126, 1, serverPolicy).lines[0], /^Exit code 126: the file is not executable/);
});

test('status: starting until the server runs and is ready, then running', () => {
  assert.equal(replicaStatusOf(initialRun, false), 'starting');
  assert.equal(replicaStatusOf(stepsStarted(initialRun), true), 'starting');
  const server = serverStarted(initialRun, 0);
  assert.equal(replicaStatusOf(server, false), 'starting');
  assert.equal(replicaStatusOf(server, true), 'running');
  assert.equal(replicaStatusOf(serverExited(server, 1, 1, serverPolicy).next, true), 'starting');
});

test('durations read as Go prints them', () => {
  assert.deepEqual([300_000, 120_000, 90_000, 10_000, 1500, 500, 3_600_000].map(formatDuration), ['5m0s', '2m0s', '1m30s', '10s', '1.5s', '500ms', '1h0m0s']);
});

test('a process killed by a signal counts as 128 + the signal number', () => {
  assert.equal(exitCodeOf(null, 9), 137);
  assert.equal(exitCodeOf(2, undefined), 2);
});

test('a restarted server without a port or health check stays Starting until it ran a while: a crash loop does not flip to Running', () => {
  const first = serverStarted(stepsStarted(initialRun), 0);
  assert.equal(replicaStatusOf(first, true, { now: 1 }), 'running', 'its first run counts at once');
  const crashed = serverExited(first, 1, 500, serverPolicy).next;
  const again = serverStarted(crashed, 1500);
  assert.equal(replicaStatusOf(again, true, { now: 1600 }), 'starting');
  assert.equal(replicaStatusOf(again, true, { now: 1500 + SETTLE_AFTER_RESTART_MS - 1 }), 'starting');
  assert.equal(replicaStatusOf(again, true, { now: 1500 + SETTLE_AFTER_RESTART_MS }), 'running');
  assert.equal(replicaStatusOf(again, true), 'running', 'with a port or health check, readiness decides alone');
});
