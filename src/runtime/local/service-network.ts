// A workspace's service network (server as root): a bridge in a network namespace of its own (the switch), linked
// to the host, to the editor pod and to every replica's pod. Pods of one workspace reach each other on it, and the
// host reaches them (what they open to the host is refused, pod-firewall.ts). Replicas' default route is the host's
// end of the switch's link, where the egress policy applies (egress.ts); the host never routes between the
// segments of different workspaces (the policy refuses every pod range).
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parsePrivateRange, SERVICE_SUBNET_PREFIX, serviceNetworkOf, type ServiceNetwork } from './addresses.ts';
import { linkIndex, linkMark, netnsExists, ownerTag, refuseOthers, removeNetns, removePodNetwork, setLinkMark } from './network.ts';
import type { Egress } from './egress.ts';
import { guardHostLink } from './pod-firewall.ts';
import { ipBatch, runChecked, runCommand } from './processes.ts';

const BRIDGE = 'br0';
const UPLINK = 'uplink';
/** The pod's end of its link to the switch. */
export const POD_LINK = 'lan0';
export const EDITOR_SWITCH_LINK = 'editor0';

const recordFile = (workspaceDir: string) => path.join(workspaceDir, 'network.json');

/**
 * The workspace's service network, created when it is not there, is broken or is not this installation's
 * (idempotent). Its block of `range` is the first one, from the id on, that no interface of this host uses;
 * `workspaceDir` keeps which. The switch's host link carries `owner`'s mark (network.ts) once it is complete: a
 * recorded network with it is taken as it is, without starting a process; a namespace of the same name without it
 * (a leftover of a killed run) is removed first, or `ip netns add` fails; a link another installation marked is refused.
 */
export async function ensureServiceNetwork(workspaceDir: string, id: number, range: string, owner: string, egress: Egress = 'on'): Promise<ServiceNetwork> {
  const recorded = await readFile(recordFile(workspaceDir), 'utf8').then((text) => JSON.parse(text) as ServiceNetwork, () => undefined);
  if (recorded && (await isServiceNetworkUp(recorded, owner))) {
    await guardHostLink(owner, recorded.hostVeth, egress);
    return recorded;
  }
  if (recorded) await removeServiceNetwork(recorded);
  const installation = ownerTag(owner);
  const named = serviceNetworkOf(installation, id, range);
  refuseOthers(named.hostVeth, await linkMark(named.hostVeth), owner);
  await removeServiceNetwork(named); // names do not depend on the block
  const { prefix } = parsePrivateRange(range);
  const blocks = 2 ** (SERVICE_SUBNET_PREFIX - prefix);
  for (let attempt = 0; attempt < blocks; attempt++) {
    const network = serviceNetworkOf(installation, id, range, attempt);
    if ((await interfacesIn(network.subnet)).length > 0) continue;
    await createSwitch(network, range);
    if ((await interfacesIn(network.subnet)).length > 1) {
      await removeServiceNetwork(network); // another workspace took the block at the same moment
      continue;
    }
    await guardHostLink(owner, network.hostVeth, egress).catch(async (error: unknown) => {
      await removeServiceNetwork(network);
      throw error;
    });
    await setLinkMark(network.hostVeth, serviceNetworkMark(owner, network));
    await mkdir(workspaceDir, { recursive: true });
    await writeFile(`${recordFile(workspaceDir)}.partial`, JSON.stringify(network), { mode: 0o600 });
    await rename(`${recordFile(workspaceDir)}.partial`, recordFile(workspaceDir));
    return network;
  }
  throw new Error(`every block of the service address range ${range} is in use on this host`);
}

const serviceNetworkMark = (owner: string, network: ServiceNetwork) => `${owner} ${network.subnet}`;

/**
 * What the editor pod's link to the switch is marked with on its own host link (pods.ts): the switch's identity
 * (its host link's index) and the pod's address on it. A switch made again since has another index.
 */
export async function serviceLinkMark(network: ServiceNetwork): Promise<string> {
  return `lan ${await linkIndex(network.hostVeth)} ${network.editorAddress}`;
}

/** Removes the switch and with it every link to it (pods keep running, without their service network). */
export async function removeRecordedServiceNetwork(workspaceDir: string): Promise<void> {
  const recorded = await readFile(recordFile(workspaceDir), 'utf8').then((text) => JSON.parse(text) as ServiceNetwork, () => undefined);
  if (recorded) await removeServiceNetwork(recorded);
  await rm(recordFile(workspaceDir), { force: true });
}

/** Deleting the switch's namespace deletes the bridge and every link to it, the host's included. */
const removeServiceNetwork = (network: ServiceNetwork) => removePodNetwork(network);

/** Complete and this installation's: the namespace is there and its host link carries the mark written last. */
async function isServiceNetworkUp(network: ServiceNetwork, owner: string): Promise<boolean> {
  return (await linkMark(network.hostVeth)) === serviceNetworkMark(owner, network) && (await netnsExists(network.netns));
}

/** Names of the host's interfaces with an address in `subnet`. */
async function interfacesIn(subnet: string): Promise<string[]> {
  const listed = await runChecked('ip', ['-o', '-4', 'addr', 'show', 'to', subnet]);
  return listed.split('\n').filter(Boolean).map((line) => line.split(/\s+/)[1]);
}

async function createSwitch(network: ServiceNetwork, range: string): Promise<void> {
  try {
    await ipBatch([
      ['route', 'replace', 'unreachable', range],
      ['netns', 'add', network.netns],
      ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', UPLINK, 'netns', network.netns],
      ['addr', 'add', `${network.hostAddress}/${SERVICE_SUBNET_PREFIX}`, 'dev', network.hostVeth],
      ['link', 'set', network.hostVeth, 'up'],
    ]);
    await ipBatch([
      ['link', 'set', 'lo', 'up'],
      ['link', 'add', BRIDGE, 'type', 'bridge'],
      ['link', 'set', BRIDGE, 'up'],
      ['link', 'set', UPLINK, 'master', BRIDGE],
      ['link', 'set', UPLINK, 'up'],
    ], network.netns);
  } catch (error) {
    await removeServiceNetwork(network);
    throw error;
  }
}

/**
 * Links the pod's network namespace to the switch: `lan0` in the pod with `address`, `switchLink` on the bridge,
 * and the pod's default route through the host's end of the switch's link (`route: false`: the editor pod, whose
 * own link to the host is its way out). `down`: `lan0` stays down (no carrier on the switch's port, no answer for
 * the address) until set up (`bringUpServiceLink`).
 */
export async function attachToServiceNetwork(network: ServiceNetwork, podNetns: string, switchLink: string, address: string, options?: { down?: boolean; route?: boolean }): Promise<void> {
  // links left by an earlier pod, if any (each removal on its own: a missing one is no error)
  await Promise.all([
    runCommand('ip', ['-n', network.netns, 'link', 'del', switchLink]),
    runCommand('ip', ['-n', podNetns, 'link', 'del', POD_LINK]),
  ]);
  await ipBatch([
    ['link', 'add', switchLink, 'type', 'veth', 'peer', 'name', POD_LINK, 'netns', podNetns],
    ['link', 'set', switchLink, 'master', BRIDGE],
    ['link', 'set', switchLink, 'up'],
  ], network.netns);
  await ipBatch([
    ['link', 'set', POD_LINK, 'address', macAddressOf(address)],
    ['addr', 'add', `${address}/${SERVICE_SUBNET_PREFIX}`, 'dev', POD_LINK],
    ...(options?.down ? [] : [['link', 'set', POD_LINK, 'up'], ...(options?.route === false ? [] : [defaultRoute(network)])]),
  ], podNetns);
}

const defaultRoute = (network: ServiceNetwork) => ['route', 'replace', 'default', 'via', network.hostAddress, 'dev', POD_LINK];

/** Sets a prepared pod's `lan0` up, with its default route (a route needs its link up). */
export async function bringUpServiceLink(network: ServiceNetwork, podNetns: string): Promise<void> {
  await ipBatch([['link', 'set', POD_LINK, 'up'], defaultRoute(network)], podNetns);
}

/**
 * A locally administered MAC address made of the IPv4 address: a replica started again at the same address keeps
 * its MAC, so what the host and the other pods remember of it (their ARP caches) stays right.
 */
export function macAddressOf(address: string): string {
  const octets = address.split('.').map((octet) => Number(octet).toString(16).padStart(2, '0'));
  return ['02', '53', ...octets].join(':');
}

/** A replica's own network namespace, with loopback up; a leftover of the same name is replaced. */
export async function createReplicaNetns(netns: string): Promise<void> {
  await removeNetns(netns);
  await runChecked('ip', ['netns', 'add', netns]);
  await runChecked('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
}

