// The NetworkPolicy the Kubernetes driver is to write for a workspace's egress, checked offline against the
// Kubernetes schemas (kubernetes-models).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { workspaceEgressPolicy } from '../src/runtime/kubernetes/egress-policy.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';

const settings = { allow: ['10.20.0.0/16'], deny: ['198.51.100.0/24'], clusterRanges: ['10.244.0.0/16', '10.96.0.0/12'] };

test("egress on: own pods, the cluster's DNS, the internet but the refused, cluster and denied ranges, the allowed ranges; valid", () => {
  const policy = workspaceEgressPolicy({ id: 7 }, 42, { egress: 'on', ...settings });
  assert.deepEqual(manifestErrors(policy as never), []);
  const egress = policy.spec!.egress!;
  assert.equal(egress.length, 4);
  const except = egress[2].to![0].ipBlock!.except!;
  for (const cidr of ['169.254.0.0/16', '10.0.0.0/8', '10.244.0.0/16', '198.51.100.0/24']) assert.ok(except.includes(cidr), cidr);
  assert.deepEqual(egress[3].to, [{ ipBlock: { cidr: '10.20.0.0/16' } }]);
  assert.deepEqual(policy.spec!.policyTypes, ['Egress']);
});

test("egress off: the workspace's own pods only; valid", () => {
  const policy = workspaceEgressPolicy({ id: 7 }, 42, { egress: 'off', ...settings });
  assert.deepEqual(manifestErrors(policy as never), []);
  assert.deepEqual(policy.spec!.egress, [{ to: [{ podSelector: { matchLabels: policy.spec!.podSelector.matchLabels } }] }]);
});
