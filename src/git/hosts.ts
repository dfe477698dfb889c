// Which git host a repository URL names, and how it is reached: the host a user's credential is stored for.
// Pure; understands https://, http://, ssh://, git@host:path (scp-like) and local paths.

/** `git`: the anonymous git:// protocol, which takes no credential. */
export type GitTransport = 'https' | 'ssh' | 'git' | 'local';

export interface GitRemote {
  transport: GitTransport;
  /** Lowercase host, with `:port` when the URL gives one that is not the scheme's default; '' for local. */
  host: string;
  /** The user named in the URL (`git@github.com:…` → `git`), else undefined. */
  user?: string;
}

const SCP_LIKE = /^(?:([^@/:\s]+)@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):(?!\/\/)(.+)$/;

/** The remote of a clone URL. */
export function gitRemoteOf(url: string): GitRemote {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    const scp = SCP_LIKE.exec(url);
    if (scp && !url.startsWith('/') && !url.startsWith('.')) return { transport: 'ssh', host: scp[2].toLowerCase(), user: scp[1] };
    return { transport: 'local', host: '' };
  }
  if (scheme === 'file') return { transport: 'local', host: '' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { transport: 'local', host: '' };
  }
  const transport: GitTransport = scheme === 'ssh' || scheme === 'git+ssh' ? 'ssh' : scheme === 'git' ? 'git' : 'https';
  return { transport, host: parsed.host.toLowerCase(), user: parsed.username ? decodeURIComponent(parsed.username) : undefined };
}

/** A host as credentials are stored for it: lowercase `host` or `host:port`; undefined when it is not one. */
export function normalizeGitHost(text: string): string | undefined {
  const host = text.trim().toLowerCase();
  if (!/^([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$/.test(host) && !/^\[[0-9a-f:]+\](:[0-9]{1,5})?$/.test(host)) return undefined;
  const port = /:([0-9]+)$/.exec(host)?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  return host;
}

/** Tokens written as the user of an https URL (`https://ghp_…@github.com/…`): GitHub's, GitLab's, or anything that long. */
const TOKEN_AS_USER = /^(gh[pousr]_|github_pat_|glpat-)|^.{32,}$/;

/**
 * Whether the URL carries a password or token (`https://user:token@host/…`, `https://ghp_…@github.com/…`), which
 * svc never stores. A plain user name (Bitbucket's `https://me@bitbucket.org/…`) is not one.
 */
export function hasSecretInUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') return true;
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && TOKEN_AS_USER.test(decodeURIComponent(parsed.username));
  } catch {
    return false;
  }
}
