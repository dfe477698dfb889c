// Custom domains of teams (migration 026). Every change sends NOTIFY svc_domains with the domain's id: the routers
// of all servers reload it. Verification re-checks are claimed with a lease so that one server checks a domain.
import type { Queryable } from './database.ts';

export const DOMAINS_CHANNEL = 'svc_domains';

export type VerificationStatus = 'not-checked' | 'checking' | 'verified' | 'failed' | 'lapsed';
export type CertificateState = 'waits-for-verification' | 'being-issued' | 'issued' | 'failed' | 'covered' | 'uploaded' | 'not-managed';

/** A route of a domain: a path prefix to a workspace's dev URL, or to one of its services (and port). */
export interface DomainRoute {
  path: string;
  workspace_id: number;
  service?: string;
  port?: number;
  strip: boolean;
}

export interface CustomDomainRow {
  id: string;
  team_id: number;
  name: string;
  token: string;
  routes: DomainRoute[];
  timeout_seconds: number;
  body_limit_bytes: number;
  restricted: boolean;
  verification: VerificationStatus;
  verification_detail: string | null;
  checked_at: Date | null;
  verified_at: Date | null;
  missing_since: Date | null;
  check_failures: number;
  next_check_at: Date | null;
  certificate: CertificateState;
  certificate_detail: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const columns = `id, team_id::int AS team_id, name, token, routes, timeout_seconds, body_limit_bytes::float8 AS body_limit_bytes, restricted,
  verification, verification_detail, checked_at, verified_at, missing_since, check_failures, next_check_at, certificate,
  certificate_detail, version, created_at, updated_at`;

async function notify(db: Queryable, id: string): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [DOMAINS_CHANNEL, id]);
}

export interface NewCustomDomain {
  id: string;
  teamId: number;
  name: string;
  token: string;
  routes: DomainRoute[];
  timeoutSeconds: number;
  bodyLimitBytes: number;
  restricted: boolean;
  certificate: CertificateState;
  at: Date;
}

/** Inserts a domain whose first check is due at once; a name the team has, or one ever verified, throws a unique violation. */
export async function insertCustomDomain(db: Queryable, d: NewCustomDomain): Promise<CustomDomainRow> {
  const row = (
    await db.query<CustomDomainRow>(
      `INSERT INTO custom_domains (id, team_id, name, token, routes, timeout_seconds, body_limit_bytes, restricted, certificate, next_check_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $10) RETURNING ${columns}`,
      [d.id, d.teamId, d.name, d.token, JSON.stringify(d.routes), d.timeoutSeconds, d.bodyLimitBytes, d.restricted, d.certificate, d.at],
    )
  ).rows[0];
  await notify(db, row.id);
  return row;
}

export async function findCustomDomain(db: Queryable, id: string): Promise<CustomDomainRow | undefined> {
  return (await db.query<CustomDomainRow>(`SELECT ${columns} FROM custom_domains WHERE id = $1`, [id])).rows[0];
}

/**
 * The domains of a name (migration 041): at most one ever verified, which comes first, then the unverified claims
 * oldest first. `lock`: FOR UPDATE, for the check that moves the name.
 */
export async function findCustomDomainsByName(db: Queryable, name: string, lock = false): Promise<CustomDomainRow[]> {
  return (
    await db.query<CustomDomainRow>(`SELECT ${columns} FROM custom_domains WHERE name = $1 ORDER BY verified_at IS NULL, created_at, id${lock ? ' FOR UPDATE' : ''}`, [name])
  ).rows;
}

/** A team's domains by name, after `after` (a name), at most `limit` + 1 (pageOf tells whether there are more). */
export async function listCustomDomains(db: Queryable, teamId: number, after: string | undefined, limit: number): Promise<CustomDomainRow[]> {
  return (
    await db.query<CustomDomainRow>(`SELECT ${columns} FROM custom_domains WHERE team_id = $1 AND name > $2 ORDER BY name LIMIT $3`, [teamId, after ?? '', limit + 1])
  ).rows;
}

/** Every domain that may serve (the routers' table). */
export async function listServingDomains(db: Queryable): Promise<CustomDomainRow[]> {
  return (await db.query<CustomDomainRow>(`SELECT ${columns} FROM custom_domains WHERE verification IN ('verified', 'checking') AND verified_at IS NOT NULL`)).rows;
}

export interface DomainSettings {
  routes: DomainRoute[];
  timeoutSeconds: number;
  bodyLimitBytes: number;
  restricted: boolean;
}

/** Changes the settings if the version is still `version`; undefined when it moved. */
export async function updateCustomDomainSettings(db: Queryable, id: string, version: number, s: DomainSettings, at: Date): Promise<CustomDomainRow | undefined> {
  const row = (
    await db.query<CustomDomainRow>(
      `UPDATE custom_domains SET routes = $3, timeout_seconds = $4, body_limit_bytes = $5, restricted = $6, version = version + 1, updated_at = $7
       WHERE id = $1 AND version = $2 RETURNING ${columns}`,
      [id, version, JSON.stringify(s.routes), s.timeoutSeconds, s.bodyLimitBytes, s.restricted, at],
    )
  ).rows[0];
  if (row) await notify(db, id);
  return row;
}

export async function deleteCustomDomain(db: Queryable, id: string): Promise<CustomDomainRow | undefined> {
  const row = (await db.query<CustomDomainRow>(`DELETE FROM custom_domains WHERE id = $1 RETURNING ${columns}`, [id])).rows[0];
  if (row) await notify(db, id);
  return row;
}

/** Asks for a check at `at` (a user's "check now"). */
export async function scheduleDomainCheck(db: Queryable, id: string, at: Date): Promise<CustomDomainRow | undefined> {
  return (
    await db.query<CustomDomainRow>(`UPDATE custom_domains SET next_check_at = $2, check_lease_until = NULL WHERE id = $1 RETURNING ${columns}`, [id, at])
  ).rows[0];
}

/** Claims up to `limit` domains whose check is due, marking them Checking; one server holds each until `leaseUntil`. */
export async function claimDueDomainChecks(db: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<CustomDomainRow[]> {
  const rows = (
    await db.query<CustomDomainRow>(
      `UPDATE custom_domains SET check_lease_until = $2,
         verification = CASE WHEN verification IN ('not-checked', 'failed') THEN 'checking' ELSE verification END, updated_at = $1
       WHERE id IN (SELECT id FROM custom_domains WHERE next_check_at <= $1 AND (check_lease_until IS NULL OR check_lease_until < $1)
                    ORDER BY next_check_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING ${columns}`,
      [now, leaseUntil, limit],
    )
  ).rows;
  for (const row of rows) await notify(db, row.id);
  return rows;
}

export interface CheckResult {
  verification: VerificationStatus;
  detail: string | null;
  checkedAt: Date;
  verifiedAt: Date | null;
  missingSince: Date | null;
  failures: number;
  nextCheckAt: Date;
  certificate: CertificateState;
}

/** Saves the outcome of a check and releases the claim. */
export async function saveDomainCheck(db: Queryable, id: string, r: CheckResult): Promise<CustomDomainRow | undefined> {
  const row = (
    await db.query<CustomDomainRow>(
      `UPDATE custom_domains SET verification = $2, verification_detail = $3, checked_at = $4, verified_at = $5, missing_since = $6,
         check_failures = $7, next_check_at = $8, certificate = $9, check_lease_until = NULL, updated_at = $4
       WHERE id = $1 RETURNING ${columns}`,
      [id, r.verification, r.detail, r.checkedAt, r.verifiedAt, r.missingSince, r.failures, r.nextCheckAt, r.certificate],
    )
  ).rows[0];
  if (row) await notify(db, id);
  return row;
}

/** Domains never verified that were added before `before`: their names are given up. */
export async function deleteUnverifiedDomainsBefore(db: Queryable, before: Date): Promise<CustomDomainRow[]> {
  const rows = (
    await db.query<CustomDomainRow>(`DELETE FROM custom_domains WHERE verified_at IS NULL AND created_at < $1 RETURNING ${columns}`, [before])
  ).rows;
  for (const row of rows) await notify(db, row.id);
  return rows;
}
