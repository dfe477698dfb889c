// The SSH names of workspaces (issue 38): `<workspace>.<team>.svc`, one DNS-like label each, so that `ssh`, scp and
// the desktop editors can name a workspace and `svc ssh --stdio %h` can find it again. Pure.

export const SSH_HOST_SUFFIX = '.svc';

/** A name as one label: lowercase letters, digits and `-` (what ssh_config patterns and editors take without quoting). */
export function sshLabel(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
}

export function sshHostName(workspace: string, team: string): string {
  return `${sshLabel(workspace)}.${sshLabel(team)}${SSH_HOST_SUFFIX}`;
}

/** `<workspace>.<team>.svc` as its two labels, or undefined when the name is not one of svc's. */
export function parseSshHostName(host: string): { workspace: string; team: string } | undefined {
  const match = /^([a-z0-9-]+)\.([a-z0-9-]+)\.svc$/i.exec(host.trim());
  return match ? { workspace: match[1].toLowerCase(), team: match[2].toLowerCase() } : undefined;
}
