// What an attempt to hand a mail to the SMTP server means for it. Pure: (attempts, error, now) -> next state.
// A 5xx answer to the recipient is a bounce (the server will never take it); another 5xx fails the mail; anything
// else (4xx, no connection, a timeout) is an outage: the mail waits and is tried again, later each time.

export interface AttemptError {
  /** nodemailer's error code: EENVELOPE, ECONNECTION, ETIMEDOUT, EAUTH, ... */
  code?: string;
  /** The SMTP reply code, when the server answered. */
  responseCode?: number;
  /** The SMTP command that failed: RCPT TO, MAIL FROM, DATA, AUTH PLAIN, CONN ... */
  command?: string;
  message: string;
}

export type AttemptOutcome =
  | { state: 'sent' }
  | { state: 'retrying'; error: string; nextAttemptAt: Date }
  | { state: 'failed' | 'bounced'; error: string };

/** Attempts before an outage is given up on: with the default first wait of 30 s, about a day of trying. */
export const MAX_MAIL_ATTEMPTS = 12;
/** The longest wait between two attempts. */
export const MAX_RETRY_MS = 4 * 3600_000;

/** Wait before attempt `attempts + 1`: the first wait, doubled after each attempt, at most MAX_RETRY_MS. */
export function retryDelayMs(attempts: number, firstRetryMs: number): number {
  return Math.min(MAX_RETRY_MS, firstRetryMs * 2 ** Math.max(0, attempts - 1));
}

export function attemptOutcome(input: { attempts: number; error?: AttemptError; now: Date; firstRetryMs: number }): AttemptOutcome {
  const { error } = input;
  if (!error) return { state: 'sent' };
  const reason = describe(error);
  const code = error.responseCode;
  if (code !== undefined && code >= 500 && code < 600) {
    return { state: error.command === 'RCPT TO' ? 'bounced' : 'failed', error: reason };
  }
  if (error.code === 'EAUTH' && code === undefined) return { state: 'failed', error: reason };
  if (input.attempts >= MAX_MAIL_ATTEMPTS) return { state: 'failed', error: `gave up after ${input.attempts} attempts; last: ${reason}` };
  return { state: 'retrying', error: reason, nextAttemptAt: new Date(input.now.getTime() + retryDelayMs(input.attempts, input.firstRetryMs)) };
}

function describe(error: AttemptError): string {
  return error.message.replace(/\s+/g, ' ').trim().slice(0, 500);
}

/** The mail state as people read it (invitations show it). */
export function mailStateText(mail: { state: string; lastError: string | null; nextAttemptAt: Date | null; attempts: number }): string {
  switch (mail.state) {
    case 'queued':
      return 'queued';
    case 'sending':
      return mail.attempts > 1 ? `sending (attempt ${mail.attempts})` : 'sending';
    case 'retrying':
      return `not sent yet: ${mail.lastError ?? 'the mail server did not take it'}; next attempt at ${mail.nextAttemptAt?.toISOString()}`;
    case 'sent':
      return 'sent';
    case 'failed':
      return `failed: ${mail.lastError}`;
    case 'bounced':
      return `bounced: ${mail.lastError}`;
    case 'cancelled':
      return 'not sent: the invitation was revoked or renewed first';
    default:
      return mail.state;
  }
}

export const NO_MAIL_SERVER = 'not sent: no mail server configured';
