// Verification of custom domains (spec 3.6): what one check of the TXT record `_svc.<domain>` does to a domain's
// status and when the next check is due. Pure: the checker (checker.ts) claims due domains, resolves, and saves this.
import type { CertificateState, VerificationStatus } from '../store/custom-domains.ts';

export interface VerificationSettings {
  /** How long a verified domain's record may be missing before it lapses (default 7 days). */
  lapseMs: number;
  /** How long a never verified domain keeps its name (default 7 days). */
  unverifiedKeepMs: number;
  /** A verified domain is checked again this often (default 1 hour). */
  recheckMs: number;
  /** The first retry after a check that did not find the record; doubles up to recheckMs (default 1 minute). */
  firstRetryMs: number;
}

export const defaultVerificationSettings: VerificationSettings = { lapseMs: 7 * 86_400_000, unverifiedKeepMs: 7 * 86_400_000, recheckMs: 3_600_000, firstRetryMs: 60_000 };

/** What a lookup of the TXT record found: the token among its values, other values or none, or a resolver failure. */
export type Lookup = { kind: 'found' } | { kind: 'missing'; detail: string } | { kind: 'error'; detail: string };

export interface DomainCheckState {
  verification: VerificationStatus;
  verified_at: Date | null;
  missing_since: Date | null;
  check_failures: number;
  certificate: CertificateState;
}

export interface CheckOutcome {
  verification: VerificationStatus;
  detail: string | null;
  verifiedAt: Date | null;
  missingSince: Date | null;
  failures: number;
  nextCheckAt: Date;
  certificate: CertificateState;
}

/** The delay before the check after `failures` failed ones: firstRetryMs doubling, at most recheckMs. */
export function retryDelayMs(failures: number, settings: VerificationSettings): number {
  return Math.min(settings.recheckMs, settings.firstRetryMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
}

const wasVerified = (state: DomainCheckState) => state.verified_at !== null && (state.verification === 'verified' || state.verification === 'lapsed');

/**
 * The status after a check. Found: Verified. Missing on a verified domain: still Verified until the record has been
 * missing `lapseMs` in a row, then Lapsed (serves nothing until found again). Missing on a never verified domain:
 * Failed. A resolver failure says nothing about the record: a verified or lapsed domain keeps its status and its
 * count towards lapsing; others are Failed with the resolver's reason.
 */
export function afterCheck(state: DomainCheckState, lookup: Lookup, now: Date, settings: VerificationSettings, certificateWhenVerified: CertificateState): CheckOutcome {
  const at = now.getTime();
  if (lookup.kind === 'found') {
    const certificate = state.certificate === 'waits-for-verification' ? certificateWhenVerified : state.certificate;
    return { verification: 'verified', detail: null, verifiedAt: state.verification === 'verified' && state.verified_at ? state.verified_at : now, missingSince: null, failures: 0, nextCheckAt: new Date(at + settings.recheckMs), certificate };
  }
  const failures = state.check_failures + 1;
  const nextCheckAt = new Date(at + retryDelayMs(failures, settings));
  if (!wasVerified(state)) {
    return { verification: 'failed', detail: lookup.detail, verifiedAt: null, missingSince: null, failures, nextCheckAt, certificate: state.certificate };
  }
  if (lookup.kind === 'error') {
    return { verification: state.verification, detail: lookup.detail, verifiedAt: state.verified_at, missingSince: state.missing_since, failures, nextCheckAt, certificate: state.certificate };
  }
  const missingSince = state.missing_since ?? now;
  const lapsesAt = missingSince.getTime() + settings.lapseMs;
  if (state.verification === 'lapsed' || at >= lapsesAt) {
    return { verification: 'lapsed', detail: `${lookup.detail} The record has been missing since ${missingSince.toISOString()}: the domain serves nothing until a check finds it again.`, verifiedAt: state.verified_at, missingSince, failures, nextCheckAt, certificate: state.certificate };
  }
  return {
    verification: 'verified',
    detail: `${lookup.detail} The domain lapses at ${new Date(lapsesAt).toISOString()} unless the record is found again.`,
    verifiedAt: state.verified_at,
    missingSince,
    failures,
    // The check that would lapse the domain is not put off beyond the lapse.
    nextCheckAt: new Date(Math.min(nextCheckAt.getTime(), Math.max(lapsesAt, at + 1000))),
    certificate: state.certificate,
  };
}

/** What a domain's first proof of its TXT record does to the other domains of its name (claims, issue 33). */
export type ClaimOutcome = { kind: 'takes'; removes: string[] } | { kind: 'refused'; detail: string };

/**
 * A name never verified may be held by several teams, each with its own token. The first whose record is found
 * takes it: the others' entries (all unverified) are removed. A name another team has verified (or that lapsed:
 * verified once) is never taken this way; the check fails with the reason.
 */
export function claimOutcome(domain: { id: string; team_id: number }, sameName: Array<{ id: string; team_id: number; verified_at: Date | null }>): ClaimOutcome {
  const others = sameName.filter((d) => d.id !== domain.id);
  if (others.some((d) => d.verified_at !== null)) {
    return { kind: 'refused', detail: 'The TXT record holds this domain\'s token, but another team has verified the name: it stays theirs while they hold it.' };
  }
  return { kind: 'takes', removes: others.map((d) => d.id) };
}
