import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterCheck, claimOutcome, defaultVerificationSettings as settings, retryDelayMs, type DomainCheckState } from './verification.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const fresh: DomainCheckState = { verification: 'checking', verified_at: null, missing_since: null, check_failures: 0, certificate: 'waits-for-verification' };
const missing = { kind: 'missing', detail: 'No TXT record.' } as const;

test('retries double from the first delay up to the recheck interval', () => {
  assert.deepEqual([1, 2, 3, 7, 40].map((f) => retryDelayMs(f, settings)), [60_000, 120_000, 240_000, 3_600_000, 3_600_000]);
});

test('found: Verified, the certificate leaves Waits for verification; a never verified domain that is missing: Failed', () => {
  const verified = afterCheck(fresh, { kind: 'found' }, t0, settings, 'being-issued');
  assert.deepEqual([verified.verification, verified.certificate, verified.failures], ['verified', 'being-issued', 0]);
  assert.equal(verified.nextCheckAt.getTime() - t0.getTime(), settings.recheckMs);
  const failed = afterCheck(fresh, missing, t0, settings, 'being-issued');
  assert.deepEqual([failed.verification, failed.certificate, failed.failures], ['failed', 'waits-for-verification', 1]);
});

test('a verified domain missing its record lapses only after the lapse period; a resolver error does not count', () => {
  const state: DomainCheckState = { verification: 'verified', verified_at: t0, missing_since: null, check_failures: 0, certificate: 'issued' };
  const first = afterCheck(state, missing, t0, settings, 'issued');
  assert.deepEqual([first.verification, first.missingSince], ['verified', t0]);
  const later = new Date(t0.getTime() + settings.lapseMs - 1);
  assert.equal(afterCheck({ ...state, missing_since: t0 }, missing, later, settings, 'issued').verification, 'verified');
  const lapsed = afterCheck({ ...state, missing_since: t0 }, missing, new Date(t0.getTime() + settings.lapseMs), settings, 'issued');
  assert.equal(lapsed.verification, 'lapsed');
  const error = afterCheck({ ...state, missing_since: t0 }, { kind: 'error', detail: 'SERVFAIL' }, new Date(t0.getTime() + 2 * settings.lapseMs), settings, 'issued');
  assert.deepEqual([error.verification, error.missingSince], ['verified', t0]);
  assert.equal(afterCheck({ ...state, verification: 'lapsed', missing_since: t0 }, { kind: 'found' }, later, settings, 'issued').verification, 'verified');
});

test('a first proof takes a name others hold unverified (their entries go); never one another team has verified', () => {
  const mine = { id: 'b', team_id: 2, verified_at: null };
  const claims = [{ id: 'a', team_id: 1, verified_at: null }, mine, { id: 'c', team_id: 3, verified_at: null }];
  assert.deepEqual(claimOutcome(mine, claims), { kind: 'takes', removes: ['a', 'c'] });
  assert.deepEqual(claimOutcome(mine, [mine]), { kind: 'takes', removes: [] });
  const refused = claimOutcome(mine, [{ id: 'a', team_id: 1, verified_at: t0 }, mine]);
  assert.equal(refused.kind, 'refused');
  assert.match(refused.kind === 'refused' ? refused.detail : '', /another team has verified the name/);
});
