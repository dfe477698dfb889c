// What pods may reach on the host (server as root): nothing they open themselves. Every host end of a pod's links
// (the editor pod's `svh<id>`, the switch's `svn<id>`) carries the installation's interface group, and one nftables
// table of the installation refuses, in the kernel, whatever arrives on a link of that group and does not belong to
// a connection the host opened (the agent's, the router's, a probe's, a managed service's). Without it a pod
// reached everything the host binds to 0.0.0.0 or [::] at the host end of its links (issue 33, item 5).
// The table is `inet` (IPv4 and IPv6 alike) and holds an input chain only; the forward and NAT chains of pods'
// outbound internet would be added beside it, matching the same group.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from './processes.ts';

export interface PodFirewall {
  /** The nftables table (family inet), e.g. `svc_0123456789ab`. */
  table: string;
  /** The interface group of this installation's host links (a positive 31-bit number, never 0, the default). */
  group: number;
}

/**
 * The firewall of the installation whose networks carry `owner`'s mark (network.ts `networkOwner`, a hash of the
 * data directory): two installations on one machine get two tables and two groups, so one's rules never touch the
 * other's links.
 */
export function podFirewallOf(owner: string): PodFirewall {
  const digest = createHash('sha256').update(owner).digest('hex');
  const id = owner.replace(/^svc:/, '').replace(/[^0-9a-z]/gi, '').slice(0, 12) || digest.slice(0, 12);
  // above 255: small group numbers are the ones an operator would pick by hand
  return { table: `svc_${id}`, group: 256 + parseInt(digest.slice(0, 7), 16) };
}

/**
 * The table as one `nft -f` script that replaces it atomically: an empty declaration (so the delete never fails),
 * its deletion and the whole table again, applied as one transaction. No packet sees a half-made table, and a run
 * after a kill -9 finds the same rules. Refused traffic is answered with an ICMP "port unreachable" (a pod's
 * connection fails at once with "connection refused", as if nothing listened, instead of hanging until its
 * timeout; a TCP reset would do for IPv4, but the kernel sends none to an IPv6 link-local address). IPv6 neighbour
 * discovery on the link is let through for the same reason.
 */
export function podFirewallRules(firewall: PodFirewall): string {
  const { table, group } = firewall;
  return [
    `table inet ${table} {}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    '  chain input {',
    '    type filter hook input priority filter; policy accept;',
    `    iifgroup ${group} ct state established,related accept`,
    // neighbour discovery (IPv6's ARP, which nftables' inet family sees): without it a pod's IPv6 connection to the
    // host's link-local address waits for a neighbour that never answers instead of being refused
    `    iifgroup ${group} icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept`,
    `    iifgroup ${group} reject with icmpx type port-unreachable`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Writes the installation's table (idempotent; atomic). */
export async function installPodFirewall(firewall: PodFirewall): Promise<void> {
  const result = await runCommand('nft', ['-f', '-'], { input: podFirewallRules(firewall), timeoutMs: 30_000 }).catch((error: Error) => ({ code: -1, stdout: '', stderr: error.message }));
  if (result.code !== 0) throw new Error(`the pods' firewall (nftables table inet ${firewall.table}) could not be written: ${result.stderr.trim() || `exit code ${result.code}`}`);
}

/** Whether the table is in the kernel now. */
export async function podFirewallInstalled(firewall: PodFirewall): Promise<boolean> {
  return (await runCommand('nft', ['list', 'table', 'inet', firewall.table]).catch(() => ({ code: -1 }))).code === 0;
}

/** Deletes the table when no link of the installation is left on the host (pods outlive the server); idempotent. */
export async function removePodFirewallIfUnused(firewall: PodFirewall): Promise<boolean> {
  if ((await linksInGroup(firewall.group)).length > 0) return false;
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

/** The host's links in the group. */
export async function linksInGroup(group: number): Promise<string[]> {
  const names = await readdir('/sys/class/net').catch(() => [] as string[]);
  const groups = await Promise.all(names.map((name) => readFile(path.join('/sys/class/net', name, 'netdev_group'), 'utf8').then((text) => text.trim(), () => '')));
  return names.filter((_, i) => groups[i] === String(group));
}

/**
 * The installation's table, written once per process (and again after a failure): the first network this process
 * makes or takes over waits for it, so no pod of it runs without.
 */
export class PodFirewallKeeper {
  private written?: Promise<void>;
  constructor(readonly firewall: PodFirewall) {}

  ready(): Promise<void> {
    return this.written ?? this.rewrite();
  }

  /** Writes the table now, whatever this process wrote before (a server's start). */
  rewrite(): Promise<void> {
    const written = installPodFirewall(this.firewall);
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
  for (const link of links) await setLinkGroup(link, keeper.firewall.group).catch(() => undefined); // gone meanwhile
  return links;
}

/** Makes a host link of the installation's pods subject to its firewall: the table is there, the link in its group. */
export async function guardHostLink(owner: string, link: string): Promise<void> {
  const keeper = podFirewallKeeper(owner);
  await keeper.ready();
  await setLinkGroup(link, keeper.firewall.group);
}
