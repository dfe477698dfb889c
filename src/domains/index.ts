// Custom domains (spec 2.7, 3.6): names, verification and its re-checks. The API adds and changes domains; the
// checker verifies them; the router (src/router/custom-domains.ts) serves the verified ones.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { CertificateState } from '../store/custom-domains.ts';
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
  log: (message: string) => void;
}

export class Domains {
  readonly checker: DomainChecker;

  constructor(readonly options: DomainsOptions) {
    this.checker = new DomainChecker({
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
   * What a verified domain's certificate becomes. This release issues none (no ACME client, no TLS in the router):
   * the installation creates no edge objects for the domain, which is "Not managed" (3.6).
   */
  certificateWhenVerified(): CertificateState {
    return 'not-managed';
  }

  start(): void {
    this.checker.start();
  }

  close(): Promise<void> {
    return this.checker.close();
  }
}
