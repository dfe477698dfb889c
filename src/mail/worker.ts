// Sends the mail outbox: claims due mail from PostgreSQL under a lease, hands each to the SMTP server, and records
// what happened (sent, retrying with backoff, failed, bounced). A server killed mid-send leaves the mail `sending`;
// the next life of the same server (or any server once the lease ran out) claims it again, so none is lost. The
// only way a mail goes out twice is a server dying between the SMTP server's "250 OK" and the one UPDATE after it;
// the Message-ID is the outbox row's, so receiving systems see the same message.
import { randomUUID } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { NotificationHub } from '../events/hub.ts';
import { publishEvent } from '../events/publish.ts';
import { withTransaction } from '../store/database.ts';
import { MAIL_CHANNEL, claimMail, finishAttempt, releaseMail, type MailRow } from '../store/mail-outbox.ts';
import { attemptOutcome, type AttemptError } from './delivery.ts';
import { transportOptions, type SmtpSettings } from './smtp-url.ts';

/** A claim holds this long; SMTP timeouts (transportOptions) end every attempt well before. */
const LEASE_MS = 120_000;

export interface MailWorkerDeps {
  pool: pg.Pool;
  clock: Clock;
  hub: NotificationHub;
  /** Stable across restarts (the data directory's server id): mail this server was sending is resumed at once. */
  serverId: string;
  smtp: SmtpSettings;
  /** The From address (`svc <svc@example.com>`). */
  from: string;
  firstRetryMs: number;
  log: (message: string) => void;
  /** How often to look for mail whose time came (besides being woken by NOTIFY). */
  pollMs?: number;
}

export class MailWorker {
  readonly owner: string;
  private readonly transport: Transporter;
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private polling?: Promise<void>;
  private again = false;
  private closed = false;

  constructor(private readonly deps: MailWorkerDeps) {
    this.owner = `${deps.serverId}/${randomUUID()}`;
    this.transport = nodemailer.createTransport(transportOptions(deps.smtp));
  }

  start(): void {
    this.unsubscribe = this.deps.hub.subscribe(MAIL_CHANNEL, { notify: () => this.poll(), reset: () => this.poll() });
    this.timer = setInterval(() => this.poll(), this.deps.pollMs ?? 2000);
    this.timer.unref();
    this.poll();
  }

  poll(): void {
    if (this.closed) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.sendDue()
      .catch((error: Error) => this.deps.log(`mail: ${error.message}`))
      .finally(() => {
        this.polling = undefined;
        if (this.again) {
          this.again = false;
          this.poll();
        }
      });
  }

  /** Sends what is due, one mail after another, until nothing is. */
  private async sendDue(): Promise<void> {
    while (!this.closed) {
      const now = this.deps.clock.nowMs();
      const claimed = await withTransaction(this.deps.pool, async (db) => {
        const rows = await claimMail(db, { owner: this.owner, serverId: this.deps.serverId, now: new Date(now), leaseUntil: new Date(now + LEASE_MS), limit: 1 });
        for (const row of rows) await announce(db, row, this.deps.clock.now());
        return rows;
      });
      if (claimed.length === 0) return;
      for (const mail of claimed) await this.send(mail);
    }
  }

  private async send(mail: MailRow): Promise<void> {
    if (this.closed) return releaseMail(this.deps.pool, mail.id, this.owner, this.deps.clock.now());
    let error: AttemptError | undefined;
    try {
      await this.transport.sendMail({
        from: this.deps.from,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.body_text ?? '',
        messageId: `<${mail.id}@svc>`,
      });
    } catch (caught) {
      const e = caught as AttemptError;
      error = { code: e.code, responseCode: e.responseCode, command: e.command, message: e.message ?? String(caught) };
    }
    const now = this.deps.clock.now();
    const outcome = attemptOutcome({ attempts: mail.attempts, error, now, firstRetryMs: this.deps.firstRetryMs });
    if (outcome.state !== 'sent') this.deps.log(`mail ${mail.id} to ${mail.recipient}: ${outcome.state}: ${outcome.error}`);
    await withTransaction(this.deps.pool, async (db) => {
      const row = await finishAttempt(db, {
        id: mail.id,
        owner: this.owner,
        state: outcome.state,
        error: outcome.state === 'sent' ? null : outcome.error,
        nextAttemptAt: outcome.state === 'retrying' ? outcome.nextAttemptAt : null,
        at: now,
      });
      if (row) await announce(db, row, now);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.polling;
    this.transport.close();
  }
}

/** An invitation's mail moved: invites.updated to its organization. */
async function announce(db: pg.PoolClient, row: MailRow, at: Date): Promise<void> {
  if (row.kind === 'invitation' && row.org_id) await publishEvent(db, { type: 'invites.updated', at: at.toISOString(), org_id: row.org_id });
}
