// The mail outbox (migration 017): durable mail jobs, claimed under a lease like operations.
import type { Queryable } from './database.ts';

export const MAIL_CHANNEL = 'svc_mail';

export type MailState = 'queued' | 'sending' | 'retrying' | 'sent' | 'failed' | 'bounced' | 'cancelled';

export interface MailRow {
  id: string;
  kind: 'invitation' | 'sign_in_link';
  invitation_id: string | null;
  recipient: string;
  subject: string;
  body_text: string | null;
  state: MailState;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  sent_at: Date | null;
  /** The invitation's organization, for invites.updated. */
  org_id: string | null;
}

const columns = `m.id, m.kind, m.invitation_id, m.recipient, m.subject, m.body_text, m.state, m.attempts, m.last_error,
  m.next_attempt_at, m.lease_owner, m.lease_until, m.created_at, m.sent_at,
  (SELECT i.org_id FROM invitations i WHERE i.id = m.invitation_id) AS org_id`;

export interface NewMail {
  id: string;
  kind: MailRow['kind'];
  invitationId: string | null;
  recipient: string;
  subject: string;
  bodyText: string;
  at: Date;
}

/** Queues the mail and wakes the servers' mail workers (at commit). */
export async function insertMail(db: Queryable, mail: NewMail): Promise<void> {
  await db.query(
    `INSERT INTO mail_outbox (id, kind, invitation_id, recipient, subject, body_text, state, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $7, $7)`,
    [mail.id, mail.kind, mail.invitationId, mail.recipient, mail.subject, mail.bodyText, mail.at],
  );
  await db.query('SELECT pg_notify($1, $2)', [MAIL_CHANNEL, mail.id]);
}

/**
 * Claims due mail: queued or retrying ones whose time came, and ones being sent whose lease ran out or that an
 * earlier life of this same server (`serverId`) held (it restarted, so it is not sending them any more).
 */
export async function claimMail(
  db: Queryable,
  claim: { owner: string; serverId: string; now: Date; leaseUntil: Date; limit: number },
): Promise<MailRow[]> {
  return (
    await db.query<MailRow>(
      `UPDATE mail_outbox m SET state = 'sending', attempts = attempts + 1, lease_owner = $1, lease_until = $3, updated_at = $2
       WHERE id IN (
         SELECT id FROM mail_outbox
         WHERE (state IN ('queued', 'retrying') AND next_attempt_at <= $2)
            OR (state = 'sending' AND (lease_until < $2 OR (starts_with(lease_owner, $5 || '/') AND lease_owner <> $1)))
         ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING ${columns}`,
      [claim.owner, claim.now, claim.leaseUntil, claim.limit, claim.serverId],
    )
  ).rows;
}

/** Records the outcome of an attempt this owner holds; the text goes once nothing more will be sent. */
export async function finishAttempt(
  db: Queryable,
  attempt: { id: string; owner: string; state: MailState; error: string | null; nextAttemptAt: Date | null; at: Date },
): Promise<MailRow | undefined> {
  const final = attempt.state !== 'retrying';
  return (
    await db.query<MailRow>(
      `UPDATE mail_outbox m SET state = $3, last_error = $4, next_attempt_at = COALESCE($5, next_attempt_at), updated_at = $6,
         sent_at = CASE WHEN $3 = 'sent' THEN $6 ELSE sent_at END, lease_owner = NULL, lease_until = NULL,
         body_text = CASE WHEN $7 THEN NULL ELSE body_text END
       WHERE id = $1 AND lease_owner = $2 AND state = 'sending' RETURNING ${columns}`,
      [attempt.id, attempt.owner, attempt.state, attempt.error, attempt.nextAttemptAt, attempt.at, final],
    )
  ).rows[0];
}

/** Hands a claimed mail back untried (the server is closing). */
export async function releaseMail(db: Queryable, id: string, owner: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE mail_outbox SET state = CASE WHEN attempts > 1 THEN 'retrying' ELSE 'queued' END, attempts = attempts - 1,
       lease_owner = NULL, lease_until = NULL, updated_at = $3 WHERE id = $1 AND lease_owner = $2 AND state = 'sending'`,
    [id, owner, at],
  );
}

/** Cancels an invitation's mail not yet handed to a server (revoked or renewed); a mail being sent goes on. */
export async function cancelInvitationMail(db: Queryable, invitationId: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE mail_outbox SET state = 'cancelled', body_text = NULL, updated_at = $2 WHERE invitation_id = $1 AND state IN ('queued', 'retrying')`,
    [invitationId, at],
  );
}

export async function findMail(db: Queryable, id: string): Promise<MailRow | undefined> {
  return (await db.query<MailRow>(`SELECT ${columns} FROM mail_outbox m WHERE m.id = $1`, [id])).rows[0];
}
