// Invitations of an organization, optionally into teams with a role: who may invite, create, renew, revoke and
// accept. Accepting uses the single-use link: it makes the account when the address has none (and signs that new
// account in), or is done by the existing account signed in by its own means; then it adds the memberships. The mail is a durable job of the outbox (src/mail), queued in the same transaction.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { orgAccess, teamAccess } from '../auth/access.ts';
import type { CallerUser } from '../auth/credentials.ts';
import { DAY } from '../core/clock.ts';
import type { Clock } from '../core/clock.ts';
import { forbidden, notFound, problem, validationProblem, type ProblemFieldError } from '../core/problems.ts';
import { randomToken, sha256 } from '../core/secrets.ts';
import { publishEvent } from '../events/publish.ts';
import { invitationMail } from '../mail/messages.ts';
import { queueMail } from '../mail/outbox.ts';
import { isUniqueViolation, withTransaction, type Queryable } from '../store/database.ts';
import {
  findInvitation,
  findInvitationByToken,
  findPendingInvitation,
  insertInvitation,
  markInvitationAccepted,
  renewInvitation,
  revokeInvitation,
  setInvitationMail,
  type InvitationRow,
} from '../store/invitations.ts';
import { cancelInvitationMail } from '../store/mail-outbox.ts';
import { ensureOrgMember, findOrg, listOrgMembers, orgRole, upsertOrgMember } from '../store/orgs.ts';
import { findTeam, upsertTeamMember, type TeamRole } from '../store/teams.ts';
import { findUserByEmail, insertUser, type UserRow } from '../store/users.ts';

export interface PeopleDeps {
  pool: pg.Pool;
  clock: Clock;
  config: { baseUrl: string; smtpUrl?: string; invitationDays: number };
}

export interface InvitationRequest {
  email: string;
  role?: 'owner' | 'member';
  teams?: Array<{ team_id: number; role: TeamRole }>;
}

/** What the caller may do with an org's invitations: all of them, or those into the teams they administer. */
export interface InvitationStanding {
  /** org.members.manage (org owners, administrators): every invitation of the org, any role. */
  wholeOrg: boolean;
  /** Teams of the org where the caller holds team.members.manage. */
  managedTeams: number[];
}

export async function invitationStanding(db: Queryable, caller: CallerUser, orgId: string): Promise<InvitationStanding> {
  const org = await orgAccess(db, caller, orgId);
  if (org.permissions.includes('org.members.manage')) return { wholeOrg: true, managedTeams: [] };
  const teams = (
    await db.query<{ id: number }>(
      `SELECT t.id FROM teams t JOIN team_members m ON m.team_id = t.id WHERE t.org_id = $1 AND m.user_id = $2 AND m.role = 'admin'`,
      [orgId, caller.id],
    )
  ).rows.map((r) => r.id);
  return { wholeOrg: false, managedTeams: teams };
}

/** Whether the caller may revoke or renew it: the whole org, or every team it leads into (and no more than member). */
function mayManage(standing: InvitationStanding, row: InvitationRow): boolean {
  if (standing.wholeOrg) return true;
  return row.org_role === 'member' && row.teams.length > 0 && row.teams.every((t) => standing.managedTeams.includes(t.team_id));
}

function maySee(standing: InvitationStanding, row: InvitationRow, callerId: number): boolean {
  return standing.wholeOrg || row.created_by === callerId || row.teams.some((t) => standing.managedTeams.includes(t.team_id));
}

export const invitationUrl = (baseUrl: string, token: string) => `${baseUrl}/sign-in#invitation=${token}`;

export async function createInvitation(
  deps: PeopleDeps,
  caller: CallerUser,
  orgId: string,
  request: InvitationRequest,
): Promise<{ row: InvitationRow; url?: string }> {
  const standing = await invitationStanding(deps.pool, caller, orgId);
  const teams = request.teams ?? [];
  const role = request.role ?? 'member';
  await checkTeams(deps.pool, orgId, teams);
  if (!standing.wholeOrg) {
    if (role === 'owner') throw forbidden('Inviting an owner takes org.members.manage.');
    if (teams.length === 0) throw forbidden('Inviting into the organization alone takes org.members.manage; name a team you administer.');
    const foreign = teams.find((t) => !standing.managedTeams.includes(t.team_id));
    if (foreign) throw forbidden(`Your role does not allow team.members.manage on team ${foreign.team_id}.`);
  }
  await refuseMember(deps.pool, orgId, request.email);
  const now = deps.clock.now();
  const token = randomToken(32);
  const id = randomUUID();
  try {
    await withTransaction(deps.pool, async (db) => {
      await insertInvitation(db, {
        id,
        orgId,
        email: request.email,
        orgRole: role,
        teams,
        tokenHash: sha256(token),
        createdBy: caller.id,
        at: now,
        expiresAt: new Date(now.getTime() + deps.config.invitationDays * DAY),
      });
      await mailLink(deps, db, { id, orgId, email: request.email, teams, caller, token, expiresAt: new Date(now.getTime() + deps.config.invitationDays * DAY) });
      await publishEvent(db, { type: 'invites.updated', at: now.toISOString(), org_id: orgId });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw await pendingProblem(deps.pool, orgId, request.email);
    throw error;
  }
  const row = (await findInvitation(deps.pool, id))!;
  return { row, url: deps.config.smtpUrl ? undefined : invitationUrl(deps.config.baseUrl, token) };
}

/** Every team must belong to the org, once. */
async function checkTeams(db: Queryable, orgId: string, teams: Array<{ team_id: number }>): Promise<void> {
  const errors: ProblemFieldError[] = [];
  const seen = new Set<number>();
  for (const [i, entry] of teams.entries()) {
    const team = await findTeam(db, entry.team_id);
    if (!team || team.org_id !== orgId) errors.push({ pointer: `/teams/${i}/team_id`, message: 'is not a team of this organization' });
    else if (seen.has(entry.team_id)) errors.push({ pointer: `/teams/${i}/team_id`, message: 'is named twice' });
    seen.add(entry.team_id);
  }
  if (errors.length > 0) throw validationProblem(errors);
}

async function refuseMember(db: Queryable, orgId: string, email: string): Promise<void> {
  const user = await findUserByEmail(db, email);
  if (!user || !(await orgRole(db, orgId, user.id))) return;
  const member = (await listOrgMembers(db, orgId, user.id - 1, 1))[0];
  throw problem('already-member', 409, `${email} is a member of the organization already; change their teams and roles directly.`, {
    extra: { member: { user_id: member.user_id, email: member.email, name: member.name, role: member.role, created_at: member.created_at.toISOString() } },
  });
}

async function pendingProblem(db: Queryable, orgId: string, email: string) {
  const pending = await findPendingInvitation(db, orgId, email);
  return problem('invitation-pending', 409, `${email} has a pending invitation to this organization; renew it to send a new link.`, {
    extra: pending ? { invitation_id: pending.id } : {},
  });
}

/** Queues the mail carrying the link (with a mail server), and points the invitation at it. */
async function mailLink(
  deps: PeopleDeps,
  db: Queryable,
  input: { id: string; orgId: string; email: string; teams: Array<{ team_id: number }>; caller: CallerUser; token: string; expiresAt: Date },
): Promise<void> {
  if (!deps.config.smtpUrl) return setInvitationMail(db, input.id, null);
  const org = (await findOrg(db, input.orgId))!;
  const teamNames = [];
  for (const t of input.teams) teamNames.push((await findTeam(db, t.team_id))!.name);
  const text = invitationMail({ orgName: org.name, inviterName: input.caller.name, teams: teamNames, url: invitationUrl(deps.config.baseUrl, input.token), expiresAt: input.expiresAt });
  const mailId = await queueMail(db, { kind: 'invitation', invitationId: input.id, recipient: input.email, ...text, at: deps.clock.now() });
  await setInvitationMail(db, input.id, mailId);
}

/** The invitation when the caller may see it; 404 otherwise (also for an org they cannot see). */
export async function visibleInvitation(deps: PeopleDeps, caller: CallerUser, id: string): Promise<{ row: InvitationRow; standing: InvitationStanding }> {
  const row = await findInvitation(deps.pool, id);
  if (!row) throw notFound('invitation');
  const standing = await invitationStanding(deps.pool, caller, row.org_id).catch(() => {
    throw notFound('invitation');
  });
  if (!maySee(standing, row, caller.id)) throw notFound('invitation');
  return { row, standing };
}

export async function revokeInvitationAs(deps: PeopleDeps, caller: CallerUser, id: string): Promise<InvitationRow> {
  const { row, standing } = await visibleInvitation(deps, caller, id);
  if (!mayManage(standing, row)) throw forbidden('Revoking it takes team.members.manage on every team it leads into.');
  const now = deps.clock.now();
  await withTransaction(deps.pool, async (db) => {
    const current = (await findInvitation(db, id, true))!;
    if (current.state !== 'pending') throw closed(current);
    await revokeInvitation(db, id, now);
    await cancelInvitationMail(db, id, now);
    await publishEvent(db, { type: 'invites.updated', at: now.toISOString(), org_id: row.org_id });
  });
  return (await findInvitation(deps.pool, id))!;
}

/** A new link (the old one stops working), a new expiry, and a new mail. */
export async function renewInvitationAs(deps: PeopleDeps, caller: CallerUser, id: string): Promise<{ row: InvitationRow; url?: string }> {
  const { row, standing } = await visibleInvitation(deps, caller, id);
  if (!mayManage(standing, row)) throw forbidden('Renewing it takes team.members.manage on every team it leads into.');
  const now = deps.clock.now();
  const token = randomToken(32);
  const expiresAt = new Date(now.getTime() + deps.config.invitationDays * DAY);
  await withTransaction(deps.pool, async (db) => {
    const current = (await findInvitation(db, id, true))!;
    if (current.state !== 'pending') throw closed(current);
    await renewInvitation(db, id, sha256(token), expiresAt, now);
    await cancelInvitationMail(db, id, now);
    await mailLink(deps, db, { id, orgId: row.org_id, email: row.email, teams: row.teams, caller, token, expiresAt });
    await publishEvent(db, { type: 'invites.updated', at: now.toISOString(), org_id: row.org_id });
  });
  return { row: (await findInvitation(deps.pool, id))!, url: deps.config.smtpUrl ? undefined : invitationUrl(deps.config.baseUrl, token) };
}

const closed = (row: InvitationRow) => problem('invitation-closed', 409, `The invitation was ${row.state} already.`);

const linkExpired = (detail: string) => problem('sign-in-link-invalid', 403, detail);

/**
 * Accepts by the link's token. The token never signs in an existing account: an invitation for an address that has
 * an account is accepted only by that account, signed in by its own means (`caller`); the account is made when the
 * address has none (named `name`, else by the address), and only then does the answer sign the person in
 * (`created`). Adds the organization and team memberships and uses the link up.
 */
export async function acceptInvitation(
  deps: PeopleDeps,
  token: string,
  name: string | undefined,
  caller: CallerUser | undefined,
): Promise<{ user: UserRow; row: InvitationRow; created: boolean }> {
  const now = deps.clock.now();
  const result = await withTransaction(deps.pool, async (db) => {
    const row = await findInvitationByToken(db, sha256(token));
    if (!row) throw linkExpired('This invitation link is not valid any more: it was replaced by a newer one, or never existed.');
    if (row.state === 'accepted') throw linkExpired('This invitation link was used already; sign in instead.');
    if (row.state === 'revoked') throw linkExpired('This invitation was revoked; ask for a new one.');
    if (row.expires_at <= now) throw linkExpired('This invitation expired; ask for a new one.');
    let user = await findUserByEmail(db, row.email);
    if (caller && caller.email.toLowerCase() !== row.email.toLowerCase()) throw forAnotherAccount(row.email, caller.email);
    if (user && caller?.id !== user.id) throw needsSignIn(row.email);
    const created = !user;
    if (!user) user = await insertUser(db, { email: row.email, name: name ?? row.email.split('@')[0], passwordHash: null, isAdmin: false, at: now });
    await joinByInvitation(db, row, user.id, now);
    return { user, id: row.id, created };
  });
  return { user: result.user, row: (await findInvitation(deps.pool, result.id))!, created: result.created };
}

const needsSignIn = (email: string) =>
  problem('invitation-needs-sign-in', 401, `This invitation is for the account of ${email}: sign in as ${email} by your usual means, then open the link again.`, {
    extra: { email },
  });

const forAnotherAccount = (email: string, signedIn: string) =>
  problem('invitation-for-another-account', 403, `This invitation is for ${email}, and you are signed in as ${signedIn}: sign out, then open the link again.`, {
    extra: { email },
  });

/** The invitation's memberships for the user, the invitation accepted, and the events saying so. */
export async function joinByInvitation(db: Queryable, row: InvitationRow, userId: number, now: Date): Promise<void> {
  if (row.org_role === 'owner') await upsertOrgMember(db, row.org_id, userId, 'owner', now);
  else await ensureOrgMember(db, row.org_id, userId, now);
  for (const team of row.teams) await upsertTeamMember(db, team.team_id, userId, team.role, now);
  await markInvitationAccepted(db, row.id, userId, now);
  const at = now.toISOString();
  await publishEvent(db, { type: 'invites.updated', at, org_id: row.org_id });
  await publishEvent(db, { type: 'members.updated', at, org_id: row.org_id });
  for (const team of row.teams) await publishEvent(db, { type: 'members.updated', at, team_id: team.team_id, org_id: row.org_id });
  await publishEvent(db, { type: 'access.changed', at, user_id: userId });
}
