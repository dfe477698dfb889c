// The address blocks of an installation's pods and service networks (server as root). Each installation on a machine
// takes blocks of its own at start: the configured ones (`--pod-address-range`, `--service-address-range`) or, when
// none is configured, the first free /16 of 10.0.0.0/8 from 10.213 on. A block is free when no route of the machine
// overlaps it and no other installation claims it. Claims are files in /run/svc/address-blocks (one per block,
// made with O_EXCL, naming the claiming installation and its data directory); a claim whose data directory no longer
// holds that installation is stale and taken over. The blocks in use are kept in <data dir>/address-blocks.json, so
// a restarted server keeps the addresses its sleeping pods' networks have.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_POD_ADDRESS_RANGE, DEFAULT_SERVICE_ADDRESS_RANGE, parsePrivateRange, podNetworkOf, serviceNetworkOf, type PodNetwork, type ServiceNetwork } from './addresses.ts';
import { installationId, installationTag } from './installation.ts';

export const CLAIMS_DIR = '/run/svc/address-blocks';
const RECORD_FILE = 'address-blocks.json';

export interface AddressBlocks {
  pods: string;
  services: string;
}

/** Ranges no installation takes: the registries this machine reaches, and the test "internet". */
const RESERVED = ['203.0.113.0/24', '198.51.100.0/24'];

interface Cidr { base: number; size: number }

export function parseCidr(text: string): Cidr | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text);
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = match[5] === undefined ? 32 : Number(match[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((value, octet) => value * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  return { base: address - (address % size), size };
}

export function cidrsOverlap(a: string, b: string): boolean {
  const first = parseCidr(a);
  const second = parseCidr(b);
  return !!first && !!second && first.base < second.base + second.size && second.base < first.base + first.size;
}

/**
 * The destinations of the machine's IPv4 routes (all tables), from `ip -4 -o route show table all`. `unreachable`
 * routes of a whole candidate block are left out: svc puts one over each block it uses (network.ts), and one left
 * by an installation that is gone (its claim stale or missing) must not keep the block from the next.
 */
export function routeDestinations(listing: string, candidates: string[] = []): string[] {
  const types = new Set(['unicast', 'local', 'broadcast', 'multicast', 'unreachable', 'blackhole', 'prohibit', 'throw', 'nat', 'anycast']);
  return listing.split('\n').map((line) => line.trim().split(/\s+/)).filter((words) => words[0])
    .filter((words) => !(words[0] === 'unreachable' && candidates.includes(words[1])))
    .map((words) => (types.has(words[0]) ? words[1] : words[0])).filter((dest) => dest && dest !== 'default' && parseCidr(dest));
}

/** Candidate /16 blocks in the order they are tried: 10.213 to 10.255, then 10.128 to 10.212. */
export function candidateBlocks(): string[] {
  const seconds = [...Array.from({ length: 43 }, (_, i) => 213 + i), ...Array.from({ length: 85 }, (_, i) => 128 + i)];
  return seconds.map((second) => `10.${second}.0.0/16`);
}

/**
 * Picks the first candidate that overlaps no route, no reserved range and nothing in `taken` (blocks claimed by
 * others, or already picked), and that `claim` accepts (answers false when another claimed it meanwhile).
 */
export function pickBlock(candidates: string[], routes: string[], taken: string[], claim: (block: string) => boolean): string | undefined {
  for (const block of candidates) {
    if ([...RESERVED, ...routes, ...taken].some((other) => cidrsOverlap(block, other))) continue;
    if (claim(block)) return block;
  }
  return undefined;
}

const claimFile = (block: string) => path.join(CLAIMS_DIR, block.replace('/', '_'));

interface Claim { installation: string; dataDir: string }

function readClaim(block: string): Claim | undefined {
  try {
    return JSON.parse(readFileSync(claimFile(block), 'utf8')) as Claim;
  } catch {
    return undefined;
  }
}

/** Whether the claim's data directory still holds the claiming installation (else the claim is stale). */
function isLive(claim: Claim): boolean {
  try {
    return readFileSync(path.join(claim.dataDir, 'installation-id'), 'utf8').trim() === claim.installation;
  } catch {
    return false;
  }
}

/** Claims `block` for the installation: true when it is now its own (it was, it was free, or its claim was stale). */
function claimBlock(block: string, mine: Claim): boolean {
  mkdirSync(CLAIMS_DIR, { recursive: true, mode: 0o755 });
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = readClaim(block);
    if (found?.installation === mine.installation) return true;
    if (found && isLive(found)) return false;
    if (found) rmSync(claimFile(block), { force: true }); // stale: its installation is gone
    try {
      writeFileSync(claimFile(block), JSON.stringify(mine), { flag: 'wx', mode: 0o644 });
      return true;
    } catch {
      // another installation claimed it at the same moment: read again
    }
  }
  return false;
}

/** Blocks other live installations claim. */
function claimedByOthers(mine: Claim): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(CLAIMS_DIR);
  } catch {
    return [];
  }
  return names.map((name) => name.replace('_', '/')).filter((block) => {
    const claim = readClaim(block);
    return claim && claim.installation !== mine.installation && isLive(claim);
  });
}

/** Gives up the installation's claims (its data directory is being removed). */
export function releaseAddressBlocks(dataDir: string): void {
  const recorded = readRecord(dataDir);
  const id = installationId(dataDir);
  for (const block of recorded ? [recorded.pods, recorded.services] : []) if (readClaim(block)?.installation === id) rmSync(claimFile(block), { force: true });
}

function readRecord(dataDir: string): AddressBlocks | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, RECORD_FILE), 'utf8')) as AddressBlocks;
  } catch {
    return undefined;
  }
}

/** The installation's blocks as recorded at its start; the defaults before any start as root. */
export function recordedAddressBlocks(dataDir: string): AddressBlocks {
  return readRecord(dataDir) ?? { pods: DEFAULT_POD_ADDRESS_RANGE, services: DEFAULT_SERVICE_ADDRESS_RANGE };
}

export class NoFreeAddressBlock extends Error {}

/**
 * The installation's blocks at a start as root: a configured range is used when no other installation claims it;
 * an unconfigured one is the block recorded before while it is still the installation's, else the first free
 * candidate. Refuses, naming the range and the option, when no block is free.
 */
export function chooseAddressBlocks(dataDir: string, configured: { pods?: string; services?: string }): AddressBlocks {
  mkdirSync(dataDir, { recursive: true });
  const mine: Claim = { installation: installationId(dataDir), dataDir: path.resolve(dataDir) };
  const recorded = readRecord(dataDir);
  const routes = routeDestinations(execFileSync('ip', ['-4', '-o', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }), candidateBlocks());
  const others = claimedByOthers(mine);
  const chosen: string[] = [];
  const choose = (kind: 'pods' | 'services', option: string): string => {
    const given = configured[kind];
    if (given) {
      parsePrivateRange(given); // says what is wrong with it
      const other = others.find((block) => cidrsOverlap(block, given));
      if (other || !claimBlock(given, mine)) {
        throw new NoFreeAddressBlock(`the ${kind === 'pods' ? 'pod' : 'service'} address range ${given} (${option}) is used by another svc installation on this machine (${other ?? given}); set ${option} to a free private range`);
      }
      return given;
    }
    const before = recorded?.[kind];
    // the recorded block holds this installation's own routes (pods that outlived the server), so routes do not count
    if (before && !others.some((block) => cidrsOverlap(block, before)) && !chosen.some((block) => cidrsOverlap(block, before)) && claimBlock(before, mine)) return before;
    const block = pickBlock(candidateBlocks(), routes, [...others, ...chosen], (candidate) => claimBlock(candidate, mine));
    if (!block) {
      throw new NoFreeAddressBlock(`no free /16 is left for the ${kind === 'pods' ? 'pods' : 'service networks'} in 10.128.0.0/9 on this machine (every one overlaps a route or another svc installation's block); set ${option} to a free private range`);
    }
    return block;
  };
  const pods = choose('pods', '--pod-address-range');
  chosen.push(pods);
  const services = choose('services', '--service-address-range');
  const blocks = { pods, services };
  for (const block of recorded ? [recorded.pods, recorded.services] : []) {
    if (block !== pods && block !== services && readClaim(block)?.installation === mine.installation) rmSync(claimFile(block), { force: true });
  }
  const file = path.join(dataDir, RECORD_FILE);
  writeFileSync(`${file}.partial`, JSON.stringify(blocks), { mode: 0o644 });
  renameSync(`${file}.partial`, file);
  return blocks;
}

/** The pod network of workspace `id` of the installation in `dataDir`, as its server names and addresses it. */
export const installationPodNetwork = (dataDir: string, id: number): PodNetwork => podNetworkOf(installationTag(dataDir), id, recordedAddressBlocks(dataDir).pods);

/** The service network workspace `id` of the installation in `dataDir` gets at its first attempt. */
export const installationServiceNetwork = (dataDir: string, id: number): ServiceNetwork => serviceNetworkOf(installationTag(dataDir), id, recordedAddressBlocks(dataDir).services);
