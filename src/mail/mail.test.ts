import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptOutcome, mailStateText, MAX_MAIL_ATTEMPTS, MAX_RETRY_MS, retryDelayMs } from './delivery.ts';
import { parseSmtpUrl, redact, SmtpUrlError } from './smtp-url.ts';

test('smtp:// speaks STARTTLS when offered (port 587); smtps:// TLS from the start (465); credentials are decoded', () => {
  assert.deepEqual(parseSmtpUrl('smtp://mailer:p%40ss%20word@mail.example.com'), {
    host: 'mail.example.com', port: 587, secure: false, starttls: 'opportunistic', verifyCertificate: true, auth: { user: 'mailer', pass: 'p@ss word' },
  });
  const tls = parseSmtpUrl('smtps://relay.example.com');
  assert.equal(tls.port, 465);
  assert.equal(tls.secure, true);
  assert.equal(tls.auth, undefined);
  const strict = parseSmtpUrl('smtp://127.0.0.1:2525?starttls=required&tls_verify=false');
  assert.deepEqual([strict.port, strict.starttls, strict.verifyCertificate], [2525, 'required', false]);
});

test('a malformed SMTP URL is refused with a reason, without echoing the password', () => {
  for (const bad of ['http://mail.example.com', 'smtp://host?starttls=maybe', 'smtp://host?tls=1', 'smtps://host?starttls=never', 'smtp://u:secret@host?tls_verify=no']) {
    assert.throws(() => parseSmtpUrl(bad), (error: Error) => error instanceof SmtpUrlError && !error.message.includes('secret'), bad);
  }
  assert.equal(redact('smtp://u:secret@host:25'), 'smtp://u:***@host:25');
});

test('4xx and lost connections are retried later each time; 5xx to the recipient bounces; other 5xx fails', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  assert.deepEqual(attemptOutcome({ attempts: 1, now, firstRetryMs: 30_000 }), { state: 'sent' });
  const outage = attemptOutcome({ attempts: 1, now, firstRetryMs: 30_000, error: { code: 'EENVELOPE', responseCode: 451, command: 'RCPT TO', message: 'try again later' } });
  assert.deepEqual(outage, { state: 'retrying', error: 'try again later', nextAttemptAt: new Date('2030-01-01T00:00:30Z') });
  const down = attemptOutcome({ attempts: 3, now, firstRetryMs: 30_000, error: { code: 'ECONNECTION', message: 'connect ECONNREFUSED' } });
  assert.equal(down.state === 'retrying' && down.nextAttemptAt.getTime() - now.getTime(), 120_000);
  assert.equal(attemptOutcome({ attempts: 1, now, firstRetryMs: 1, error: { responseCode: 550, command: 'RCPT TO', message: 'no such user' } }).state, 'bounced');
  assert.equal(attemptOutcome({ attempts: 1, now, firstRetryMs: 1, error: { responseCode: 554, command: 'DATA', message: 'spam' } }).state, 'failed');
  assert.equal(attemptOutcome({ attempts: 1, now, firstRetryMs: 1, error: { code: 'EAUTH', message: 'Invalid login' } }).state, 'failed');
  const last = attemptOutcome({ attempts: MAX_MAIL_ATTEMPTS, now, firstRetryMs: 1, error: { code: 'ETIMEDOUT', message: 'timed out' } });
  assert.deepEqual(last, { state: 'failed', error: `gave up after ${MAX_MAIL_ATTEMPTS} attempts; last: timed out` });
  assert.equal(retryDelayMs(40, 30_000), MAX_RETRY_MS);
});

test('the mail state reads as text', () => {
  const at = new Date('2030-01-01T00:00:30Z');
  assert.equal(mailStateText({ state: 'retrying', lastError: '451 try again', nextAttemptAt: at, attempts: 1 }), 'not sent yet: 451 try again; next attempt at 2030-01-01T00:00:30.000Z');
  assert.equal(mailStateText({ state: 'bounced', lastError: '550 no such user', nextAttemptAt: null, attempts: 1 }), 'bounced: 550 no such user');
});
