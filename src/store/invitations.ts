// Invitations of an organization and the teams they lead into (migration 017).
import type { Queryable } from './database.ts';

export interface InvitationRow {
  id: string;
  org_id: string;
  email: string;
  org_role: 'owner' | 'member';
  state: 'pending' | 'accepted' | 'revoked';
  created_by: number | null;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: number | null;
  revoked_at: Date | null;
  mail_id: string | null;
  /** The teams and roles, read along with the row. */
  teams: Array<{ team_id: number; role: 'admin' | 'developer' | 'viewer' }>;
  /** The current mail's state, read along with the row (null without a mail). */
  mail_state: string | null;
  mail_attempts: number | null;
  mail_last_error: string | null;
  mail_next_attempt_at: Date | null;
  mail_sent_at: Date | null;
}

const columns = `i.id, i.org_id, i.email, i.org_role, i.state, i.created_by, i.created_at, i.updated_at, i.expires_at,
  i.accepted_at, i.accepted_by, i.revoked_at, i.mail_id,
  COALESCE((SELECT json_agg(json_build_object('team_id', t.team_id, 'role', t.role) ORDER BY t.team_id)
            FROM invitation_teams t WHERE t.invitation_id = i.id), '[]') AS teams,
  m.state AS mail_state, m.attempts AS mail_attempts, m.last_error AS mail_last_error,
  m.next_attempt_at AS mail_next_attempt_at, m.sent_at AS mail_sent_at`;
const from = 'invitations i LEFT JOIN mail_outbox m ON m.id = i.mail_id';

export interface NewInvitation {
  id: string;
  orgId: string;
  email: string;
  orgRole: 'owner' | 'member';
  teams: Array<{ team_id: number; role: string }>;
  tokenHash: Buffer;
  createdBy: number;
  at: Date;
  expiresAt: Date;
}

export async function insertInvitation(db: Queryable, invitation: NewInvitation): Promise<void> {
  await db.query(
    `INSERT INTO invitations (id, org_id, email, org_role, token_hash, state, created_by, created_at, updated_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $7, $8)`,
    [invitation.id, invitation.orgId, invitation.email, invitation.orgRole, invitation.tokenHash, invitation.createdBy, invitation.at, invitation.expiresAt],
  );
  for (const team of invitation.teams) {
    await db.query('INSERT INTO invitation_teams (invitation_id, team_id, role) VALUES ($1, $2, $3)', [invitation.id, team.team_id, team.role]);
  }
}

export async function findInvitation(db: Queryable, id: string, lock = false): Promise<InvitationRow | undefined> {
  return (await db.query<InvitationRow>(`SELECT ${columns} FROM ${from} WHERE i.id = $1${lock ? ' FOR UPDATE OF i' : ''}`, [id])).rows[0];
}

export async function findInvitationByToken(db: Queryable, tokenHash: Buffer): Promise<InvitationRow | undefined> {
  return (await db.query<InvitationRow>(`SELECT ${columns} FROM ${from} WHERE i.token_hash = $1 FOR UPDATE OF i`, [tokenHash])).rows[0];
}

export async function findPendingInvitation(db: Queryable, orgId: string, email: string): Promise<InvitationRow | undefined> {
  return (
    await db.query<InvitationRow>(`SELECT ${columns} FROM ${from} WHERE i.org_id = $1 AND lower(i.email) = lower($2) AND i.state = 'pending'`, [orgId, email])
  ).rows[0];
}

/**
 * Invitations of an org, newest first after `after`: all of them, or (`teamIds`) those leading into one of those
 * teams or made by `userId`. `state` narrows; `expired` is a pending one past its expiry.
 */
export async function listInvitations(
  db: Queryable,
  filter: { orgId: string; teamIds: number[] | null; userId: number; state?: string; now: Date },
  after: { at: string; id: string } | undefined,
  limit: number,
): Promise<InvitationRow[]> {
  const params: unknown[] = [filter.orgId, filter.teamIds, filter.userId, limit + 1, filter.now];
  const states: Record<string, string> = {
    pending: "i.state = 'pending' AND i.expires_at > $5",
    expired: "i.state = 'pending' AND i.expires_at <= $5",
    accepted: "i.state = 'accepted'",
    revoked: "i.state = 'revoked'",
  };
  const state = `AND $5::timestamptz IS NOT NULL ${filter.state ? `AND ${states[filter.state]}` : ''}`;
  let position = '';
  if (after) {
    params.push(after.at, after.id);
    position = 'AND (i.created_at, i.id) < ($6::timestamptz, $7::uuid)';
  }
  const visible = `($2::bigint[] IS NULL OR i.created_by = $3 OR EXISTS (SELECT 1 FROM invitation_teams t WHERE t.invitation_id = i.id AND t.team_id = ANY($2)))`;
  return (
    await db.query<InvitationRow>(
      `SELECT ${columns} FROM ${from} WHERE i.org_id = $1 AND ${visible} ${state} ${position} ORDER BY i.created_at DESC, i.id DESC LIMIT $4`,
      params,
    )
  ).rows;
}

/** A new link and expiry for a pending invitation (renewal). */
export async function renewInvitation(db: Queryable, id: string, tokenHash: Buffer, expiresAt: Date, at: Date): Promise<void> {
  await db.query("UPDATE invitations SET token_hash = $2, expires_at = $3, updated_at = $4 WHERE id = $1 AND state = 'pending'", [id, tokenHash, expiresAt, at]);
}

export async function setInvitationMail(db: Queryable, id: string, mailId: string | null): Promise<void> {
  await db.query('UPDATE invitations SET mail_id = $2 WHERE id = $1', [id, mailId]);
}

export async function revokeInvitation(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query("UPDATE invitations SET state = 'revoked', revoked_at = $2, updated_at = $2 WHERE id = $1 AND state = 'pending'", [id, at]);
}

export async function markInvitationAccepted(db: Queryable, id: string, userId: number, at: Date): Promise<void> {
  await db.query("UPDATE invitations SET state = 'accepted', accepted_at = $3, accepted_by = $2, updated_at = $3 WHERE id = $1", [id, userId, at]);
}
