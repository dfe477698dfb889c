import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PhaseTimeline } from '../core/phases.ts';
import { formatBytes, formatDuration, NEXT_PHASE, storedTimelineOf, timelineView } from './timeline-view.ts';

const operation = (state: 'running' | 'succeeded' | 'failed') => ({ id: '00000000-0000-4000-8000-000000000001', kind: 'workspace.wake', state });

test('durations and sizes read as people say them', () => {
  assert.deepEqual([812, 4210, 40_400, 125_000, 120_000].map(formatDuration), ['812 ms', '4.2 s', '40 s', '2 min 5 s', '2 min']);
  assert.deepEqual([96, 812_000, 34_000_000, 1_234_000_000].map(formatBytes), ['96 B', '812 kB', '34 MB', '1.2 GB']);
});

test('the line\'s phases follow one another from the queue and add up to the wall time; a begun phase shows as running with its start', () => {
  const timeline = new PhaseTimeline(1000);
  timeline.mark('queue and claim', 1040);
  timeline.begin('base image', 'pulling example/img');
  timeline.mark('base image', 41_040, 'pulling 1.2 GB of image layers (3) of example/img');
  const web = timeline.beside('web start', 'starting web', 41_050);
  timeline.begin('clone', 'cloning https://example.com/r.git');
  const running = timelineView(operation('running'), storedTimelineOf(timeline), 42_040);
  assert.deepEqual(running.phases.map((p) => [p.name, p.state, p.offset_ms, p.duration_ms, p.beside]), [
    ['queue and claim', 'done', 0, 40, false],
    ['base image', 'done', 40, 40_000, false],
    ['clone', 'running', 40_040, 1000, false],
    ['web start', 'running', 40_050, 990, true],
  ]);
  assert.equal(running.phases[1].summary, 'pulling 1.2 GB of image layers (3) of example/img: 40 s');
  assert.equal(running.phases[2].summary, 'cloning https://example.com/r.git: running for 1.0 s');
  assert.equal(running.phases[2].started_at, new Date(41_040).toISOString());
  assert.equal(running.wall_ms, 41_040);
  assert.equal(running.phases_ms, 41_040);

  timeline.mark('clone', 43_000, 'cloned https://example.com/r.git (12 MB on the volume)');
  timeline.finish(false, 43_010);
  web.end({ at: 44_000, detail: 'started web replica 0' });
  const done = timelineView(operation('succeeded'), storedTimelineOf(timeline), 50_000);
  assert.equal(done.wall_ms, 42_010, 'from queued to the end, not to the read');
  assert.equal(done.phases_ms, 42_000);
  assert.deepEqual(done.phases.filter((p) => p.state !== 'done'), []);
  assert.equal(done.phases.find((p) => p.name === 'web start')?.duration_ms, 2950, 'a step beside the line may end after the operation');
});

test('a phase unnamed until its end runs as the next phase; a failed operation fails its running phase', () => {
  const timeline = new PhaseTimeline(0);
  timeline.mark('queue and claim', 10);
  assert.equal(timelineView(operation('running'), storedTimelineOf(timeline), 30).phases[1].name, NEXT_PHASE);
  timeline.begin('volume', 'making the 1 GiB volume');
  timeline.finish(true, 50);
  const failed = timelineView(operation('failed'), storedTimelineOf(timeline), 60);
  assert.deepEqual(failed.phases.map((p) => [p.name, p.state, p.duration_ms]), [['queue and claim', 'done', 10], ['volume', 'failed', 40]]);
  assert.equal(failed.phases[1].summary, 'making the 1 GiB volume: 40 ms (failed)');
  timeline.mark('late', 70);
  assert.equal(timeline.steps.length, 2, 'nothing joins the line once the operation ended');
});
