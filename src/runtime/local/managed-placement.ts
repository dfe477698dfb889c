// Where a workspace's managed-service instances sit on its service network (server as root): each in a network
// namespace of its own linked to the switch like a replica, at an address taken from the top of the replica range
// (replicas take the lowest free one, and never one a managed service holds), its name in the workspace's hosts file
// like a service's. Records under <data dir>/pods/<id>/managed/<name>.json, so a restarted server finds them again.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPLICA_SLOTS, replicaAddressOf, replicaSwitchLinkOf, type ServiceNetwork } from './addresses.ts';
import { netnsExists, removeNetns } from './network.ts';
import { workspaceRuntimeDir } from './replica-files.ts';
import { runCommand } from './processes.ts';
import { POD_LINK, attachToServiceNetwork, createReplicaNetns } from './service-network.ts';
import { installationTag } from './installation.ts';

export interface ManagedPlacement {
  name: string;
  netns: string;
  address: string;
}

const managedDir = (dataDir: string, id: number) => path.join(workspaceRuntimeDir(dataDir, id), 'managed');
const recordFile = (dataDir: string, id: number, name: string) => path.join(managedDir(dataDir, id), `${name}.json`);
/** `m-` keeps it apart from replicas' namespaces (svc-<installation>-ws<id>-<service>-<index>). */
export const managedNetnsOf = (installation: string, id: number, name: string) => `svc-${installation}-ws${id}-m-${name}`;

const switchLinkOf = (name: string) => replicaSwitchLinkOf(`managed:${name}`, 0);

export async function listManagedPlacements(dataDir: string, id: number): Promise<ManagedPlacement[]> {
  const names = await readdir(managedDir(dataDir, id)).catch(() => [] as string[]);
  const records: ManagedPlacement[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const text = await readFile(path.join(managedDir(dataDir, id), name), 'utf8').catch(() => undefined);
    if (text !== undefined) records.push(JSON.parse(text) as ManagedPlacement);
  }
  return records;
}

/**
 * The placement of managed service `name`: the one recorded while its namespace exists (the instance in it keeps
 * running), else a fresh namespace at the highest address no replica or other managed service holds.
 */
export async function placeManaged(dataDir: string, id: number, network: ServiceNetwork, name: string, replicaAddresses: string[]): Promise<ManagedPlacement> {
  const placements = await listManagedPlacements(dataDir, id);
  const earlier = placements.find((p) => p.name === name);
  if (earlier && (await netnsExists(earlier.netns))) {
    await relinkPlacement(network, earlier);
    return earlier;
  }
  const taken = new Set([...replicaAddresses, ...placements.filter((p) => p.name !== name).map((p) => p.address)]);
  const slots = Array.from({ length: REPLICA_SLOTS }, (_, slot) => replicaAddressOf(network, REPLICA_SLOTS - 1 - slot));
  const address = earlier && !taken.has(earlier.address) ? earlier.address : slots.find((a) => !taken.has(a));
  if (!address) throw new Error(`no address left on the workspace's service network for managed service ${name}`);
  const placement = { name, netns: managedNetnsOf(installationTag(dataDir), id, name), address };
  await createReplicaNetns(placement.netns);
  await attachToServiceNetwork(network, placement.netns, switchLinkOf(name), address);
  await mkdir(managedDir(dataDir, id), { recursive: true, mode: 0o700 });
  await writeFile(recordFile(dataDir, id, name), JSON.stringify(placement), { mode: 0o600 });
  return placement;
}

/**
 * Links the placement's namespace to the switch again when a stop of the workspace took its service network down
 * with the link; the instance in the namespace went on running. Linked ones are left as they are.
 */
async function relinkPlacement(network: ServiceNetwork, placement: ManagedPlacement): Promise<void> {
  const linked = (await runCommand('ip', ['-n', placement.netns, 'link', 'show', POD_LINK])).code === 0;
  if (!linked) await attachToServiceNetwork(network, placement.netns, switchLinkOf(placement.name), placement.address);
}

/** Links every placed instance of the workspace whose namespace exists to its service network (start and wake). */
export async function relinkManagedPlacements(dataDir: string, id: number, network: ServiceNetwork): Promise<void> {
  for (const placement of await listManagedPlacements(dataDir, id)) {
    if (await netnsExists(placement.netns)) await relinkPlacement(network, placement);
  }
}

/** Removes the namespace (what runs in it ends) and the record; idempotent. */
export async function unplaceManaged(dataDir: string, id: number, name: string): Promise<void> {
  await removeNetns(managedNetnsOf(installationTag(dataDir), id, name));
  await rm(recordFile(dataDir, id, name), { force: true });
}
