// Names and addresses of a pod's network, derived from the installation (installation.ts `installationTag`) and the
// workspace id, so a restarted server (or a fresh driver) finds them again without a lookup, and two installations
// on one machine never share a name. Address ranges are the installation's own (address-blocks.ts). Each editor pod gets a /30: the host end of its veth pair and the pod end;
// each workspace gets a service network shared by its pods (see serviceNetworkOf).
import { createHash } from 'node:crypto';

export const DEFAULT_POD_ADDRESS_RANGE = '10.213.0.0/16';
/** Workspaces' service networks (replicas, the editor's second link) come from a range of their own. */
export const DEFAULT_SERVICE_ADDRESS_RANGE = '10.214.0.0/16';

export interface PodNetwork {
  /** Network namespace, as `ip netns` names it. */
  netns: string;
  /** Host end of the veth pair (interface names have at most 15 characters). */
  hostVeth: string;
  /** Pod end of the veth pair, inside the namespace. */
  podVeth: string;
  hostAddress: string;
  /** The pod's address: where the host reaches the agent and the editor. */
  podAddress: string;
  /** The /30 both ends share, e.g. 10.213.4.36/30. */
  subnet: string;
}

const MAX_INTERFACE_NAME = 15;

/** The pod network of workspace `id` of `installation` (its tag) in `range` (a private IPv4 CIDR of /8 to /28). */
export function podNetworkOf(installation: string, id: number, range: string = DEFAULT_POD_ADDRESS_RANGE): PodNetwork {
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`a workspace id is a positive integer, not ${id}`);
  const { base, prefix } = parsePrivateRange(range);
  const blocks = 2 ** (32 - prefix) / 4;
  const block = base + (id % blocks) * 4;
  return {
    netns: `svc-${installation}-ws${id}`,
    hostVeth: interfaceName('h', installation, id),
    podVeth: interfaceName('p', installation, id),
    hostAddress: formatAddress(block + 1),
    podAddress: formatAddress(block + 2),
    subnet: `${formatAddress(block)}/30`,
  };
}

/**
 * `<kind><installation tag><id in base 36>`, e.g. `h1a2b32a` (at most 15 characters: 1 + 5 + 9); an id too long for
 * that (beyond 36^9) is written as 9 hex digits of its hash, upper case, so never one of the base-36 names.
 */
function interfaceName(kind: string, installation: string, id: number): string {
  if (!/^[0-9a-z]{1,5}$/.test(installation)) throw new Error(`an installation tag is 1 to 5 lower-case letters or digits, not "${installation}"`);
  const name = `${kind}${installation}${id.toString(36)}`;
  if (name.length <= MAX_INTERFACE_NAME) return name;
  return `${kind}${installation}${createHash('sha256').update(String(id)).digest('hex').slice(0, 9).toUpperCase()}`;
}

export function parsePrivateRange(range: string): { base: number; prefix: number } {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(range);
  const octets = match?.slice(1, 5).map(Number) ?? [];
  const prefix = Number(match?.[5]);
  if (!match || octets.some((o) => o > 255) || prefix < 8 || prefix > 28) {
    throw new Error(`the pod address range "${range}" is not an IPv4 CIDR between /8 and /28`);
  }
  const address = octets.reduce((value, octet) => value * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  const base = address - (address % size);
  if (!isPrivate(base, prefix)) throw new Error(`the pod address range "${range}" is not inside 10/8, 172.16/12 or 192.168/16`);
  return { base, prefix };
}

const privateRanges: Array<[number, number]> = [
  [10 * 2 ** 24, 8],
  [(172 * 256 + 16) * 2 ** 16, 12],
  [(192 * 256 + 168) * 2 ** 16, 16],
];

function isPrivate(base: number, prefix: number): boolean {
  return privateRanges.some(([start, bits]) => prefix >= bits && Math.floor(base / 2 ** (32 - bits)) === Math.floor(start / 2 ** (32 - bits)));
}

function formatAddress(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** A workspace's service network: a /26 of the service range, .1 the host, .2 the editor pod, .3 to .62 replicas. */
export const SERVICE_SUBNET_PREFIX = 26;
const FIRST_REPLICA_HOST = 3;
/** How many replicas of one workspace can run at once (as root). */
export const REPLICA_SLOTS = 2 ** (32 - SERVICE_SUBNET_PREFIX) - 2 - FIRST_REPLICA_HOST + 1;

/**
 * The segment every pod of a workspace shares (server as root): a bridge in a network namespace of its own (the
 * switch), with a link to the host. Pods of one workspace reach each other on it; pods of other workspaces are on
 * other segments and nothing routes between them.
 */
export interface ServiceNetwork {
  /** The switch's network namespace: `svc-<installation>-ws<id>-net`. */
  netns: string;
  /** The host's end of its link to the switch. */
  hostVeth: string;
  /** E.g. 10.214.3.64/26. */
  subnet: string;
  hostAddress: string;
  editorAddress: string;
}

/**
 * The service network of workspace `id`: block `(id + attempt) mod blocks` of `range`. The driver moves on to the
 * next attempt while a block is taken on this host, and records the one it used.
 */
export function serviceNetworkOf(installation: string, id: number, range: string = DEFAULT_SERVICE_ADDRESS_RANGE, attempt = 0): ServiceNetwork {
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`a workspace id is a positive integer, not ${id}`);
  const { base, prefix } = parsePrivateRange(range);
  if (prefix > SERVICE_SUBNET_PREFIX) throw new Error(`the service address range "${range}" is smaller than a /${SERVICE_SUBNET_PREFIX}`);
  const size = 2 ** (32 - SERVICE_SUBNET_PREFIX);
  const blocks = 2 ** (32 - prefix) / size;
  const block = base + ((id + attempt) % blocks) * size;
  return {
    netns: `svc-${installation}-ws${id}-net`,
    hostVeth: interfaceName('n', installation, id),
    subnet: `${formatAddress(block)}/${SERVICE_SUBNET_PREFIX}`,
    hostAddress: formatAddress(block + 1),
    editorAddress: formatAddress(block + 2),
  };
}

/** The address of replica slot `slot` (0 to REPLICA_SLOTS - 1) on the workspace's service network. */
export function replicaAddressOf(network: ServiceNetwork, slot: number): string {
  if (!Number.isSafeInteger(slot) || slot < 0 || slot >= REPLICA_SLOTS) throw new Error(`no replica slot ${slot}`);
  const [address] = network.subnet.split('/');
  const base = address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
  return formatAddress(base + FIRST_REPLICA_HOST + slot);
}

/** The network namespace of a replica's pod. */
export function replicaNetnsOf(installation: string, id: number, service: string, index: number): string {
  return `svc-${installation}-ws${id}-${service}-${index}`;
}

/** The replica's link in its workspace's switch (names there are the switch's own, so they only need to differ there). */
export function replicaSwitchLinkOf(service: string, index: number): string {
  return `r${createHash('sha256').update(`${service}/${index}`).digest('hex').slice(0, 12)}`;
}

/** Whether two ranges share any address. */
export function rangesOverlap(a: string, b: string): boolean {
  const first = parsePrivateRange(a);
  const second = parsePrivateRange(b);
  const end = (r: { base: number; prefix: number }) => r.base + 2 ** (32 - r.prefix);
  return first.base < end(second) && second.base < end(first);
}
