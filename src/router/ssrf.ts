// The SSRF guard of `forward` services: a target URL is resolved once, every address it resolves to must be public
// (or opened by the installation's allow-list or the team's own services), and the first address is pinned so the
// connection goes where the check looked, whatever DNS answers later (rebinding).
import dns from 'node:dns';
import net from 'node:net';
import type { Upstream } from './proxy.ts';
import { Refusal } from './refusal.ts';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

/** An address as a number: 32 bits for IPv4, 128 bits for IPv6. */
interface NumericAddress {
  family: 4 | 6;
  value: bigint;
}

interface AddressRange extends NumericAddress {
  prefix: number;
}

/** What a range means: a class, or "classify the IPv4 address it embeds" at this bit offset (from the right). */
type RangeMeaning = AddressClass | { embeddedIPv4Shift: bigint };

const BITS = { 4: 32, 6: 128 } as const;

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    // Leading zeros are refused: some resolvers read them as octal.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIPv6(text: string): bigint | undefined {
  const withoutZone = text.replace(/%[^%]*$/, '');
  let groups = withoutZone;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(withoutZone);
  if (dotted) {
    const v4 = parseIPv4(dotted[2]);
    if (v4 === undefined) return undefined;
    groups = `${dotted[1]}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = groups.split('::');
  if (halves.length > 2) return undefined;
  const split = (half: string) => (half === '' ? [] : half.split(':'));
  const head = split(halves[0]);
  const tail = halves.length === 2 ? split(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  let value = 0n;
  for (const group of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    value = (value << 16n) | BigInt(`0x${group}`);
  }
  return value;
}

/** An IP address in any usual spelling (IPv6 with or without brackets and zone), or undefined. */
function parseAddress(text: string): NumericAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const v4 = parseIPv4(bare);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = bare.includes(':') ? parseIPv6(bare) : undefined;
  return v6 === undefined ? undefined : { family: 6, value: v6 };
}

function parseRange(text: string): AddressRange | undefined {
  const [addressText, prefixText, ...rest] = text.trim().split('/');
  const address = parseAddress(addressText);
  if (!address || rest.length > 0) return undefined;
  if (prefixText === undefined) return { ...address, prefix: BITS[address.family] };
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > BITS[address.family]) return undefined;
  return { ...address, prefix: Number(prefixText) };
}

function rangeOf(text: string): AddressRange {
  const range = parseRange(text);
  if (!range) throw new Error(`bad built-in range ${text}`);
  return range;
}

function hostBits(range: AddressRange): bigint {
  return (1n << BigInt(BITS[range.family] - range.prefix)) - 1n;
}

function inRange(address: NumericAddress, range: AddressRange): boolean {
  return address.family === range.family && (address.value & ~hostBits(range)) === range.value;
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

const IPV4_RANGES: [AddressRange, AddressClass][] = (
  [
    ['169.254.169.254', 'metadata'], // AWS, GCP, Azure, OpenStack
    ['169.254.170.2', 'metadata'], // AWS ECS task credentials
    ['100.100.100.200', 'metadata'], // Alibaba Cloud
    ['192.0.0.192', 'metadata'], // Oracle Cloud
    ['0.0.0.0/8', 'unspecified'],
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'private'], // carrier-grade NAT
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
    ['192.0.2.0/24', 'reserved'], // documentation
    ['192.88.99.0/24', 'reserved'], // former 6to4 relays
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'reserved'], // benchmarking
    ['198.51.100.0/24', 'reserved'], // documentation
    ['203.0.113.0/24', 'reserved'], // documentation
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'], // includes the broadcast address 255.255.255.255
  ] as const
).map(([range, meaning]): [AddressRange, AddressClass] => [rangeOf(range), meaning]);

// First match wins; anything outside global unicast 2000::/3 is reserved.
const IPV6_RANGES: [AddressRange, RangeMeaning][] = (
  [
    ['::/128', 'unspecified'],
    ['::1/128', 'loopback'],
    ['fd00:ec2::254/128', 'metadata'], // AWS over IPv6
    ['::ffff:0:0/96', { embeddedIPv4Shift: 0n }], // IPv4-mapped
    ['::ffff:0:0:0/96', { embeddedIPv4Shift: 0n }], // IPv4-translated (SIIT)
    ['64:ff9b::/96', { embeddedIPv4Shift: 0n }], // NAT64 well-known prefix
    ['64:ff9b:1::/48', 'private'], // NAT64 local use
    ['::/96', 'reserved'], // IPv4-compatible, deprecated
    ['100::/64', 'reserved'], // discard only
    ['2001::/23', 'reserved'], // IETF protocol assignments, Teredo
    ['2001:db8::/32', 'reserved'], // documentation
    ['2002::/16', { embeddedIPv4Shift: 80n }], // 6to4
    ['3fff::/20', 'reserved'], // documentation
    ['5f00::/16', 'reserved'], // SRv6 segment identifiers
    ['2000::/3', 'public'],
    ['fc00::/7', 'private'], // unique local
    ['fe80::/10', 'link-local'],
    ['fec0::/10', 'private'], // site-local, deprecated
    ['ff00::/8', 'multicast'],
  ] as const
).map(([range, meaning]): [AddressRange, RangeMeaning] => [rangeOf(range), meaning]);

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64, 6to4), if any. */
function embeddedIPv4(address: NumericAddress): NumericAddress | undefined {
  if (address.family === 4) return undefined;
  const meaning = IPV6_RANGES.find(([range]) => inRange(address, range))?.[1];
  if (typeof meaning !== 'object') return undefined;
  return { family: 4, value: (address.value >> meaning.embeddedIPv4Shift) & 0xffffffffn };
}

function classifyNumeric(address: NumericAddress): AddressClass {
  if (address.family === 4) return IPV4_RANGES.find(([range]) => inRange(address, range))?.[1] ?? 'public';
  const embedded = embeddedIPv4(address);
  if (embedded) return classifyNumeric(embedded);
  const meaning = IPV6_RANGES.find(([range]) => inRange(address, range))?.[1];
  return typeof meaning === 'string' ? meaning : 'reserved';
}

/** The class of an IPv4 or IPv6 address; IPv6 addresses that embed an IPv4 address take its class. */
export function classifyAddress(ip: string): AddressClass {
  const address = parseAddress(ip);
  if (!address) throw new TypeError(`${ip} is not an IP address`);
  return classifyNumeric(address);
}

/**
 * Non-public addresses forward targets may use anyway, from configuration: CIDRs (`10.20.0.0/16`, `fd00:1::/64`)
 * or single addresses. A range never opens a metadata address; only an entry naming that exact address does.
 */
export class AllowList {
  private readonly ranges: AddressRange[];

  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      const range = parseRange(entry);
      if (!range) throw new Error(`forward allow-list entry "${entry}" is not an IP address or CIDR`);
      if ((range.value & hostBits(range)) !== 0n) {
        const network = formatRange({ ...range, value: range.value & ~hostBits(range) });
        throw new Error(`forward allow-list entry "${entry}" has host bits set; did you mean ${network}?`);
      }
      return range;
    });
  }

  allows(ip: string): boolean {
    const address = parseAddress(ip);
    if (!address) return false;
    const forms = [address, embeddedIPv4(address)].filter((form): form is NumericAddress => form !== undefined);
    const metadata = classifyNumeric(address) === 'metadata';
    return this.ranges.some((range) =>
      forms.some((form) => inRange(form, range) && (!metadata || range.prefix === BITS[range.family])),
    );
  }
}

function formatRange(range: AddressRange): string {
  if (range.family === 4) return `${formatIPv4(range.value)}/${range.prefix}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((range.value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return `${groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::')}/${range.prefix}`;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface ForwardTargetOptions {
  allow: AllowList;
  /** Resolves a host name to all its addresses; DNS (getaddrinfo, unsorted) by default. */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
  /** True for addresses of the team's own services, which may be private. */
  teamAddresses?: (ip: string) => boolean;
}

export type ForwardTarget =
  | {
      ok: true;
      url: URL;
      /** The pinned address: connect here, never resolve the host name again. */
      address: string;
      family: 4 | 6;
      /** `Host` header for the upstream request (the target's host and non-default port). */
      hostHeader: string;
      /** TLS server name for https targets named by a host name. */
      servername?: string;
    }
  | {
      ok: false;
      /** `forbidden`: the address is not allowed; `unresolvable`: the name does not resolve; `invalid`: not an http(s) URL. */
      kind: 'forbidden' | 'unresolvable' | 'invalid';
      /** Readable detail for the router page; never contains the URL's user info. */
      reason: string;
      address?: string;
    };

const defaultLookup = (host: string): Promise<ResolvedAddress[]> => dns.promises.lookup(host, { all: true, order: 'verbatim' });

const ARTICLE: Record<AddressClass, string> = {
  public: 'a public',
  loopback: 'a loopback',
  private: 'a private',
  'link-local': 'a link-local',
  metadata: 'a cloud metadata',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  reserved: 'a reserved',
};

/** What is wrong with an address (`127.0.0.1`, `a loopback address`), or undefined when it may be used. */
function refusalOf(ip: string, options: ForwardTargetOptions): { shown: string; what: string } | undefined {
  const address = parseAddress(ip);
  if (!address) return { shown: ip, what: 'not an IP address' };
  const addressClass = classifyNumeric(address);
  if (addressClass === 'public' || options.allow.allows(ip)) return undefined;
  if (addressClass !== 'metadata' && options.teamAddresses?.(ip)) return undefined;
  const embedded = embeddedIPv4(address);
  return { shown: embedded ? `${ip} (IPv4 ${formatIPv4(embedded.value)})` : ip, what: `${ARTICLE[addressClass]} address` };
}

function familyOf(ip: string): 4 | 6 {
  return net.isIPv4(ip) ? 4 : 6;
}

function success(url: URL, address: string): ForwardTarget {
  const literal = url.hostname.startsWith('[') || parseIPv4(url.hostname) !== undefined;
  const servername = url.protocol === 'https:' && !literal ? url.hostname.replace(/\.$/, '') : undefined;
  return { ok: true, url, address, family: familyOf(address), hostHeader: url.host, ...(servername ? { servername } : {}) };
}

/**
 * Checks a forward target and pins the address to connect to. A host name must resolve, and every address it
 * resolves to must be allowed (a mixed answer is refused); the first address is the pinned one.
 */
export async function resolveForwardTarget(target: string, options: ForwardTargetOptions): Promise<ForwardTarget> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { ok: false, kind: 'invalid', reason: 'the target is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, kind: 'invalid', reason: `only http and https targets are forwarded, not ${url.protocol.slice(0, -1)}` };
  }
  if (url.hostname === '') return { ok: false, kind: 'invalid', reason: 'the target has no host' };
  // WHATWG parsing already turned decimal, octal and hex IPv4 spellings into dotted form.
  const literal = parseAddress(url.hostname);
  if (literal) {
    const address = url.hostname.replace(/^\[|\]$/g, '');
    const refusal = refusalOf(address, options);
    if (refusal) return { ok: false, kind: 'forbidden', reason: `${refusal.shown} is ${refusal.what}`, address };
    return success(url, address);
  }
  let answers: ResolvedAddress[];
  try {
    answers = await (options.lookup ?? defaultLookup)(url.hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, kind: 'unresolvable', reason: `name does not resolve: ${url.hostname}${code ? ` (${code})` : ''}` };
  }
  if (answers.length === 0) return { ok: false, kind: 'unresolvable', reason: `name does not resolve: ${url.hostname} (no addresses)` };
  for (const { address } of answers) {
    const refusal = refusalOf(address, options);
    if (refusal) return { ok: false, kind: 'forbidden', reason: `${url.hostname} resolves to ${refusal.shown}, ${refusal.what}`, address };
  }
  return success(url, answers[0].address);
}

/**
 * A `lookup` for `http.request` / `net.connect` that answers the pinned address whatever the host name, in the
 * shape asked for (`all: true` is what Node's happy-eyeballs connect asks).
 */
export function pinnedLookup(address: string, family: 4 | 6): net.LookupFunction {
  return (_hostname, options, callback) => {
    process.nextTick(() => {
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    });
  };
}
