// Custom domains (spec 2.7, 3.6): names, verification and its re-checks. The API adds and changes domains; the
// checker verifies them; the router (src/router/custom-domains.ts) serves the verified ones.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { SecretBox } from '../core/secret-box.ts';
import type { CertificateState } from '../store/custom-domains.ts';
import { CertificateIssuer, type AcmeSettings } from './certificates.ts';
import { DomainChecker } from './checker.ts';
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
  /** Whether the data plane terminates TLS for custom domains (nginx with --tls-listen). */
  tls: boolean;
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
      certificateWhenVerified: () => this.certificateWhenVerified(),
      log: options.log,
    });
  }

  get settings(): VerificationSettings {
    return this.options.settings;
  }

  /**
   * What a verified domain's certificate becomes: Being issued when the installation has an ACME CA and a data plane
   * that terminates TLS; otherwise it creates no edge objects for the domain, which is "Not managed" (3.6).
   */
  certificateWhenVerified(): CertificateState {
    return this.issuer ? 'being-issued' : 'not-managed';
  }

  start(): void {
    this.checker.start();
  }

  close(): Promise<void> {
    return this.checker.close();
  }
}
