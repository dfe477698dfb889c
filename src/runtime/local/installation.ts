// The installation's id, kept in its data directory (`installation-id`): every host-wide name of its pods derives
// from it as well as from the workspace id (network namespaces, host links, cgroups, the nftables table, address
// block claims), so two installations on one machine (two servers, `npm test` beside `npm run up`) never meet.
// A data directory made before the file existed gets the id it had implicitly (a hash of its path), so the names of
// networks and cgroups its pods still hold stay the same.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const INSTALLATION_ID_FILE = 'installation-id';

const known = new Map<string, string>();

/** 12 hex digits: read from the data directory, written there on first use (when the directory exists). */
export function installationId(dataDir: string): string {
  const dir = path.resolve(dataDir);
  const cached = known.get(dir);
  if (cached) return cached;
  const file = path.join(dir, INSTALLATION_ID_FILE);
  let id = readId(file);
  if (!id) {
    id = createHash('sha256').update(dir).digest('hex').slice(0, 12);
    if (existsSync(dir)) {
      try {
        writeFileSync(file, `${id}\n`, { flag: 'wx', mode: 0o644 });
      } catch {
        id = readId(file) ?? id; // another process of the installation wrote it first
      }
    }
  }
  known.set(dir, id);
  return id;
}

function readId(file: string): string | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return /^[0-9a-f]{12}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The installation's part of names that must stay short (Linux interface names have at most 15 characters). */
export function installationTag(dataDir: string): string {
  return installationId(dataDir).slice(0, 5);
}
