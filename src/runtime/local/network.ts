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

/**
 * Kills what still runs in the namespace, deletes it and the host end of the veth pair; idempotent, also while
 * another removal of the same network runs. When it resolves, neither is on the host any more.
 */
export async function removePodNetwork(network: Pick<PodNetwork, 'netns' | 'hostVeth'>): Promise<void> {
  await removeNetns(network.netns);
  // Deleting the namespace removes the pair with it, but the kernel does that later (when the namespace's last
  // process has died and its cleanup has run): deleting the host end now makes the pair gone when this resolves.
  await removeIfPresent(['link', 'del', network.hostVeth], () => linkExists(network.hostVeth));
}

/** Kills what still runs in the namespace and deletes it (its devices go with it); idempotent. */
export async function removeNetns(netns: string): Promise<void> {
  const pids = await runCommand('ip', ['netns', 'pids', netns]);
  if (pids.code === 0) for (const pid of pids.stdout.split(/\s+/).filter(Boolean)) killProcess(Number(pid));
  await removeIfPresent(['netns', 'del', netns], () => netnsExists(netns));
}

/**
 * Runs `ip <args>`; a failure counts as success when the thing is gone afterwards. `ip` words "already gone" in
 * several ways ("Cannot find device", "RTNETLINK answers: No such device" when it vanished between the lookup and
 * the deletion, "No such file or directory" for a namespace), and a concurrent removal or the kernel's own cleanup
 * may win the race: what counts is whether it is still there.
 */
async function removeIfPresent(args: string[], present: () => Promise<boolean>): Promise<void> {
  const result = await runCommand('ip', args);
  if (result.code === 0 || !(await present())) return;
  throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim() || `exit code ${result.code}`}`);
}

async function linkExists(name: string): Promise<boolean> {
  return (await runCommand('ip', ['link', 'show', 'dev', name])).code === 0;
}

export async function netnsExists(name: string): Promise<boolean> {
  const namespaces = await runChecked('ip', ['netns', 'list']);
  return namespaces.split('\n').some((line) => line.split(' ')[0] === name);
}

/** Whether anything of the pod network is still on the host (for tests and checks). */
export async function podNetworkExists(network: Pick<PodNetwork, 'netns' | 'hostVeth'>): Promise<boolean> {
  return (await netnsExists(network.netns)) || (await linkExists(network.hostVeth));
}
