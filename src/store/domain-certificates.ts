// Certificates of custom domains (migration 027): the served certificate with its sealed key, the issuance lease
// and retry time, and the HTTP-01 answers of running issuances. Changes of a domain's certificate send NOTIFY
// svc_domains like every change of the domain (the data plane then loads the certificates again).
import type { SealedSecret } from '../core/secret-box.ts';
import type { Queryable } from './database.ts';
import { DOMAINS_CHANNEL, type CertificateState } from './custom-domains.ts';

export interface ServedCertificateRow {
  id: string;
  name: string;
  certificate_pem: string;
  sealed: SealedSecret;
}

export interface IssuanceRow {
  id: string;
  team_id: number;
  name: string;
  certificate: CertificateState;
}

/**
 * Claims verified domains whose certificate is due: Being issued (or Failed, once its retry time came), or Issued
 * and expiring within `renewBefore`; one server holds each until `leaseUntil`.
 */
export async function claimDueIssuances(db: Queryable, now: Date, renewBefore: Date, leaseUntil: Date, limit: number): Promise<IssuanceRow[]> {
  return (
    await db.query<IssuanceRow>(
      `UPDATE custom_domains SET certificate_lease_until = $3
       WHERE id IN (SELECT id FROM custom_domains WHERE verification = 'verified'
                      AND (certificate_lease_until IS NULL OR certificate_lease_until < $1)
                      AND ((certificate IN ('being-issued', 'failed') AND (certificate_retry_at IS NULL OR certificate_retry_at <= $1))
                           OR (certificate = 'issued' AND certificate_not_after <= $2))
                    LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING id, team_id::int AS team_id, name, certificate`,
      [now, renewBefore, leaseUntil, limit],
    )
  ).rows;
}

export interface CertificateOutcome {
  state: CertificateState;
  detail: string | null;
  /** The certificate and key to serve; undefined keeps the one there (a failed renewal), null removes it. */
  served?: { pem: string; sealed: SealedSecret; notAfter: Date } | null;
  retryAt: Date | null;
  at: Date;
}

export async function saveCertificate(db: Queryable, id: string, o: CertificateOutcome): Promise<{ id: string; team_id: number } | undefined> {
  const served = o.served === undefined ? [] : [o.served?.pem ?? null, o.served?.sealed.nonce ?? null, o.served?.sealed.ciphertext ?? null, o.served?.sealed.tag ?? null, o.served?.sealed.keyId ?? null, o.served?.notAfter ?? null];
  const set = o.served === undefined ? '' : ', certificate_pem = $6, certificate_key_nonce = $7, certificate_key_data = $8, certificate_key_tag = $9, certificate_key_id = $10, certificate_not_after = $11';
  const row = (
    await db.query<{ id: string; team_id: number }>(
      `UPDATE custom_domains SET certificate = $2, certificate_detail = $3, certificate_retry_at = $4, certificate_lease_until = NULL,
         updated_at = $5, version = version + 1${set}
       WHERE id = $1 RETURNING id, team_id::int AS team_id`,
      [id, o.state, o.detail, o.retryAt, o.at, ...served],
    )
  ).rows[0];
  if (row) await db.query('SELECT pg_notify($1, $2)', [DOMAINS_CHANNEL, id]);
  return row;
}

/** The certificate state of every verified domain (a start brings them in step with its means). */
export async function listCertificateStates(db: Queryable): Promise<Array<{ id: string; name: string; certificate: CertificateState }>> {
  return (await db.query<{ id: string; name: string; certificate: CertificateState }>("SELECT id, name, certificate FROM custom_domains WHERE verification = 'verified' ORDER BY name")).rows;
}

/** The certificates the data plane serves: verified domains with an issued or uploaded certificate. */
export async function listServedCertificates(db: Queryable): Promise<ServedCertificateRow[]> {
  const rows = (
    await db.query<{ id: string; name: string; certificate_pem: string; certificate_key_nonce: Buffer; certificate_key_data: Buffer; certificate_key_tag: Buffer; certificate_key_id: string }>(
      `SELECT id, name, certificate_pem, certificate_key_nonce, certificate_key_data, certificate_key_tag, certificate_key_id FROM custom_domains
       WHERE verification = 'verified' AND certificate IN ('issued', 'uploaded') AND certificate_pem IS NOT NULL ORDER BY name`,
    )
  ).rows;
  return rows.map((r) => ({ id: r.id, name: r.name, certificate_pem: r.certificate_pem, sealed: { nonce: r.certificate_key_nonce, ciphertext: r.certificate_key_data, tag: r.certificate_key_tag, keyId: r.certificate_key_id } }));
}

export async function putAcmeChallenge(db: Queryable, token: string, keyAuthorization: string, at: Date): Promise<void> {
  await db.query('INSERT INTO acme_challenges (token, key_authorization, created_at) VALUES ($1, $2, $3) ON CONFLICT (token) DO UPDATE SET key_authorization = $2', [token, keyAuthorization, at]);
}

export async function removeAcmeChallenge(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM acme_challenges WHERE token = $1', [token]);
}

export async function findAcmeChallenge(db: Queryable, token: string): Promise<string | undefined> {
  return (await db.query<{ key_authorization: string }>('SELECT key_authorization FROM acme_challenges WHERE token = $1', [token])).rows[0]?.key_authorization;
}
