// Custom domains (spec 2.7, 3.6): names, verification and its re-checks. The API adds and changes domains; the
// checker verifies them; the router (src/router/custom-domains.ts) serves the verified ones.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { withTransaction } from '../store/database.ts';
import type { CertificateState, CustomDomainRow } from '../store/custom-domains.ts';
import { listCertificateStates, saveCertificate } from '../store/domain-certificates.ts';
import { CertificateIssuer, type AcmeSettings } from './certificates.ts';
import { announceDomain, DomainChecker } from './checker.ts';
import { TxtLookup } from './txt-lookup.ts';
import type { VerificationSettings } from './verification.ts';

export { normalizeDomainName, isInstallationName, txtRecordName } from './names.ts';
export type { VerificationSettings } from './verification.ts';

export interface DomainsOptions {
  pool: pg.Pool;
  clock: Clock;
  /** `--dns-resolver host:port`; the system's resolvers when absent. */
  dnsResolver?: string;
  settings: VerificationSettings;
  secrets: SecretBox;
  /** The ACME CA that issues certificates (`--acme-directory`); none: certificates are not managed. */
  acme?: AcmeSettings;
  /** Whether the data plane terminates TLS for custom domains (--tls-listen). */
  tls: boolean;
  /** The installation's wildcard certificate (as it is now): the names it covers are Covered (no ACME order). */
  wildcard?: () => { covers(name: string): boolean };
  log: (message: string) => void;
}

export class Domains {
  readonly checker: DomainChecker;
  readonly issuer?: CertificateIssuer;

  constructor(readonly options: DomainsOptions) {
    const { acme, tls } = options;
    this.issuer = acme && tls ? new CertificateIssuer({ pool: options.pool, clock: options.clock, secrets: options.secrets, acme, log: options.log }) : undefined;
    this.checker = new DomainChecker({
      afterChecks: this.issuer && (() => this.issuer!.issueDue()),
      pool: options.pool,
      clock: options.clock,
      lookup: new TxtLookup(options.dnsResolver),
      settings: options.settings,
      certificateWhenVerified: (row) => this.certificateWhenVerified(row),
      log: options.log,
    });
  }

  get settings(): VerificationSettings {
    return this.options.settings;
  }

  /**
   * What a verified domain's certificate becomes: Covered when the installation's wildcard certificate names it;
   * Being issued when the installation has an ACME CA and a data plane that terminates TLS; otherwise it creates no
   * edge objects for the domain, which is "Not managed" (3.6).
   */
  certificateWhenVerified(row: Pick<CustomDomainRow, 'name'>): CertificateState {
    if (this.options.tls && this.options.wildcard?.().covers(row.name)) return 'covered';
    return this.issuer ? 'being-issued' : 'not-managed';
  }

  /** Brings verified domains in step with what this start can do (a wildcard certificate or ACME given or gone), then checks. */
  async start(): Promise<void> {
    await this.reconcileCertificates();
    this.checker.start();
  }

  /** After the wildcard certificate changed (its names may have): verified domains follow it. */
  async wildcardChanged(): Promise<void> {
    await this.reconcileCertificates();
    this.checker.checkSoon();
  }

  private async reconcileCertificates(): Promise<void> {
    const { pool, clock } = this.options;
    for (const row of await listCertificateStates(pool)) {
      const next = certificateAtStart(row.certificate, this.certificateWhenVerified(row));
      if (next === undefined) continue;
      const at = clock.now();
      await withTransaction(pool, async (db) => {
        const saved = await saveCertificate(db, row.id, { state: next, detail: null, retryAt: null, at });
        if (saved) await announceDomain(db, saved, at);
      });
      this.options.log(`domains: the certificate of ${row.name} is now ${next} (was ${row.certificate})`);
    }
  }

  close(): Promise<void> {
    return this.checker.close();
  }
}

/**
 * The certificate state a verified domain takes at a start whose means differ from those it was given under, or
 * undefined to keep it: a name the wildcard covers now becomes Covered (an issued or failed one too: no more ACME);
 * one no longer covered, or waiting on means that are gone or came, takes what this start gives. Uploaded
 * certificates stay; an issued one stays while it is not covered (it still serves and is renewed when possible).
 */
export function certificateAtStart(current: CertificateState, wanted: CertificateState): CertificateState | undefined {
  if (current === wanted || current === 'uploaded' || current === 'waits-for-verification') return undefined;
  if (wanted === 'covered') return 'covered';
  if (current === 'issued') return undefined;
  return wanted;
}
