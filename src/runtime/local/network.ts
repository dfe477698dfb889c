// A pod's network namespace with a veth pair to the host (only when the server runs as root). The host reaches the
// pod at its address; the pod's default route is the host's end of the pair, where the installation's firewall
// (pod-firewall.ts) applies the egress policy (egress.ts) and masquerades what goes out; what it opens to the host
// itself is refused. A sleeping workspace keeps its
// network (docs/runtime.md, "How long a wake takes"): the host end of the pair carries an ownership mark, its
// alias, written once the network is complete, so a wake reuses only a network this installation made whole.
import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PodNetwork } from './addresses.ts';
import type { Egress } from './egress.ts';
import { installationId } from './installation.ts';
import { guardHostLink } from './pod-firewall.ts';
import { ipBatch, killProcess, runChecked, runCommand } from './processes.ts';

/** Where `ip netns add` keeps named namespaces (iproute2's NETNS_RUN_DIR). */
const NETNS_DIR = '/run/netns';

/**
 * Who made a network: `svc:<installation id>` (installation.ts). Names of namespaces and links derive from the
 * installation and the workspace id, so a namespace of the same name is this installation's, a leftover of a run
 * that was killed half-way; only one carrying the mark is reused, any other is removed and made afresh.
 */
export function networkOwner(dataDir: string): string {
  return `svc:${installationId(dataDir)}`;
}

/** The installation tag (installation.ts `installationTag`) of an owner's mark. */
export const ownerTag = (owner: string) => owner.slice('svc:'.length, 'svc:'.length + 5);

/** The mark of a complete pod network of `owner`: owner and subnet (a changed address range makes it stale). */
export const podNetworkMark = (owner: string, network: Pick<PodNetwork, 'subnet'>) => `${owner} ${network.subnet}`;

/** A host link's alias (`ip link set ... alias`), read from sysfs without starting `ip`; undefined without the link. */
export async function linkMark(name: string): Promise<string | undefined> {
  const text = await readFile(path.join('/sys/class/net', name, 'ifalias'), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : text.trim();
}

/** Sets a host link's alias through sysfs (root only). */
export async function setLinkMark(name: string, mark: string): Promise<void> {
  await writeFile(path.join('/sys/class/net', name, 'ifalias'), mark);
}

/**
 * A host link's index: the kernel numbers new links upwards, so a link made again under the same name has another
 * index, which tells "the same switch as before" from "a switch of the same name".
 */
export async function linkIndex(name: string): Promise<string | undefined> {
  return readFile(path.join('/sys/class/net', name, 'ifindex'), 'utf8').then((text) => text.trim(), () => undefined);
}

/**
 * The pod network as a wake finds it: kept from before the sleep when its namespace is there and its host link
 * carries `owner`'s mark (no process is started then), else made afresh and marked. Either way its host link is
 * under the installation's firewall (pod-firewall.ts) before the pod starts. Answers the link's mark as it is now
 * (the mark with what was linked to it since, see pods.ts).
 */
export async function ensurePodNetwork(network: PodNetwork, addressRange: string, owner: string, egress: Egress = 'on'): Promise<string> {
  const mark = podNetworkMark(owner, network);
  const found = await linkMark(network.hostVeth);
  if (found !== undefined && (found === mark || found.startsWith(`${mark} `)) && (await netnsExists(network.netns))) {
    await guardHostLink(owner, network.hostVeth, egress);
    return found;
  }
  refuseOthers(network.hostVeth, found, owner);
  await createPodNetwork(network, addressRange);
  await guardHostLink(owner, network.hostVeth, egress).catch(async (error: unknown) => {
    await removePodNetwork(network);
    throw error;
  });
  await setLinkMark(network.hostVeth, mark);
  return mark;
}

/**
 * Refuses to touch a host link another installation marked (`svc:<its id>`): names hold the installation's tag, so
 * this means two installations share a tag; removing the link would cut the other's pod off.
 */
export function refuseOthers(link: string, mark: string | undefined, owner: string): void {
  const other = mark?.split(' ')[0];
  if (other && other.startsWith('svc:') && other !== owner) {
    throw new Error(`the host link ${link} belongs to another svc installation (${other}), not this one (${owner}); it is left alone`);
  }
}

/**
 * Creates the namespace and the veth pair, after removing leftovers of an earlier pod of the same workspace, with
 * the pod's default route through the host's end. The whole pod range is made unreachable first, so traffic to a pod that is gone fails at once on this host instead
 * of following the default route out of it (the /30 of a running pod is more specific and wins).
 */
export async function createPodNetwork(network: PodNetwork, addressRange: string): Promise<void> {
  await removePodNetwork(network);
  const taken = await runChecked('ip', ['-o', '-4', 'addr', 'show', 'to', network.subnet]);
  if (taken.trim()) throw new Error(`the pod address range ${network.subnet} is already used on this host: ${taken.trim().split(/\s+/)[1]}`);
  try {
    await ipBatch([
      ['route', 'replace', 'unreachable', addressRange],
      ['netns', 'add', network.netns],
      ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', network.podVeth, 'netns', network.netns],
      ['addr', 'add', `${network.hostAddress}/30`, 'dev', network.hostVeth],
      ['link', 'set', network.hostVeth, 'up'],
    ]);
    await ipBatch([
      ['addr', 'add', `${network.podAddress}/30`, 'dev', network.podVeth],
      ['link', 'set', network.podVeth, 'up'],
      ['link', 'set', 'lo', 'up'],
      ['route', 'replace', 'default', 'via', network.hostAddress, 'dev', network.podVeth],
    ], network.netns);
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

/**
 * Removes the pod network unless its host link carries another installation's mark (then it is left alone): what a
 * removal by name does where the name could be another's.
 */
export async function removeOwnPodNetwork(network: Pick<PodNetwork, 'netns' | 'hostVeth'>, owner: string): Promise<void> {
  const other = (await linkMark(network.hostVeth))?.split(' ')[0];
  if (other && other.startsWith('svc:') && other !== owner) return;
  await removePodNetwork(network);
}

/** Kills what still runs in the namespace and deletes it (its devices go with it); idempotent. */
export async function removeNetns(netns: string): Promise<void> {
  if (!(await netnsExists(netns))) return;
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
  if (!(await present())) return;
  const result = await runCommand('ip', args);
  if (result.code === 0 || !(await present())) return;
  throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim() || `exit code ${result.code}`}`);
}

/** Whether the host has the link: its entry in sysfs (the server's own network namespace), without starting `ip`. */
async function linkExists(name: string): Promise<boolean> {
  return access(path.join('/sys/class/net', name)).then(() => true, () => false);
}

/** Whether the named namespace exists: its file where `ip netns add` puts it, without starting `ip`. */
export async function netnsExists(name: string): Promise<boolean> {
  return access(path.join(NETNS_DIR, name)).then(() => true, () => false);
}

/** Whether anything of the pod network is still on the host (for tests and checks). */
export async function podNetworkExists(network: Pick<PodNetwork, 'netns' | 'hostVeth'>): Promise<boolean> {
  return (await netnsExists(network.netns)) || (await linkExists(network.hostVeth));
}
