// Re-checks of custom domains as durable jobs: the schedule is in the domain's row (next_check_at, with backoff
// while the record is missing), so it survives restarts; a server claims due rows with a lease, checks the TXT
// record, saves the outcome (verification.ts) and announces it (domain.updated). Domains never verified within the
// keep period are removed. Runs on a timer and at once when asked (a new domain, "check now"). A first proof of a
// name several teams hold unverified moves the name to the team whose record it is (claimOutcome).
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { publishEvent } from '../events/publish.ts';
import { withTransaction } from '../store/database.ts';
import { claimDueDomainChecks, deleteCustomDomain, deleteUnverifiedDomainsBefore, findCustomDomainsByName, saveDomainCheck, type CertificateState, type CustomDomainRow } from '../store/custom-domains.ts';
import type { TxtLookup } from './txt-lookup.ts';
import { afterCheck, claimOutcome, type CheckOutcome, type VerificationSettings } from './verification.ts';

const LEASE_MS = 60_000;
const BATCH = 20;

export interface DomainCheckerDeps {
  pool: pg.Pool;
  clock: Clock;
  lookup: TxtLookup;
  settings: VerificationSettings;
  /** The certificate state a domain gets once verified (certificates.ts decides what the installation does). */
  certificateWhenVerified: (row: CustomDomainRow) => CertificateState;
  /** Runs after every pass of checks (certificate issuance and renewal). */
  afterChecks?: () => Promise<void>;
  log: (message: string) => void;
  /** How often to look for due checks (default 5 s). */
  pollMs?: number;
}

export async function announceDomain(db: pg.PoolClient | pg.Pool, row: Pick<CustomDomainRow, 'id' | 'team_id'>, at: Date): Promise<void> {
  await publishEvent(db, { type: 'domain.updated', at: at.toISOString(), team_id: row.team_id, domain_id: row.id });
}

export class DomainChecker {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private closed = false;

  constructor(private readonly deps: DomainCheckerDeps) {}

  start(): void {
    this.timer = setInterval(() => this.checkSoon(), this.deps.pollMs ?? 5000);
    this.timer.unref();
    this.checkSoon();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Looks for due checks now (a pass under way is followed by another). */
  checkSoon(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.checkDue()
      .catch((error: Error) => this.deps.log(`domains: checking failed: ${error.message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.checkSoon();
        }
      });
  }

  /** Checks every domain whose check is due and removes those unverified past the keep period; resolves when done. */
  async checkDue(): Promise<void> {
    const { pool, clock, settings } = this.deps;
    const removed = await withTransaction(pool, async (db) => {
      const rows = await deleteUnverifiedDomainsBefore(db, new Date(clock.nowMs() - settings.unverifiedKeepMs));
      for (const row of rows) await announceDomain(db, row, clock.now());
      return rows;
    });
    for (const row of removed) this.deps.log(`domains: ${row.name} was never verified and is removed`);
    for (;;) {
      const now = clock.now();
      const claimed = await withTransaction(pool, async (db) => {
        const rows = await claimDueDomainChecks(db, now, new Date(now.getTime() + LEASE_MS), BATCH);
        for (const row of rows) await announceDomain(db, row, now);
        return rows;
      });
      if (claimed.length > 0) await Promise.all(claimed.map((row) => this.check(row)));
      if (claimed.length < BATCH) break;
    }
    await this.deps.afterChecks?.();
  }

  private async check(row: CustomDomainRow): Promise<void> {
    const lookup = await this.deps.lookup.check(row.name, row.token);
    const now = this.deps.clock.now();
    let outcome: CheckOutcome = afterCheck(row, lookup, now, this.deps.settings, this.deps.certificateWhenVerified(row));
    const removed = await withTransaction(this.deps.pool, async (db) => {
      const gone: CustomDomainRow[] = [];
      if (outcome.verification === 'verified' && row.verified_at === null) {
        // the name's first proof: the other teams' claims go, or this one fails against a name verified by another team
        const claim = claimOutcome(row, await findCustomDomainsByName(db, row.name, true));
        if (claim.kind === 'refused') outcome = { ...outcome, verification: 'failed', detail: claim.detail, verifiedAt: null, certificate: row.certificate };
        else {
          for (const id of claim.removes) {
            const other = await deleteCustomDomain(db, id);
            if (other) gone.push(other);
          }
        }
      }
      for (const other of gone) await announceDomain(db, other, now);
      const next = await saveDomainCheck(db, row.id, { ...outcome, checkedAt: now });
      if (next) await announceDomain(db, next, now);
      return gone;
    });
    for (const other of removed) this.deps.log(`domains: ${other.name} moved from team ${other.team_id} to team ${row.team_id}, whose TXT record proves it`);
  }
}
