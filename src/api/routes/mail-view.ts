// The state of a mail of the outbox as the API shows it (invitations, sign-in links sent by mail).
import { Type } from 'typebox';
import { mailStateText } from '../../mail/delivery.ts';
import type { MailRow } from '../../store/mail-outbox.ts';
import { DateTime, StringEnum, iso, isoOrUndefined } from '../schemas.ts';

export const MailSchema = Type.Object({
  state: StringEnum(['not_sent', 'queued', 'sending', 'retrying', 'sent', 'failed', 'bounced', 'cancelled']),
  detail: Type.String({ description: 'the state as people read it, with the reason of a failure' }),
  attempts: Type.Integer({ minimum: 0 }),
  next_attempt_at: Type.Optional(DateTime),
  sent_at: Type.Optional(DateTime),
});

/** A mail of the outbox as the API shows it (a sign-in link sent by mail). */
export function outboxMailView(row: MailRow) {
  return {
    state: row.state,
    detail: mailStateText({ state: row.state, lastError: row.last_error, nextAttemptAt: row.next_attempt_at, attempts: row.attempts }),
    attempts: row.attempts,
    next_attempt_at: row.state === 'retrying' ? iso(row.next_attempt_at) : undefined,
    sent_at: isoOrUndefined(row.sent_at),
  };
}
