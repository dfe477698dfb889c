// The block `svc config-ssh` keeps in ~/.ssh/config (issue 38), between markers, as Coder's config-ssh does: one
// `Host` per workspace the person can reach and a wildcard for the ones made later, all through `svc ssh --stdio %h`.
// Pure: the command reads and writes the files.

export const BLOCK_START = '# --- START SVC ---';
export const BLOCK_END = '# --- END SVC ---';

export interface SshHostEntry {
  host: string;
  user: string;
  hostKey: string;
}

/** ssh_config's quoting: a word with spaces or quotes in double quotes. */
const quoted = (word: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/(["\\])/g, '\\$1')}"`);

export function sshConfigBlock(hosts: SshHostEntry[], proxyCommand: string[], knownHostsFile: string): string {
  const proxy = `ProxyCommand ${[...proxyCommand.map(quoted), 'ssh', '--stdio', '%h'].join(' ')}`;
  const common = [proxy, `UserKnownHostsFile ${quoted(knownHostsFile)}`, 'StrictHostKeyChecking yes', 'ConnectTimeout 0', 'LogLevel ERROR'];
  const lines = [BLOCK_START, '# Written by `svc config-ssh`; run it again to update, `svc config-ssh --remove` to remove.'];
  for (const entry of hosts) lines.push(`Host ${entry.host}`, `  User ${quoted(entry.user)}`, ...common.map((line) => `  ${line}`));
  // workspaces made after this block was written: svc resolves the name, ssh asks to trust the key (accept-new)
  lines.push('Host *.svc', ...common.map((line) => `  ${line.replace('StrictHostKeyChecking yes', 'StrictHostKeyChecking accept-new')}`), BLOCK_END);
  return `${lines.join('\n')}\n`;
}

/** `config` without svc's block (and without the blank line written before it). */
export function withoutBlock(config: string): string {
  const start = config.indexOf(BLOCK_START);
  if (start < 0) return config;
  const end = config.indexOf(BLOCK_END, start);
  const after = end < 0 ? '' : config.slice(end + BLOCK_END.length).replace(/^\r?\n/, '');
  // the blank line withBlock put between the block at the top and the person's own lines
  return start === 0 ? after.replace(/^\r?\n/, '') : config.slice(0, start) + after;
}

/**
 * `config` with the block in place of the one before, else at the top: ssh takes the first value of each setting,
 * so svc's hosts come before a `Host *` of the person's own.
 */
export function withBlock(config: string, block: string): string {
  const start = config.indexOf(BLOCK_START);
  if (start >= 0) {
    const end = config.indexOf(BLOCK_END, start);
    const after = end < 0 ? '' : config.slice(end + BLOCK_END.length).replace(/^\r?\n/, '');
    return config.slice(0, start) + block + after;
  }
  return config.length ? `${block}\n${config}` : block;
}

/** svc's known_hosts: each workspace's name and key. */
export function knownHostsText(hosts: SshHostEntry[]): string {
  return hosts.map((entry) => `${entry.host} ${entry.hostKey}\n`).join('');
}
