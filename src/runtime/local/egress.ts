// The pods' egress policy as data (server as root): what a pod may open beyond its own workspace, enforced by the
// kernel in the installation's nftables table (pod-firewall.ts). The internet is allowed; the host's own addresses,
// every pod range, link-local and metadata addresses and the private ranges are refused unless the operator allows
// a range (`--egress-allow`); `--egress-deny` refuses more. The pods' resolvers are reached on port 53 whatever
// range they are in. IPv4 only: pods have no IPv6 address beyond their links' link-local ones, and IPv6 they send
// past their links is refused (fd00:ec2::254 among it).
import { readFileSync } from 'node:fs';

export interface PodEgress {
  /** The installation's pod and service ranges: masqueraded on their way out, never reached through the host. */
  podRanges: string[];
  /** IPv4 addresses of the pods' DNS resolvers (their /etc/resolv.conf), reached on port 53. */
  dns: string[];
  /** IPv4 CIDRs pods reach although private or link-local (and host addresses inside them). */
  allow: string[];
  /** IPv4 CIDRs pods never reach (wins over `allow`). */
  deny: string[];
  /** The installation's published address(es): the host's own, reached by pods on these TCP ports. */
  published: Array<{ address: string; port: number }>;
}

/** What pods do not reach unless allowed: "this network", private, shared (CGNAT), loopback, link-local, multicast, reserved. */
export const REFUSED_RANGES = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16', '224.0.0.0/4', '240.0.0.0/4'];

/** A workspace's egress: `on` (the policy above) or `off` (nothing beyond its own workspace's pods). */
export type Egress = 'on' | 'off';

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function isIpv4(text: string): boolean {
  const match = IPV4.exec(text);
  return !!match && match.slice(1).every((octet) => Number(octet) <= 255);
}

/** `a.b.c.d/n` or a bare address (a /32); throws naming the text otherwise. The address is kept as written. */
export function parseIpv4Cidr(text: string): string {
  const [address, prefix, extra] = text.trim().split('/');
  const bits = prefix === undefined ? 32 : Number(prefix);
  if (extra !== undefined || !isIpv4(address) || !/^\d{1,2}$/.test(prefix ?? '32') || bits > 32) {
    throw new Error(`"${text}" is not an IPv4 address or CIDR (pods have no IPv6 egress)`);
  }
  return `${address}/${bits}`;
}

/** A comma-separated list of CIDRs (a setting's text). */
export function parseCidrList(text: string): string[] {
  return text.split(',').map((part) => part.trim()).filter(Boolean).map(parseIpv4Cidr);
}

/** The nameservers of a resolv.conf text, in order. */
export function nameserversOf(text: string): string[] {
  return text.split('\n').map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1]).filter((address): address is string => !!address);
}

const isLoopback = (address: string) => address.startsWith('127.') || address === '::1';

/**
 * The resolvers pods use when the operator names none (`--pod-dns`): the host's, unless they are on loopback (a
 * pod's loopback is its own): then systemd-resolved's upstream servers when it keeps them. IPv4 only. `read` reads
 * a file or answers undefined.
 */
export function hostResolvers(read: (file: string) => string | undefined = readText): { servers: string[]; note?: string } {
  const own = nameserversOf(read('/etc/resolv.conf') ?? '');
  const reachable = own.filter((address) => !isLoopback(address) && isIpv4(address));
  if (reachable.length > 0) return { servers: reachable };
  const upstream = nameserversOf(read('/run/systemd/resolve/resolv.conf') ?? '').filter((address) => !isLoopback(address) && isIpv4(address));
  if (upstream.length > 0) return { servers: upstream, note: `pods resolve names with systemd-resolved's upstream servers ${upstream.join(', ')} (the host's resolver is on loopback)` };
  return { servers: [], note: `pods have no DNS resolver: the host's (${own.join(', ') || 'none'}) is on loopback and no upstream server was found; set --pod-dns` };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The resolv.conf pods get. */
export function podResolvConf(servers: string[]): string {
  return ['# The pods\' resolvers, written by svc (--pod-dns)', ...servers.map((server) => `nameserver ${server}`), 'options edns0', ''].join('\n');
}
