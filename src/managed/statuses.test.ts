import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ManagedServiceStatus } from '../store/managed-services.ts';
import { disabledVersionReason, landscapeStatusOf, managedSyncFailure, manualActionRefusal, notRunningReason, observedStatus, type ActionContext } from './statuses.ts';

const details = { host: 'db', port: 5432 };
const state = (status: ManagedServiceStatus, extra: Record<string, string> = {}) => ({ status, details: { ...details, ...extra }, provider: 'postgres', version: '15' });
const enabled = { versionEnabled: true, running: true };

test('a synchronized instance whose process is gone is unknown with its last known details and the reason; back once it runs', () => {
  assert.deepEqual(observedStatus(state('synchronized'), { ...enabled, running: false }), { status: 'unknown', details: { ...details, reason: notRunningReason } });
  assert.deepEqual(observedStatus(state('unknown', { reason: notRunningReason }), enabled), { status: 'synchronized', details });
  assert.equal(observedStatus(state('synchronized'), enabled), undefined);
  assert.equal(observedStatus(state('unknown', { reason: 'initdb failed' }), { ...enabled, running: false }), undefined);
});

test('a disabled version makes any settled instance invalid-provider; enabled again it is synchronized or paused as it runs', () => {
  for (const status of ['synchronized', 'paused', 'unknown'] as const) {
    assert.deepEqual(observedStatus(state(status), { versionEnabled: false, running: status !== 'paused' }), {
      status: 'invalid-provider',
      details: { ...details, reason: disabledVersionReason('postgres', '15') },
    });
  }
  assert.equal(observedStatus(state('invalid-provider'), { versionEnabled: false, running: false }), undefined);
  assert.deepEqual(observedStatus(state('invalid-provider', { reason: 'x' }), enabled), { status: 'synchronized', details });
  assert.deepEqual(observedStatus(state('invalid-provider', { reason: 'x' }), { versionEnabled: true, running: false }), { status: 'paused', details });
});

test('moving and deleted instances are left to the operation on them', () => {
  for (const status of ['creating', 'updating', 'pausing', 'unpausing', 'deleting', 'deleted'] as const) {
    assert.equal(observedStatus(state(status), { versionEnabled: false, running: false }), undefined);
  }
});

const running: ActionContext = { versionEnabled: true, tornDown: false, workspaceDeleted: false, workspaceRunning: true };

test('a pause stops a running, unknown or invalid-provider instance; a paused, moving or deleted one is refused', () => {
  for (const status of ['synchronized', 'unknown', 'invalid-provider'] as const) assert.equal(manualActionRefusal('db', state(status), 'pause', running), undefined);
  assert.deepEqual(manualActionRefusal('db', state('paused'), 'pause', running), { type: 'conflict', detail: 'Managed service db is paused already.' });
  assert.match(manualActionRefusal('db', state('creating'), 'pause', running)!.detail, /is creating; try again/);
  assert.match(manualActionRefusal('db', state('deleted'), 'pause', running)!.detail, /is deleted/);
  assert.match(manualActionRefusal('db', state('synchronized'), 'pause', { ...running, workspaceDeleted: true })!.detail, /workspace .* is deleted/);
});

test('a resume starts a paused or unknown instance of a running, not torn-down workspace with its version enabled', () => {
  for (const status of ['paused', 'unknown'] as const) assert.equal(manualActionRefusal('db', state(status), 'resume', running), undefined);
  assert.deepEqual(manualActionRefusal('db', state('synchronized'), 'resume', running), { type: 'conflict', detail: 'Managed service db runs already.' });
  assert.match(manualActionRefusal('db', state('paused'), 'resume', { ...running, versionEnabled: false })!.detail, /postgres 15 is disabled/);
  assert.match(manualActionRefusal('db', state('invalid-provider'), 'resume', running)!.detail, /cannot resume/);
  assert.match(manualActionRefusal('db', state('paused'), 'resume', { ...running, tornDown: true })!.detail, /torn down: Sync brings it back/);
  assert.equal(manualActionRefusal('db', state('paused'), 'resume', { ...running, workspaceRunning: false })!.type, 'workspace-not-running');
});

test("the landscape's service list shows an instance's status as a service status (3.2) with the provider's words", () => {
  assert.deepEqual(landscapeStatusOf(state('synchronized'), false), { status: 'running', detail: 'postgres 15 synchronized', ready: 1 });
  assert.deepEqual(landscapeStatusOf(state('paused'), true), { status: 'stopped', detail: 'postgres 15 paused; its data is kept', ready: 0 });
  assert.deepEqual(landscapeStatusOf(state('unpausing'), false), { status: 'starting', detail: 'postgres 15 resuming', ready: 0 });
  assert.deepEqual(landscapeStatusOf(state('unknown', { reason: notRunningReason }), false), {
    status: 'failure', detail: `postgres 15 does not answer: ${notRunningReason}; details are last known`, ready: 0,
  });
  assert.equal(landscapeStatusOf(state('invalid-provider', { reason: disabledVersionReason('postgres', '15') }), false).detail, disabledVersionReason('postgres', '15'));
  assert.deepEqual(landscapeStatusOf(undefined, false), { status: 'pending', detail: 'The next Sync creates it', ready: 0 });
});

test('a Sync fails (503 managed-service-failed) over any managed service that did not end synchronized, naming each with its reason', () => {
  const instance = (name: string, status: ManagedServiceStatus, details: Record<string, string> = {}) => ({ name, status, details });
  assert.equal(managedSyncFailure([]), undefined);
  assert.equal(managedSyncFailure([instance('db', 'synchronized'), instance('cache', 'synchronized')]), undefined);
  const failure = managedSyncFailure([instance('db', 'unknown', { reason: 'initdb of PostgreSQL 16 failed: out of disk' }), instance('cache', 'synchronized'), instance('old', 'invalid-provider')])!;
  assert.deepEqual([failure.type, failure.status], ['urn:svc:problem:managed-service-failed', 503]);
  assert.deepEqual(failure.extra.managed_services, [
    { name: 'db', status: 'unknown', reason: 'initdb of PostgreSQL 16 failed: out of disk' },
    { name: 'old', status: 'invalid-provider', reason: 'it is invalid-provider' },
  ]);
  assert.match(failure.detail!, /db is unknown: initdb of PostgreSQL 16 failed: out of disk; old is invalid-provider/);
});
