// Which address a request is for, from its Host header: the editor (`ide-w<id>.<domain>`), the dev URL
// (`w<id>.<domain>`), a public port (`w<id>-<port>.<domain>`), a managed service's host (`ms-<number>.<domain>`),
// another name under the workspace domain (nothing there), or anything else: the console and API.

export type HostTarget =
  | { kind: 'ide'; workspaceId: number }
  | { kind: 'dev'; workspaceId: number }
  | { kind: 'public-port'; workspaceId: number; port: number }
  | { kind: 'managed'; number: number }
  | { kind: 'unknown-workspace-host' }
  | { kind: 'console' };

/** The host name of a Host header, lower case, without port or trailing dot; undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const host = header.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host);
  return match ? match[1].replace(/\.$/, '') : undefined;
}

/**
 * Classifies a host. `consoleHost` is the console's own host name: when it lies under the workspace domain (e.g.
 * both `localhost`), it stays the console.
 */
export function hostTarget(header: string | undefined, domain: string, consoleHost: string): HostTarget {
  const host = hostName(header);
  if (!host || host === consoleHost.toLowerCase()) return { kind: 'console' };
  const suffix = `.${domain.toLowerCase()}`;
  if (!host.endsWith(suffix)) return { kind: 'console' };
  const label = host.slice(0, -suffix.length);
  const managed = /^ms-([1-9][0-9]{0,9})$/.exec(label);
  if (managed) return Number(managed[1]) <= 2 ** 31 - 1 ? { kind: 'managed', number: Number(managed[1]) } : { kind: 'unknown-workspace-host' };
  const match = /^(ide-)?w([1-9][0-9]{0,15})(?:-([1-9][0-9]{0,4}))?$/.exec(label);
  if (!match) return { kind: 'unknown-workspace-host' };
  const workspaceId = Number(match[2]);
  if (!Number.isSafeInteger(workspaceId)) return { kind: 'unknown-workspace-host' };
  if (match[1] && match[3]) return { kind: 'unknown-workspace-host' };
  if (match[1]) return { kind: 'ide', workspaceId };
  if (match[3]) {
    const port = Number(match[3]);
    return port <= 65535 ? { kind: 'public-port', workspaceId, port } : { kind: 'unknown-workspace-host' };
  }
  return { kind: 'dev', workspaceId };
}
