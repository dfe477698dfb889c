// Removing a pod's network (as root) is idempotent whatever `ip` says about a part that is already gone: removals
// that race each other, and removals while the kernel is still tearing down a namespace whose processes were just
// killed, all succeed and leave nothing behind. Workspace ids 900101+ are this file's own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { DEFAULT_POD_ADDRESS_RANGE, podNetworkOf } from '../src/runtime/local/addresses.ts';
import { createPodNetwork, podNetworkExists, removePodNetwork } from '../src/runtime/local/network.ts';
import { minimalEnv, runChecked } from '../src/runtime/local/processes.ts';

const asRoot = process.getuid?.() === 0;
const CONCURRENT = 8;

/** A process living in the namespace, as a pod's are: it keeps the namespace (and its veth pair) alive until it dies. */
function occupy(netns: string): void {
  const child = spawn('ip', ['netns', 'exec', netns, 'sleep', '600'], { detached: true, stdio: 'ignore', env: minimalEnv() });
  child.unref();
}

test('concurrent removals of one pod network, while its processes die, all succeed and leave nothing', { skip: !asRoot && 'needs root (network namespaces)' }, async () => {
  const network = podNetworkOf('ptest', 900101);
  const failures: string[] = [];
  for (let round = 0; round < 10; round++) {
    await createPodNetwork(network, DEFAULT_POD_ADDRESS_RANGE);
    occupy(network.netns);
    const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => removePodNetwork(network)));
    for (const result of results) if (result.status === 'rejected') failures.push(`round ${round}: ${(result.reason as Error).message}`);
    assert.equal(await podNetworkExists(network), false, `round ${round}: the network is still there after its removal resolved`);
  }
  assert.deepEqual(failures, []);
});

test('concurrent removals of a veth pair left without its namespace all succeed', { skip: !asRoot && 'needs root (network namespaces)' }, async () => {
  const network = podNetworkOf('ptest', 900103);
  const failures: string[] = [];
  // eight `ip link del` at once: the ones that looked the pair up before another deleted it hear "No such device"
  for (let round = 0; round < 40; round++) {
    await runChecked('ip', ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', network.podVeth]);
    const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => removePodNetwork(network)));
    for (const result of results) if (result.status === 'rejected') failures.push(`round ${round}: ${(result.reason as Error).message}`);
    assert.equal(await podNetworkExists(network), false, `round ${round}: the pair is still there after its removal resolved`);
  }
  assert.deepEqual(failures, []);
});

test('removing a network that is not there, twice, is fine', { skip: !asRoot && 'needs root (network namespaces)' }, async () => {
  const network = podNetworkOf('ptest', 900102);
  await removePodNetwork(network);
  await removePodNetwork(network);
  assert.equal(await podNetworkExists(network), false);
});
