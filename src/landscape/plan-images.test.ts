import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape } from './normal-form.ts';
import { planLandscape } from './plan.ts';
import { withPlanImages } from './plan-images.ts';
import { parseLandscape } from './parse-landscape.ts';

const normal = (text: string) => {
  const parsed = parseLandscape(text);
  assert.ok(parsed.landscape, JSON.stringify(parsed.errors));
  return normalizeLandscape(parsed.landscape!);
};
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const file = (image: string, replicas = 1) => `schema: svc/v1\nservices:\n  api:\n    type: container\n    image: ${image}\n    replicas: ${replicas}\n  web:\n    type: steps\n    steps: [{ run: x }]\n`;

test('the digests join the hash; a tag that names another digest restarts the service, even when the file only scales it', () => {
  const before = normal(file('api:1'));
  const same = planLandscape(before, before);
  const pinned = { api: { image: 'api:1', digest: digest('a') } };
  const unmoved = withPlanImages(same, before, pinned, new Map([['api:1', { digest: digest('a') }]]));
  assert.deepEqual(unmoved.images, [{ service: 'api', image: 'api:1', digest: digest('a'), deployed_digest: digest('a') }]);
  assert.equal(unmoved.changed, false);
  assert.notEqual(unmoved.hash, same.hash);
  const moved = withPlanImages(same, before, pinned, new Map([['api:1', { digest: digest('b') }]]));
  assert.notEqual(moved.hash, unmoved.hash);
  assert.equal(moved.changed, true);
  assert.deepEqual(moved.unchanged, ['web']);
  assert.deepEqual(moved.services.map((s) => [s.name, s.action, s.restarts, s.changes]), [['api', 'change', true, ['/services/api/image']]]);
  const scaled = normal(file('api:1', 2));
  const scaledMoved = withPlanImages(planLandscape(before, scaled), scaled, pinned, new Map([['api:1', { digest: digest('b') }]]));
  assert.deepEqual(scaledMoved.services.map((s) => [s.name, s.restarts, s.changes]), [['api', true, ['/services/api/replicas', '/services/api/image']]]);
  const failed = withPlanImages(same, before, pinned, new Map([['api:1', { problem: { type: 'urn:svc:problem:image-unavailable' } }]]));
  assert.deepEqual(failed.images, [{ service: 'api', image: 'api:1', digest: null, deployed_digest: digest('a'), problem: { type: 'urn:svc:problem:image-unavailable' } }]);
  assert.equal(failed.changed, false);
  const none = normal('schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{ run: x }]\n');
  const plain = planLandscape(null, none);
  assert.deepEqual(withPlanImages(plain, none, {}, new Map()), { ...plain, images: [] }, 'without container services the plan and its hash stay as they were');
});
