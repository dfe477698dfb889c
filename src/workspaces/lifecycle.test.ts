import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyWorkspaceEvent, initialStatus, type WorkspaceEvent, type WorkspaceStatus } from './lifecycle.ts';

function run(start: WorkspaceStatus, events: WorkspaceEvent[]): WorkspaceStatus {
  return events.reduce((status, event) => {
    const next = applyWorkspaceEvent(status, event);
    assert.ok(next.ok, `${event.type} from ${status.state}: ${next.ok ? '' : next.refusal}`);
    return next.status;
  }, start);
}

const states = (start: WorkspaceStatus, events: WorkspaceEvent[]) => {
  const seen: string[] = [];
  events.reduce((status, event) => {
    const next = applyWorkspaceEvent(status, event);
    if (!next.ok) throw new Error(next.refusal);
    seen.push(`${next.status.state}: ${next.status.statusDetail}`);
    return next.status;
  }, start);
  return seen;
};

test('a git workspace: Creating, Cloning, Starting IDE while cloning, Running', () => {
  assert.deepEqual(
    states(initialStatus(true), [
      { type: 'progress', statusText: 'Starting' },
      { type: 'progress', statusText: 'Cloning repository' },
      { type: 'progress', statusText: 'Starting IDE' },
      { type: 'editor-ready' },
    ]),
    ['creating: Starting', 'cloning: Cloning repository', 'cloning: Starting IDE', 'running: Workspace is running'],
  );
});

test('an empty workspace: Creating with Preparing the volume, then Starting IDE, Running', () => {
  assert.deepEqual(
    states(initialStatus(false), [
      { type: 'progress', statusText: 'Preparing the volume' },
      { type: 'progress', statusText: 'Starting IDE' },
      { type: 'editor-ready' },
    ]),
    ['creating: Preparing the volume', 'creating: Starting IDE', 'running: Workspace is running'],
  );
});

test('failures give Error with the reason of 3.1; an error is not final', () => {
  const failed = run(initialStatus(true), [{ type: 'failed', stage: 'clone', reason: "repository 'x' does not exist" }]);
  assert.equal(failed.state, 'error');
  assert.equal(failed.statusDetail, "Cloning the repository failed: repository 'x' does not exist");
  assert.equal(run(failed, [{ type: 'editor-ready' }]).state, 'running');
  const ide = run(initialStatus(false), [{ type: 'failed', stage: 'ide', reason: 'exited with 1' }]);
  assert.equal(ide.statusDetail, 'The IDE does not start: exited with 1');
});

test('sleep by hand and by idle timeout carry their texts; wake goes through Waking up', () => {
  const running = run(initialStatus(false), [{ type: 'editor-ready' }]);
  const byHand = run(running, [{ type: 'sleep', reason: 'by-hand' }]);
  assert.deepEqual([byHand.state, byHand.statusDetail], ['sleeping', 'Asleep']);
  const idle = run(running, [{ type: 'sleep', reason: 'idle' }]);
  assert.equal(idle.statusDetail, 'Asleep after being unused');
  const waking = run(idle, [{ type: 'wake' }]);
  assert.deepEqual([waking.state, waking.statusDetail], ['waking_up', 'Waking up']);
  assert.equal(run(waking, [{ type: 'editor-ready' }]).state, 'running');
});

test('the reason it slept is kept while it wakes up (the waiting page names it), and dropped once it runs or fails', () => {
  const byHand = run(run(initialStatus(false), [{ type: 'editor-ready' }]), [{ type: 'sleep', reason: 'by-hand' }]);
  const starting = run(byHand, [{ type: 'wake' }, { type: 'progress', statusText: 'Starting IDE' }]);
  assert.deepEqual([starting.state, starting.statusDetail, starting.sleepReason], ['waking_up', 'Starting IDE', 'by-hand']);
  assert.equal(run(starting, [{ type: 'editor-ready' }]).sleepReason, undefined);
  assert.equal(run(starting, [{ type: 'failed', stage: 'ide', reason: 'exited' }]).sleepReason, undefined);
  assert.equal(run(starting, [{ type: 'sleep', reason: 'idle' }]).sleepReason, 'idle');
});

test('wake blockers are refused with their reason', () => {
  const stopped = run(run(initialStatus(false), [{ type: 'editor-ready' }]), [{ type: 'stop' }]);
  const wake = applyWorkspaceEvent(stopped, { type: 'wake' });
  assert.equal(wake.ok, false);
  assert.match(wake.ok ? '' : wake.refusal, /stopped; start it from the console/);
  const restoring = run(run(initialStatus(false), [{ type: 'editor-ready' }]), [{ type: 'sleep', reason: 'archive-restore' }]);
  assert.equal(restoring.statusDetail, 'Restoring the archive');
  const busy = applyWorkspaceEvent(restoring, { type: 'wake' });
  assert.match(busy.ok ? '' : busy.refusal, /busy with its volume/);
  const restored = run(restoring, [{ type: 'sleep', reason: 'archive-restored' }]);
  assert.deepEqual([restored.statusDetail, run(restored, [{ type: 'wake' }]).sleepReason], ['Asleep', 'archive-restored']);
  const creating = applyWorkspaceEvent(initialStatus(true), { type: 'sleep', reason: 'by-hand' });
  assert.equal(creating.ok, false);
});

test('soft delete from any state; restore comes back asleep (or stopped); nothing else moves a deleted workspace', () => {
  const running = run(initialStatus(false), [{ type: 'editor-ready' }]);
  const deleted = run(running, [{ type: 'delete' }]);
  assert.deepEqual([deleted.state, deleted.statusDetail], ['deleting', '(soft-deleted)']);
  assert.equal(applyWorkspaceEvent(deleted, { type: 'wake' }).ok, false);
  const restored = run(deleted, [{ type: 'restore' }]);
  assert.deepEqual([restored.state, restored.statusDetail], ['sleeping', 'Asleep']);
  const stoppedThenDeleted = run(running, [{ type: 'stop' }, { type: 'delete' }, { type: 'restore' }]);
  assert.equal(stoppedThenDeleted.state, 'stopped');
  assert.equal(applyWorkspaceEvent(running, { type: 'restore' }).ok, false);
});

const running: WorkspaceStatus = { state: 'running', statusDetail: 'Workspace is running', fromGit: false };

test('volume owner change (4.7): Stopped "Changing the owner of the volume", then back to what it was', () => {
  assert.deepEqual(states(running, [{ type: 'reown' }, { type: 'reowned' }]), [
    'stopped: Changing the owner of the volume',
    'waking_up: Waking up',
  ]);
  const asleep = run(running, [{ type: 'sleep', reason: 'idle' }]);
  assert.deepEqual(states(asleep, [{ type: 'reown' }, { type: 'reowned' }]), ['stopped: Changing the owner of the volume', 'sleeping: Asleep after being unused']);
  const stopped = run(running, [{ type: 'stop' }]);
  assert.deepEqual(states(stopped, [{ type: 'reown' }, { type: 'reowned' }]), ['stopped: Changing the owner of the volume', 'stopped: Stopped']);
  const deleted = run(stopped, [{ type: 'delete' }, { type: 'reown' }, { type: 'reowned' }]);
  assert.equal(deleted.state, 'deleting');
  assert.equal(deleted.beforeReown, undefined);
  assert.equal(run(deleted, [{ type: 'restore' }]).state, 'stopped', 'restoring after the change brings back the state before the delete');
});

test('while its volume is re-owned the workspace refuses every other move; a creating one is not re-owned', () => {
  const reowning = run(running, [{ type: 'reown' }]);
  for (const event of [{ type: 'start' }, { type: 'wake' }, { type: 'delete' }, { type: 'sleep', reason: 'by-hand' }, { type: 'stop' }] as WorkspaceEvent[]) {
    const next = applyWorkspaceEvent(reowning, event);
    assert.deepEqual(next, { ok: false, refusal: 'The workspace is busy with its volume (changing its owner).' }, event.type);
  }
  assert.equal(applyWorkspaceEvent(reowning, { type: 'reown' }).ok, true, 'a resumed job may ask again');
  assert.deepEqual(applyWorkspaceEvent(initialStatus(true), { type: 'reown' }), { ok: false, refusal: 'The workspace is still being created.' });
  assert.equal(applyWorkspaceEvent(running, { type: 'reowned' }).ok, false);
});
