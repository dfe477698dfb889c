// The caller's standing on an org or team, read from the store, turned into permissions.
// Invisible objects are 404 (not told apart from missing ones); visible but not allowed is 403.
import { forbidden, notFound } from '../core/problems.ts';
import type { Queryable } from '../store/database.ts';
import { findOrg, orgRole, type OrgRow } from '../store/orgs.ts';
import { findTeam, teamRole, teamStandings, type TeamRow } from '../store/teams.ts';
import type { CallerUser } from './credentials.ts';
import { orgPermissions, teamPermissions, type OrgPermission, type OrgRole, type TeamPermission, type TeamRole } from './permissions.ts';

export interface OrgAccess {
  org: OrgRow;
  role?: OrgRole;
  permissions: OrgPermission[];
}

export interface TeamAccess {
  team: TeamRow;
  role?: TeamRole;
  permissions: TeamPermission[];
}

export async function orgAccess(db: Queryable, user: CallerUser, orgId: string): Promise<OrgAccess> {
  const org = await findOrg(db, orgId);
  if (!org) throw notFound('organization');
  const role = await orgRole(db, orgId, user.id);
  const permissions = orgPermissions({ isAdmin: user.isAdmin, orgRole: role });
  if (permissions.length === 0) throw notFound('organization');
  return { org, role, permissions };
}

export async function teamAccess(db: Queryable, user: CallerUser, teamId: number): Promise<TeamAccess> {
  const team = await findTeam(db, teamId);
  if (!team) throw notFound('team');
  const [role, ownerRole] = await Promise.all([teamRole(db, teamId, user.id), orgRole(db, team.org_id, user.id)]);
  const permissions = teamPermissions({ isAdmin: user.isAdmin, orgRole: ownerRole, teamRole: role });
  if (permissions.length === 0) throw notFound('team');
  return { team, role, permissions };
}

/**
 * The caller's access to many teams in one query (a page of workspaces of several teams): the teams `teamIds`
 * names, or (null) every team the caller belongs to or whose org they own. Teams the caller may not see are left out.
 */
export async function teamAccesses(db: Queryable, user: CallerUser, teamIds: number[] | null): Promise<Map<number, TeamAccess>> {
  const accesses = new Map<number, TeamAccess>();
  for (const { team_role, org_role, ...team } of await teamStandings(db, user.id, teamIds)) {
    const role = team_role ?? undefined;
    const permissions = teamPermissions({ isAdmin: user.isAdmin, orgRole: org_role ?? undefined, teamRole: role });
    if (permissions.length > 0) accesses.set(team.id, { team, role, permissions });
  }
  return accesses;
}

export function requirePermission<P extends string>(held: readonly P[], needed: P): void {
  if (!held.includes(needed)) throw forbidden(`Your role does not allow ${needed}.`);
}
