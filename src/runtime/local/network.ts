// A pod's network namespace with a veth pair to the host (only when the server runs as root). The host reaches the
// pod at its address; the pod has no route beyond its /30 (no NAT is set up).
import type { PodNetwork } from './addresses.ts';
import { killProcess, runChecked, runCommand } from './processes.ts';

/**
 * Creates the namespace and the veth pair, after removing leftovers of an earlier pod of the same workspace. The
 * whole pod range is made unreachable first, so traffic to a pod that is gone fails at once on this host instead
 * of following the default route out of it (the /30 of a running pod is more specific and wins).
 */
export async function createPodNetwork(network: PodNetwork, addressRange: string): Promise<void> {
  await runChecked('ip', ['route', 'replace', 'unreachable', addressRange]);
  await removePodNetwork(network);
  const taken = await runChecked('ip', ['-o', '-4', 'addr', 'show', 'to', network.subnet]);
  if (taken.trim()) throw new Error(`the pod address range ${network.subnet} is already used on this host: ${taken.trim().split(/\s+/)[1]}`);
  try {
    await runChecked('ip', ['netns', 'add', network.netns]);
    await runChecked('ip', ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', network.podVeth, 'netns', network.netns]);
    await runChecked('ip', ['addr', 'add', `${network.hostAddress}/30`, 'dev', network.hostVeth]);
    await runChecked('ip', ['link', 'set', network.hostVeth, 'up']);
    await runChecked('ip', ['-n', network.netns, 'addr', 'add', `${network.podAddress}/30`, 'dev', network.podVeth]);
    await runChecked('ip', ['-n', network.netns, 'link', 'set', network.podVeth, 'up']);
    await runChecked('ip', ['-n', network.netns, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    await removePodNetwork(network);
    throw error;
  }
}

/** Kills what still runs in the namespace, deletes it and the host end of the veth pair; idempotent. */
export async function removePodNetwork(network: Pick<PodNetwork, 'netns' | 'hostVeth'>): Promise<void> {
  const pids = await runCommand('ip', ['netns', 'pids', network.netns]);
  if (pids.code === 0) for (const pid of pids.stdout.split(/\s+/).filter(Boolean)) killProcess(Number(pid));
  const deleted = await runCommand('ip', ['netns', 'del', network.netns]);
  if (deleted.code !== 0 && !/No such file/.test(deleted.stderr)) throw new Error(`ip netns del ${network.netns}: ${deleted.stderr.trim()}`);
  // deleting the namespace removes the pair with it; this is for a pair left without its namespace
  const link = await runCommand('ip', ['link', 'del', network.hostVeth]);
  if (link.code !== 0 && !/Cannot find device/.test(link.stderr)) throw new Error(`ip link del ${network.hostVeth}: ${link.stderr.trim()}`);
}

/** Whether anything of the pod network is still on the host (for tests and checks). */
export async function podNetworkExists(network: PodNetwork): Promise<boolean> {
  const namespaces = await runCommand('ip', ['netns', 'list']);
  const link = await runCommand('ip', ['link', 'show', network.hostVeth]);
  return namespaces.stdout.split('\n').some((line) => line.split(' ')[0] === network.netns) || link.code === 0;
}
