// Why a clone that needed a credential failed, in words that name the host and say what to do: no credential of
// the creating user for it, or theirs refused. Pure: from git's stderr and the credential that was (not) given.
import type { CloneCredential } from './credentials.ts';

/** git's and ssh's ways of saying that the server wants (other) credentials. */
const AUTHENTICATION_REFUSED = [
  /could not read (Username|Password)/i,
  /Authentication failed/i,
  /Permission denied \(/i,
  /HTTP Basic: Access denied/i,
  /The requested URL returned error: 40[13]/i,
  /Invalid username or password/i,
  /Repository not found/i,
  /remote: Unauthorized/i,
];

export function isAuthenticationFailure(stderr: string): boolean {
  return AUTHENTICATION_REFUSED.some((pattern) => pattern.test(stderr));
}

/**
 * The reason a failed clone shows: `reason` (git's own line) unless the failure is one of authentication, which
 * then says whether the creator had no credential for the host or had theirs refused.
 */
export function cloneAuthenticationReason(reason: string, stderr: string, credential: CloneCredential | undefined): string {
  if (!credential || !isAuthenticationFailure(stderr)) return reason;
  const host = credential.host;
  switch (credential.kind) {
    case 'none':
      return credential.transport === 'ssh'
        ? `${host} refused the clone over ssh and you have no SSH key in svc: make one with \`svc ssh-key show\` and add its public key at ${host} (git: ${reason})`
        : `${host} asked for a credential and you have none stored for ${host}: add one with \`svc git-credentials add ${host}\` (git: ${reason})`;
    case 'https':
      return `${host} refused your git credential for ${host} (user ${credential.username}): check or replace it with \`svc git-credentials add ${host}\` (git: ${reason})`;
    case 'ssh':
      return `${host} refused your SSH key: add its public key (\`svc ssh-key show\`) at ${host} (git: ${reason})`;
  }
}
