import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prepareWantedAtSync, statusTextAfterPrepare } from './automatic-prepare.ts';

const steps = (...runs: string[]) => runs.map((run) => ({ run }));

test('a Sync runs prepare when none succeeded yet', () => {
  assert.equal(prepareWantedAtSync(undefined, steps('npm ci')), true);
});

test('a Sync runs prepare when the commands changed since the last success, not when only nothing changed', () => {
  assert.equal(prepareWantedAtSync({ steps: steps('npm ci') as never }, steps('npm ci')), false);
  assert.equal(prepareWantedAtSync({ steps: steps('npm ci') as never }, steps('npm ci', 'npm run build')), true);
  assert.equal(prepareWantedAtSync({ steps: steps('npm ci') as never }, steps('npm install')), true);
});

test('a failed prepare is named in the status text; a later success takes it away; other endings leave it', () => {
  const failed = statusTextAfterPrepare('Workspace is running', { state: 'failure', detail: 'Install: exit 3' });
  assert.equal(failed, 'Workspace is running; prepare failed: Install: exit 3 (see Stages)');
  assert.equal(statusTextAfterPrepare(failed!, { state: 'success', detail: null }), 'Workspace is running');
  assert.equal(statusTextAfterPrepare('Workspace is running', { state: 'success', detail: null }), undefined);
  assert.equal(statusTextAfterPrepare(failed!, { state: 'aborted', detail: 'Stopped by hand' }), undefined);
});
