// The Kubernetes settings of `svc server`: the managed-service image is optional, read from its flag or
// SVC_KUBE_MANAGED_IMAGE, and refused without --runtime kubernetes like every --kube-* flag.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadServerConfig, serverUsage } from './config.ts';

const images = ['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1'];

test('--kube-managed-image and SVC_KUBE_MANAGED_IMAGE give the managed services\' image; without them there is none', () => {
  assert.equal(loadServerConfig([...images, '--kube-managed-image', 'm:1'], {}).kubernetes?.managedImage, 'm:1');
  assert.equal(loadServerConfig(images, { SVC_KUBE_MANAGED_IMAGE: 'm:2' }).kubernetes?.managedImage, 'm:2');
  assert.equal(loadServerConfig([...images, '--kube-managed-image', 'm:1'], { SVC_KUBE_MANAGED_IMAGE: 'm:2' }).kubernetes?.managedImage, 'm:1');
  assert.ok(!('managedImage' in loadServerConfig(images, {}).kubernetes!));
  assert.throws(() => loadServerConfig(['--kube-managed-image', 'm:1'], {}), (e: Error) => e instanceof ConfigError && e.message === '--kube-managed-image needs --runtime kubernetes');
  assert.throws(() => loadServerConfig([...images, '--kube-archive-size', '0'], {}), /kube archive size must be a whole number, got "0"/);
  assert.match(serverUsage(), /--kube-managed-image \/ SVC_KUBE_MANAGED_IMAGE/);
});
