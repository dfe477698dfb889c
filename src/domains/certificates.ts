// Certificates of verified custom domains over ACME (spec 3.6, issue 20), with acme-client: HTTP-01, whose answers
// the router gives on the domain (`/.well-known/acme-challenge/<token>`, kept in the store so that any server
// answers). Issuances are durable: the domain's row says Being issued (or Failed with a retry time, or Issued and
// expiring within 30 days) and a server claims it with a lease. The key is sealed with the installation's key.
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import acme from 'acme-client';
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { withTransaction } from '../store/database.ts';
import { claimDueIssuances, putAcmeChallenge, removeAcmeChallenge, saveCertificate, type IssuanceRow } from '../store/domain-certificates.ts';
import { announceDomain } from './checker.ts';

/** Certificates are renewed this long before they expire. */
export const RENEW_BEFORE_MS = 30 * 86_400_000;
const LEASE_MS = 5 * 60_000;
const RETRY_MS = 3_600_000;

// acme-client retries a request that got no answer (or a 429, a 5xx) 5 times, waiting 5 s more each time (75 s in
// all), then fails with a TypeError of its own that names no cause. An issuance here is tried again an hour later
// anyway, and a shutdown waits for the one under way: two quick retries, and the error says what happened.
Object.assign((acme.axios.defaults as unknown as { acmeSettings: object }).acmeSettings, { retryMaxAttempts: 2, retryDefaultDelay: 1 });

/** Why an issuance failed, in words: acme-client's own TypeError after a request without an answer says nothing. */
export function issuanceFailure(error: Error, directoryUrl: string): string {
  if (error instanceof TypeError && /reading 'config'/.test(error.message)) return `no answer from the ACME server at ${directoryUrl}`;
  return error.message;
}

export const certificateKeyPlace = (domainId: string) => `certificate:${domainId}`;

export interface AcmeSettings {
  directoryUrl: string;
  email?: string;
  /** PEM of CAs to trust for the ACME server's own HTTPS (a test CA such as pebble's). */
  caFile?: string;
  /** Where the ACME account key is kept (made once). */
  accountKeyFile: string;
}

export interface IssuerDeps {
  pool: pg.Pool;
  clock: Clock;
  secrets: SecretBox;
  acme: AcmeSettings;
  log: (message: string) => void;
}

export class CertificateIssuer {
  private client?: Promise<acme.Client>;

  constructor(private readonly deps: IssuerDeps) {}

  private async acmeClient(): Promise<acme.Client> {
    this.client ??= (async () => {
      const { caFile, accountKeyFile, directoryUrl } = this.deps.acme;
      if (caFile) acme.axios.defaults.httpsAgent = new https.Agent({ ca: await readFile(caFile) });
      let accountKey = await readFile(accountKeyFile, 'utf8').catch(() => '');
      if (!accountKey) {
        accountKey = (await acme.crypto.createPrivateKey()).toString();
        await writeFile(accountKeyFile, accountKey, { mode: 0o600 });
      }
      return new acme.Client({ directoryUrl, accountKey, backoffAttempts: 5, backoffMin: 200, backoffMax: 2000 });
    })().catch((error) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  /** Issues (or renews) every certificate that is due; resolves when done. */
  async issueDue(): Promise<void> {
    const now = this.deps.clock.now();
    const due = await withTransaction(this.deps.pool, (db) =>
      claimDueIssuances(db, now, new Date(now.getTime() + RENEW_BEFORE_MS), new Date(now.getTime() + LEASE_MS), 10),
    );
    await Promise.all(due.map((row) => this.issue(row)));
  }

  private async issue(row: IssuanceRow): Promise<void> {
    const { pool, clock, secrets } = this.deps;
    try {
      const client = await this.acmeClient();
      const [key, csr] = await acme.crypto.createCsr({ commonName: row.name, altNames: [row.name] });
      const pem = await client.auto({
        csr,
        email: this.deps.acme.email,
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        // The CA checks the challenge itself; a check from here would need the domain to resolve to this server.
        skipChallengeVerification: true,
        challengeCreateFn: (_authz, challenge, keyAuthorization) => putAcmeChallenge(pool, challenge.token, keyAuthorization, clock.now()),
        challengeRemoveFn: (_authz, challenge) => removeAcmeChallenge(pool, challenge.token),
      });
      const notAfter = new Date(new X509Certificate(pem).validTo);
      const sealed = secrets.seal(key.toString(), certificateKeyPlace(row.id));
      await this.save(row, { state: 'issued', detail: `Issued; renewed from ${new Date(notAfter.getTime() - RENEW_BEFORE_MS).toISOString()}.`, served: { pem, sealed, notAfter }, retryAt: null });
      this.deps.log(`domains: certificate for ${row.name} issued, valid until ${notAfter.toISOString()}`);
    } catch (error) {
      const reason = issuanceFailure(error as Error, this.deps.acme.directoryUrl);
      this.deps.log(`domains: certificate for ${row.name} failed: ${reason}`);
      // A failed renewal keeps serving the certificate there is; it is tried again later either way.
      await this.save(row, { state: row.certificate === 'issued' ? 'issued' : 'failed', detail: `The CA refused: ${reason}`, retryAt: new Date(clock.nowMs() + RETRY_MS) });
    }
  }

  private async save(row: IssuanceRow, outcome: Omit<Parameters<typeof saveCertificate>[2], 'at'>): Promise<void> {
    const at = this.deps.clock.now();
    await withTransaction(this.deps.pool, async (db) => {
      const saved = await saveCertificate(db, row.id, { ...outcome, at });
      if (saved) await announceDomain(db, saved, at);
    });
  }
}
