// OpenID Connect: identities (issuer, subject) -> user, flows between start and callback, roles given by rules.
import type { Queryable } from './database.ts';
import type { OrgRole } from './orgs.ts';
import type { TeamRole } from './teams.ts';

export interface OidcIdentityRow {
  issuer: string;
  subject: string;
  provider: string;
  user_id: number;
  email: string | null;
  created_at: Date;
  last_sign_in_at: Date | null;
}

export async function findIdentity(db: Queryable, issuer: string, subject: string): Promise<OidcIdentityRow | undefined> {
  return (await db.query<OidcIdentityRow>('SELECT * FROM oidc_identities WHERE issuer = $1 AND subject = $2', [issuer, subject])).rows[0];
}

export async function listIdentitiesOfUser(db: Queryable, userId: number): Promise<OidcIdentityRow[]> {
  return (await db.query<OidcIdentityRow>('SELECT * FROM oidc_identities WHERE user_id = $1 ORDER BY provider', [userId])).rows;
}

/** False when the user has an identity of this provider already (another subject). */
export async function insertIdentity(
  db: Queryable,
  identity: { issuer: string; subject: string; provider: string; userId: number; email: string | null; at: Date },
): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO oidc_identities (issuer, subject, provider, user_id, email, created_at, last_sign_in_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT DO NOTHING`,
    [identity.issuer, identity.subject, identity.provider, identity.userId, identity.email, identity.at],
  );
  return (result.rowCount ?? 0) > 0;
}

export async function touchIdentity(db: Queryable, issuer: string, subject: string, email: string | null, at: Date): Promise<void> {
  await db.query('UPDATE oidc_identities SET last_sign_in_at = $3, email = $4 WHERE issuer = $1 AND subject = $2', [issuer, subject, at, email]);
}

export interface OidcFlowRow {
  binding_hash: Buffer;
  provider: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
  link_user_id: number | null;
  expires_at: Date;
}

export async function insertFlow(
  db: Queryable,
  flow: { stateHash: Buffer; bindingHash: Buffer; provider: string; nonce: string; codeVerifier: string; returnTo: string; linkUserId: number | null; at: Date; expiresAt: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO oidc_flows (state_hash, binding_hash, provider, nonce, code_verifier, return_to, link_user_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [flow.stateHash, flow.bindingHash, flow.provider, flow.nonce, flow.codeVerifier, flow.returnTo, flow.linkUserId, flow.at, flow.expiresAt],
  );
  // Flows nobody finished go with the next start.
  await db.query('DELETE FROM oidc_flows WHERE expires_at < $1', [flow.at]);
}

/** Takes the flow out (a state works once), whatever its expiry: the caller checks it. */
export async function takeFlow(db: Queryable, stateHash: Buffer): Promise<OidcFlowRow | undefined> {
  return (
    await db.query<OidcFlowRow>(
      'DELETE FROM oidc_flows WHERE state_hash = $1 RETURNING binding_hash, provider, nonce, code_verifier, return_to, link_user_id, expires_at',
      [stateHash],
    )
  ).rows[0];
}

export interface RuleGrantRows {
  admin: { isAdmin: boolean; source: string | null };
  teams: Array<{ team_id: number; org_id: string; role: TeamRole; source: string }>;
  orgs: Array<{ org_id: string; role: OrgRole; source: string }>;
}

/** The user's admin flag, and every team and org membership (with where each came from), locked for the change. */
export async function lockRoleGrants(db: Queryable, userId: number): Promise<RuleGrantRows> {
  const user = (await db.query<{ is_admin: boolean; admin_source: string | null }>('SELECT is_admin, admin_source FROM users WHERE id = $1 FOR UPDATE', [userId])).rows[0];
  const teams = (
    await db.query<{ team_id: number; org_id: string; role: TeamRole; source: string }>(
      'SELECT m.team_id::int AS team_id, t.org_id, m.role, m.source FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.user_id = $1 FOR UPDATE OF m',
      [userId],
    )
  ).rows;
  const orgs = (await db.query<{ org_id: string; role: OrgRole; source: string }>('SELECT org_id, role, source FROM org_members WHERE user_id = $1 FOR UPDATE', [userId])).rows;
  return { admin: { isAdmin: user.is_admin, source: user.admin_source }, teams, orgs };
}

export async function setAdminByRule(db: Queryable, userId: number, source: string | null, at: Date): Promise<void> {
  await db.query('UPDATE users SET is_admin = $2, admin_source = $3, updated_at = $4, version = version + 1 WHERE id = $1', [userId, source !== null, source, at]);
  await db.query("SELECT pg_notify('svc_auth', $1)", [`user:${userId}`]);
}

export async function putTeamMemberByRule(db: Queryable, teamId: number, userId: number, role: TeamRole, source: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO team_members (team_id, user_id, role, created_at, source) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (team_id, user_id) DO UPDATE SET role = EXCLUDED.role, source = EXCLUDED.source`,
    [teamId, userId, role, at, source],
  );
}

export async function putOrgMemberByRule(db: Queryable, orgId: string, userId: number, role: OrgRole, source: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO org_members (org_id, user_id, role, created_at, source) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role, source = EXCLUDED.source`,
    [orgId, userId, role, at, source],
  );
}

export async function deleteTeamMemberOfSource(db: Queryable, teamId: number, userId: number, source: string): Promise<boolean> {
  return ((await db.query('DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 AND source = $3', [teamId, userId, source])).rowCount ?? 0) > 0;
}

/** Only while the user is in none of the org's teams any more. */
export async function deleteOrgMemberOfSource(db: Queryable, orgId: string, userId: number, source: string): Promise<boolean> {
  const result = await db.query(
    `DELETE FROM org_members WHERE org_id = $1 AND user_id = $2 AND source = $3
     AND NOT EXISTS (SELECT 1 FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.org_id = $1 AND m.user_id = $2)`,
    [orgId, userId, source],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Team ids by id or by `<org name>/<team name>`; absent ones are left out. */
export async function resolveTeamRefs(db: Queryable, refs: Array<number | string>): Promise<Map<number | string, { id: number; org_id: string }>> {
  const found = new Map<number | string, { id: number; org_id: string }>();
  for (const ref of refs) {
    const row =
      typeof ref === 'number'
        ? (await db.query<{ id: number; org_id: string }>('SELECT id::int AS id, org_id FROM teams WHERE id = $1', [ref])).rows[0]
        : (
            await db.query<{ id: number; org_id: string }>(
              'SELECT t.id::int AS id, t.org_id FROM teams t JOIN orgs o ON o.id = t.org_id WHERE lower(o.name) = lower($1) AND lower(t.name) = lower($2)',
              [ref.slice(0, ref.indexOf('/')), ref.slice(ref.indexOf('/') + 1)],
            )
          ).rows[0];
    if (row) found.set(ref, row);
  }
  return found;
}

/** Org ids by id (uuid) or by name. */
export async function resolveOrgRefs(db: Queryable, refs: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const ref of refs) {
    const row = (await db.query<{ id: string }>('SELECT id FROM orgs WHERE id::text = $1 OR lower(name) = lower($1)', [ref])).rows[0];
    if (row) found.set(ref, row.id);
  }
  return found;
}

export async function recordSessionProvider(db: Queryable, tokenHash: Buffer, provider: string, idToken: string | null): Promise<void> {
  await db.query('UPDATE sessions SET oidc_provider = $2, oidc_id_token = $3 WHERE token_hash = $1', [tokenHash, provider, idToken]);
}

export async function sessionProvider(db: Queryable, tokenHash: Buffer): Promise<{ provider: string; idToken: string | null } | undefined> {
  const row = (await db.query<{ oidc_provider: string | null; oidc_id_token: string | null }>('SELECT oidc_provider, oidc_id_token FROM sessions WHERE token_hash = $1', [tokenHash])).rows[0];
  return row?.oidc_provider ? { provider: row.oidc_provider, idToken: row.oidc_id_token } : undefined;
}

/** Pending, unexpired invitations for the address (any organization). */
export async function openInvitationIds(db: Queryable, email: string, now: Date): Promise<string[]> {
  return (
    await db.query<{ id: string }>("SELECT id FROM invitations WHERE lower(email) = lower($1) AND state = 'pending' AND expires_at > $2 ORDER BY created_at", [email, now])
  ).rows.map((r) => r.id);
}
