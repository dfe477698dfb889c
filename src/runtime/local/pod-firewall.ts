// What pods may reach on the host (server as root): nothing they open themselves. Every host end of a pod's links
// (the editor pod's `h<installation><id>`, the switch's `n<installation><id>`) carries the installation's interface group, and one nftables
// table of the installation refuses, in the kernel, whatever arrives on a link of that group and does not belong to
// a connection the host opened (the agent's, the router's, a probe's, a managed service's). Without it a pod
// reached everything the host binds to 0.0.0.0 or [::] at the host end of its links (issue 33, item 5).
// The table is `inet` (IPv4 and IPv6 alike). Its forward and NAT chains are the pods' way out (egress.ts): what
// arrives on a link of the group and leaves by another is the pods' egress, refused or allowed by the policy and
// masqueraded behind the host's address. Links of workspaces whose egress is off carry a second group (`offGroup`):
// what arrives on them goes nowhere but back to the host's own connections. The groups are the state: a link goes
// with its pod, so nothing of a removed pod stays in the kernel, and a kill -9 of svc leaves nothing stale.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REFUSED_RANGES, type Egress, type PodEgress } from './egress.ts';
import { runCommand } from './processes.ts';

export interface PodFirewall {
  /** The nftables table (family inet), e.g. `svc_0123456789ab`. */
  table: string;
  /** The interface group of this installation's host links (a positive 31-bit number, never 0, the default). */
  group: number;
  /** The group of the host links of workspaces whose egress is off. */
  offGroup: number;
}

/** No egress policy beyond refusing the pod ranges: what a firewall written without the driver's settings holds. */
export const NO_EGRESS: PodEgress = { podRanges: [], dns: [], allow: [], deny: [], published: [] };

/**
 * The firewall of the installation whose networks carry `owner`'s mark (network.ts `networkOwner`, a hash of the
 * data directory): two installations on one machine get two tables and two groups, so one's rules never touch the
 * other's links.
 */
export function podFirewallOf(owner: string): PodFirewall {
  const digest = createHash('sha256').update(owner).digest('hex');
  const id = owner.replace(/^svc:/, '').replace(/[^0-9a-z]/gi, '').slice(0, 12) || digest.slice(0, 12);
  // above 255: small group numbers are the ones an operator would pick by hand
  const group = 256 + parseInt(digest.slice(0, 7), 16);
  return { table: `svc_${id}`, group, offGroup: group + 2 ** 30 };
}

/**
 * The table as one `nft -f` script that replaces it atomically: an empty declaration (so the delete never fails),
 * its deletion and the whole table again, applied as one transaction. No packet sees a half-made table, and a run
 * after a kill -9 finds the same rules. Refused traffic is answered with an ICMP "port unreachable" (a pod's
 * connection fails at once with "connection refused", as if nothing listened, instead of hanging until its
 * timeout; a TCP reset would do for IPv4, but the kernel sends none to an IPv6 link-local address). IPv6 neighbour
 * discovery on the link is let through for the same reason.
 */
export function podFirewallRules(firewall: PodFirewall, egress: PodEgress = NO_EGRESS): string {
  const { table, group, offGroup } = firewall;
  const groups = `{ ${group}, ${offGroup} }`;
  const set = (name: string, type: string, elements: string[]) => [
    `  set ${name} {`,
    `    type ${type}; flags interval; auto-merge;`,
    ...(elements.length > 0 ? [`    elements = { ${elements.join(', ')} }`] : []),
    '  }',
  ];
  const published = egress.published.map((p) => `${p.address} . ${p.port}`);
  const reject = 'reject with icmpx type admin-prohibited';
  return [
    `table inet ${table} {}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    ...set('pods', 'ipv4_addr', egress.podRanges),
    ...set('dns', 'ipv4_addr', egress.dns),
    ...set('allowed', 'ipv4_addr', egress.allow),
    ...set('denied', 'ipv4_addr', egress.deny),
    ...set('refused', 'ipv4_addr', REFUSED_RANGES),
    '  set published {',
    '    type ipv4_addr . inet_service;',
    ...(published.length > 0 ? [`    elements = { ${published.join(', ')} }`] : []),
    '  }',
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifgroup ${groups} ct state established,related accept`,
    // neighbour discovery (IPv6's ARP, which nftables' inet family sees): without it a pod's IPv6 connection to the
    // host's link-local address waits for a neighbour that never answers instead of being refused
    `    iifgroup ${groups} icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept`,
    // the host's own addresses: its links to the pods never, a resolver, the published address, what the operator allows
    `    iifgroup ${group} ip daddr @pods reject with icmpx type port-unreachable`,
    `    iifgroup ${group} ip daddr @dns meta l4proto { tcp, udp } th dport 53 accept`,
    `    iifgroup ${group} ip daddr . tcp dport @published accept`,
    `    iifgroup ${group} ip daddr @denied reject with icmpx type port-unreachable`,
    `    iifgroup ${group} ip daddr @allowed accept`,
    `    iifgroup ${groups} reject with icmpx type port-unreachable`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifgroup ${groups} jump egress`,
    // nothing from elsewhere opens a connection to a pod through the host (the host's own connections are output)
    `    oifgroup ${groups} ct state established,related accept`,
    `    oifgroup ${groups} drop`,
    '  }',
    '  chain egress {',
    // before the replies: turning egress off cuts connections under way too
    `    iifgroup ${offGroup} ${reject}`,
    '    ct state established,related accept',
    `    meta nfproto ipv6 ${reject}`,
    '    ip daddr @dns meta l4proto { tcp, udp } th dport 53 accept',
    `    ip daddr @denied ${reject}`,
    `    ip daddr @pods ${reject}`,
    '    ip daddr . tcp dport @published accept',
    '    ip daddr @allowed accept',
    `    ip daddr @refused ${reject}`,
    '    accept',
    '  }',
    '  chain postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    ip saddr @pods oifgroup != ${groups} masquerade`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Writes the installation's table (idempotent; atomic). */
export async function installPodFirewall(firewall: PodFirewall, egress: PodEgress = NO_EGRESS): Promise<void> {
  if (egress.podRanges.length > 0) await enableForwarding();
  const result = await runCommand('nft', ['-f', '-'], { input: podFirewallRules(firewall, egress), timeoutMs: 30_000 }).catch((error: Error) => ({ code: -1, stdout: '', stderr: error.message }));
  if (result.code !== 0) throw new Error(`the pods' firewall (nftables table inet ${firewall.table}) could not be written: ${result.stderr.trim() || `exit code ${result.code}`}`);
}

/**
 * IPv4 forwarding on (host-wide: the kernel has no other switch for it); the table's forward chain decides what
 * pods may send and drops what others would send to the pods through the host.
 */
async function enableForwarding(): Promise<void> {
  const file = '/proc/sys/net/ipv4/ip_forward';
  if ((await readFile(file, 'utf8')).trim() !== '1') await writeFile(file, '1');
}

/** Whether the table is in the kernel now. */
export async function podFirewallInstalled(firewall: PodFirewall): Promise<boolean> {
  return (await runCommand('nft', ['list', 'table', 'inet', firewall.table]).catch(() => ({ code: -1 }))).code === 0;
}

/** Deletes the table when no link of the installation is left on the host (pods outlive the server); idempotent. */
export async function removePodFirewallIfUnused(firewall: PodFirewall): Promise<boolean> {
  if ((await linksInGroup(firewall.group, firewall.offGroup)).length > 0) return false;
  if (!(await podFirewallInstalled(firewall))) return true;
  const result = await runCommand('nft', ['delete', 'table', 'inet', firewall.table]);
  if (result.code !== 0 && (await podFirewallInstalled(firewall))) throw new Error(`nft delete table inet ${firewall.table}: ${result.stderr.trim()}`);
  return true;
}

/**
 * Puts a host link into the group, through sysfs (no process started: a wake that finds its networks kept starts
 * none); a link already in it is left alone. Networks kept from before the firewall existed get it this way too.
 */
export async function setLinkGroup(name: string, group: number): Promise<void> {
  const file = path.join('/sys/class/net', name, 'netdev_group');
  if ((await readFile(file, 'utf8')).trim() !== String(group)) await writeFile(file, String(group));
}

/** The link's group now (undefined without the link). */
export async function linkGroup(name: string): Promise<number | undefined> {
  const text = await readFile(path.join('/sys/class/net', name, 'netdev_group'), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : Number(text.trim());
}

/** The host's links in the group. */
export async function linksInGroup(...wanted: number[]): Promise<string[]> {
  const names = await readdir('/sys/class/net').catch(() => [] as string[]);
  const groups = await Promise.all(names.map((name) => readFile(path.join('/sys/class/net', name, 'netdev_group'), 'utf8').then((text) => text.trim(), () => '')));
  return names.filter((_, i) => wanted.some((group) => groups[i] === String(group)));
}

/**
 * The installation's table, written once per process (and again after a failure): the first network this process
 * makes or takes over waits for it, so no pod of it runs without.
 */
export class PodFirewallKeeper {
  private written?: Promise<void>;
  /** The policy the table holds (the driver's settings, `configure`). */
  egress: PodEgress = NO_EGRESS;
  constructor(readonly firewall: PodFirewall) {}

  /** Takes the driver's egress settings; a table this process wrote with others is written again at the next use. */
  configure(egress: PodEgress): void {
    if (JSON.stringify(egress) === JSON.stringify(this.egress)) return;
    this.egress = egress;
    this.written = undefined;
  }

  ready(): Promise<void> {
    return this.written ?? this.rewrite();
  }

  /** Writes the table now, whatever this process wrote before (a server's start). */
  rewrite(): Promise<void> {
    const written = installPodFirewall(this.firewall, this.egress);
    this.written = written;
    written.catch(() => {
      if (this.written === written) this.written = undefined;
    });
    return written;
  }

  /** Deletes the table when the installation has no link left; the next network writes it again. */
  async removeIfUnused(): Promise<boolean> {
    await this.written?.catch(() => undefined);
    const removed = await removePodFirewallIfUnused(this.firewall);
    if (removed) this.written = undefined;
    return removed;
  }
}

const keepers = new Map<string, PodFirewallKeeper>();

/** The keeper of `owner`'s firewall in this process. */
export function podFirewallKeeper(owner: string): PodFirewallKeeper {
  let keeper = keepers.get(owner);
  if (!keeper) keepers.set(owner, (keeper = new PodFirewallKeeper(podFirewallOf(owner))));
  return keeper;
}

/**
 * At a server's start: when host links of the installation are there (pods that outlived the server, networks a sleep
 * kept), the table is written again and each link put in the group (links of a release before the firewall have
 * none). Without any, nothing is written until the first pod network is made.
 */
export async function guardInstallationLinks(owner: string): Promise<string[]> {
  const names = await readdir('/sys/class/net').catch(() => [] as string[]);
  const marks = await Promise.all(names.map((name) => readFile(path.join('/sys/class/net', name, 'ifalias'), 'utf8').then((text) => text.trim(), () => '')));
  const links = names.filter((_, i) => marks[i] === owner || marks[i].startsWith(`${owner} `));
  if (links.length === 0) return links;
  const keeper = podFirewallKeeper(owner);
  await keeper.rewrite();
  const { group, offGroup } = keeper.firewall;
  for (const link of links) {
    // a link whose workspace has egress off keeps its group
    if ((await linkGroup(link)) !== offGroup) await setLinkGroup(link, group).catch(() => undefined); // gone meanwhile
  }
  return links;
}

/**
 * Makes a host link of the installation's pods subject to its firewall: the table is there, the link in the group
 * of the workspace's egress (the switch's link and the editor pod's carry every packet its pods send out).
 */
export async function guardHostLink(owner: string, link: string, egress: Egress = 'on'): Promise<void> {
  const keeper = podFirewallKeeper(owner);
  await keeper.ready();
  await setLinkGroup(link, egress === 'off' ? keeper.firewall.offGroup : keeper.firewall.group);
}
