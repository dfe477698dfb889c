// Names and addresses of a pod's network, derived from the workspace id alone, so a restarted server (or a fresh
// driver) finds them again without a lookup. Each pod gets a /30: the host end of its veth pair and the pod end.

export const DEFAULT_POD_ADDRESS_RANGE = '10.213.0.0/16';

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

/** The pod network of workspace `id` in `range` (a private IPv4 CIDR of /8 to /28). */
export function podNetworkOf(id: number, range: string = DEFAULT_POD_ADDRESS_RANGE): PodNetwork {
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`a workspace id is a positive integer, not ${id}`);
  const { base, prefix } = parsePrivateRange(range);
  const blocks = 2 ** (32 - prefix) / 4;
  const block = base + (id % blocks) * 4;
  return {
    netns: `svc-ws${id}`,
    hostVeth: interfaceName('svh', 'vh', id),
    podVeth: interfaceName('svp', 'vp', id),
    hostAddress: formatAddress(block + 1),
    podAddress: formatAddress(block + 2),
    subnet: `${formatAddress(block)}/30`,
  };
}

/** `svh<id>` while it fits in 15 characters, else `vh<id in base 36>` (a separate family, so no clash). */
function interfaceName(prefix: string, shortPrefix: string, id: number): string {
  const decimal = `${prefix}${id}`;
  return decimal.length <= MAX_INTERFACE_NAME ? decimal : `${shortPrefix}${id.toString(36)}`;
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
