// The /etc/hosts of every pod of a workspace: localhost, then each service name with its replicas' addresses. One
// file per workspace, bound read-only into each pod at its start, so it is rewritten in place (the same inode) for
// the pods to see a change: a replica that starts or goes away.
import { open } from 'node:fs/promises';

export interface HostsEntry {
  name: string;
  address: string;
}

export function renderHostsFile(workspaceId: number, entries: HostsEntry[]): string {
  const unique = [...new Map(entries.map((entry) => [`${entry.address} ${entry.name}`, entry])).values()];
  const lines = unique
    .sort((a, b) => a.name.localeCompare(b.name) || compareAddresses(a.address, b.address))
    .map((entry) => `${entry.address}\t${entry.name}`);
  return [
    `# The services of workspace ${workspaceId}, written by svc`,
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    ...lines,
    '',
  ].join('\n');
}

function compareAddresses(a: string, b: string): number {
  const value = (address: string) => address.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0);
  return value(a) - value(b);
}

/** Writes `content` into the file in place (created when missing), so every bind of it sees the new text. */
export async function writeInPlace(file: string, content: string): Promise<void> {
  // r+ never truncates a file pods read (and, unlike append mode, writes at the position given)
  const handle = await open(file, 'r+').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return open(file, 'wx', 0o644);
    throw error;
  });
  try {
    const bytes = Buffer.from(content);
    await handle.write(bytes, 0, bytes.length, 0);
    await handle.truncate(bytes.length);
  } finally {
    await handle.close();
  }
}
