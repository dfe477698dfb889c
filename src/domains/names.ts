// What a custom domain's name may be: a fully qualified host name of at least two labels (letters, digits and
// dashes; IDNs in their xn-- form), not an address, not under the installation's workspace domain and not its
// console host (those are the installation's own). Pure.

export const MAX_DOMAIN_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The name as stored (lower case, without a trailing dot), or why it is not a domain. */
export function normalizeDomainName(text: string): { ok: true; name: string } | { ok: false; reason: string } {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > MAX_DOMAIN_LENGTH) return { ok: false, reason: `must be 1 to ${MAX_DOMAIN_LENGTH} characters` };
  const labels = name.split('.');
  if (labels.length < 2) return { ok: false, reason: 'must have at least two labels, such as example.com' };
  if (!labels.every((label) => LABEL.test(label))) return { ok: false, reason: 'labels must be 1 to 63 letters, digits or dashes, not starting or ending with a dash' };
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return { ok: false, reason: 'must be a host name, not an address' };
  return { ok: true, name };
}

/** Whether the name belongs to the installation itself (the workspace domain and its hosts, the console host). */
export function isInstallationName(name: string, workspaceDomain: string, consoleHost: string): boolean {
  const domain = workspaceDomain.toLowerCase();
  return name === domain || name.endsWith(`.${domain}`) || name === consoleHost.toLowerCase();
}

/** The DNS name of the TXT record that proves a team controls the domain. */
export const txtRecordName = (name: string) => `_svc.${name}`;
