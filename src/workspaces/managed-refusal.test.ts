// Sync refuses, before deploying anything, the managed services that cannot run: a provider without an engine on
// this installation, or any managed service on a runtime driver that places none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Problem } from '../core/problems.ts';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import { refuseUnrunnableManaged, runnableProviders } from './landscape-service.ts';

const normal = normalizeLandscape(
  parseLandscape('schema: svc/v1\nservices:\n  cache:\n    type: managed\n    provider: redis\n  db:\n    type: managed\n    provider: postgres\n').landscape!,
);
const placing = { name: 'local', placeManagedService: async () => ({ netns: 'ns', address: '10.0.0.2' }) };

test('postgres and redis run here; a provider without an engine is refused with 501 naming its services', () => {
  assert.ok(runnableProviders.has('postgres') && runnableProviders.has('redis'));
  refuseUnrunnableManaged(normal, placing);
  assert.throws(() => refuseUnrunnableManaged(normal, placing, new Set(['postgres'])), (error: Problem) => {
    assert.equal(error.status, 501);
    assert.equal(error.type, 'urn:svc:problem:not-available');
    assert.deepEqual(error.extra, { managed_services: ['cache'] });
    assert.equal(error.detail, 'This installation runs no managed services of these providers, so the landscape cannot be synced: cache (redis). Remove them from the file to sync the rest.');
    return true;
  });
  assert.throws(() => refuseUnrunnableManaged(normal, { name: 'other' }), (error: Problem) => {
    assert.deepEqual(error.extra, { managed_services: ['cache', 'db'] });
    assert.match(error.detail!, /^The runtime driver other runs no managed services/);
    return true;
  });
});

test('a driver that runs described processes runs the providers described for it; without its image it says which flag is missing', () => {
  const runner = { run: async () => ({ address: '' }), restart: async () => ({ address: '' }), pause: async () => undefined, remove: async () => undefined, address: async () => undefined };
  const describing = { name: 'kubernetes', managedProcesses: runner };
  refuseUnrunnableManaged(normal, describing); // postgres and redis are described
  const noImage = { name: 'kubernetes', managedUnavailable: 'The Kubernetes driver runs managed services only in the managed image, and none is configured: set --kube-managed-image (SVC_KUBE_MANAGED_IMAGE).' };
  assert.throws(() => refuseUnrunnableManaged(normal, noImage), (error: Problem) => {
    assert.equal(error.status, 501);
    assert.deepEqual(error.extra, { managed_services: ['cache', 'db'] });
    assert.match(error.detail!, /set --kube-managed-image \(SVC_KUBE_MANAGED_IMAGE\), so the landscape cannot be synced: cache \(redis\), db \(postgres\)/);
    return true;
  });
});
