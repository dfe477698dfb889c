// Brings the data plane's certificates in step with the store: the issued and uploaded certificates of verified
// domains, their keys opened with the installation's key. Runs after any change of a domain (coalesced).
import type pg from 'pg';
import type { SecretBox } from '../core/secret-box.ts';
import { listServedCertificates } from '../store/domain-certificates.ts';
import { certificateKeyPlace } from './certificates.ts';

export interface CertificateTarget {
  certificatesChanged(certificates: Array<{ name: string; certificate: string; key: string }>): Promise<void>;
}

export class ServedCertificates {
  private running?: Promise<void>;
  private again = false;

  constructor(private readonly deps: { pool: pg.Pool; secrets: SecretBox; target: CertificateTarget; log: (m: string) => void }) {}

  /** Loads the certificates again soon (a load under way is followed by one more). */
  schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.load()
      .catch((error: Error) => this.deps.log(`domains: loading certificates into the data plane failed: ${error.message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  private async load(): Promise<void> {
    const rows = await listServedCertificates(this.deps.pool);
    const certificates = rows.flatMap((row) => {
      try {
        return [{ name: row.name, certificate: row.certificate_pem, key: this.deps.secrets.open(row.sealed, certificateKeyPlace(row.id)) }];
      } catch (error) {
        this.deps.log(`domains: the key of ${row.name}'s certificate does not open: ${(error as Error).message}`);
        return [];
      }
    });
    await this.deps.target.certificatesChanged(certificates);
  }
}
