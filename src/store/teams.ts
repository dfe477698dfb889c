import type { Queryable } from './database.ts';
import type { MemberRow, OrgRole } from './orgs.ts';

export type TeamRole = 'admin' | 'developer' | 'viewer';

export interface TeamRow {
  id: number;
  org_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
  version: number;
}

const columns = 't.id, t.org_id, t.name, t.created_at, t.updated_at, t.version';

export async function insertTeam(db: Queryable, team: { orgId: string; name: string; at: Date }): Promise<TeamRow> {
  return (
    await db.query<TeamRow>(
      `INSERT INTO teams AS t (org_id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING ${columns}`,
      [team.orgId, team.name, team.at],
    )
  ).rows[0];
}

export async function findTeam(db: Queryable, id: number): Promise<TeamRow | undefined> {
  return (await db.query<TeamRow>(`SELECT ${columns} FROM teams t WHERE t.id = $1`, [id])).rows[0];
}

/**
 * Teams in id order that the user can see: all for `everything`, else teams they belong to and every team of
 * an org they own. `orgId` narrows to one org.
 */
export async function listTeams(
  db: Queryable,
  filter: { userId: number; everything: boolean; orgId?: string },
  afterId: number,
  limit: number,
): Promise<TeamRow[]> {
  const visible = filter.everything
    ? '$1::bigint > 0'
    : `(EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = t.id AND m.user_id = $1)
        OR EXISTS (SELECT 1 FROM org_members o WHERE o.org_id = t.org_id AND o.user_id = $1 AND o.role = 'owner'))`;
  const byOrg = filter.orgId ? 'AND t.org_id = $4::uuid' : '';
  const params: unknown[] = [filter.userId, afterId, limit + 1];
  if (filter.orgId) params.push(filter.orgId);
  return (
    await db.query<TeamRow>(
      `SELECT ${columns} FROM teams t WHERE ${visible} AND t.id > $2 ${byOrg} ORDER BY t.id LIMIT $3`,
      params,
    )
  ).rows;
}

export async function renameTeam(db: Queryable, id: number, name: string, version: number, at: Date): Promise<TeamRow | undefined> {
  return (
    await db.query<TeamRow>(
      `UPDATE teams t SET name = $2, updated_at = $4, version = version + 1 WHERE id = $1 AND version = $3 RETURNING ${columns}`,
      [id, name, version, at],
    )
  ).rows[0];
}

export async function deleteTeam(db: Queryable, id: number, version: number): Promise<boolean> {
  return ((await db.query('DELETE FROM teams WHERE id = $1 AND version = $2', [id, version])).rowCount ?? 0) > 0;
}

export interface TeamStanding extends TeamRow {
  team_role: TeamRole | null;
  org_role: OrgRole | null;
}

const standings = `SELECT ${columns}, tm.role AS team_role, om.role AS org_role FROM teams t
  LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $1
  LEFT JOIN org_members om ON om.org_id = t.org_id AND om.user_id = $1`;
// Named statements (a list page's first query): each pooled connection parses and plans them once (generic plans).
const STANDINGS_OF_MEMBER = { name: 'team-standings-of-member', text: `${standings} WHERE tm.user_id IS NOT NULL OR om.role = 'owner'` };
const STANDINGS_ON_TEAMS = { name: 'team-standings-on-teams', text: `${standings} WHERE t.id = ANY($2::bigint[])` };

/**
 * Teams with the user's roles on each (of the team, of its org), in one query: the teams `teamIds` names that
 * exist, or (null) every team the user belongs to or whose org they own.
 */
export async function teamStandings(db: Queryable, userId: number, teamIds: number[] | null): Promise<TeamStanding[]> {
  const query = teamIds === null
    ? { ...STANDINGS_OF_MEMBER, values: [userId] }
    : { ...STANDINGS_ON_TEAMS, values: [userId, teamIds] };
  return (await db.query<TeamStanding>(query)).rows;
}

export async function teamRole(db: Queryable, teamId: number, userId: number): Promise<TeamRole | undefined> {
  return (
    await db.query<{ role: TeamRole }>('SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2', [teamId, userId])
  ).rows[0]?.role;
}

export async function listTeamMembers(db: Queryable, teamId: number, afterUserId: number, limit: number): Promise<MemberRow[]> {
  return (
    await db.query<MemberRow>(
      `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM team_members m JOIN users u ON u.id = m.user_id
       WHERE m.team_id = $1 AND m.user_id > $2 ORDER BY m.user_id LIMIT $3`,
      [teamId, afterUserId, limit + 1],
    )
  ).rows;
}

export async function upsertTeamMember(db: Queryable, teamId: number, userId: number, role: TeamRole, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (team_id, user_id) DO UPDATE SET role = EXCLUDED.role, source = 'manual'`,
    [teamId, userId, role, at],
  );
}

export async function removeTeamMember(db: Queryable, teamId: number, userId: number): Promise<boolean> {
  return ((await db.query('DELETE FROM team_members WHERE team_id = $1 AND user_id = $2', [teamId, userId])).rowCount ?? 0) > 0;
}

/** Ids of the teams the user can see: their own teams and every team of an org they own. */
export async function visibleTeamIds(db: Queryable, userId: number): Promise<number[]> {
  return (
    await db.query<{ id: number }>(
      `SELECT team_id AS id FROM team_members WHERE user_id = $1
       UNION SELECT t.id FROM teams t JOIN org_members o ON o.org_id = t.org_id WHERE o.user_id = $1 AND o.role = 'owner'`,
      [userId],
    )
  ).rows.map((r) => r.id);
}

/** Whether a cluster administrator allowed the team's `container` services `runAsUser` (spec 2.8). */
export async function teamRunAsUserAllowed(db: Queryable, teamId: number): Promise<boolean> {
  return (await db.query<{ allowed: boolean }>('SELECT run_as_user_allowed AS allowed FROM teams WHERE id = $1', [teamId])).rows[0]?.allowed ?? false;
}

/** Sets it; undefined when the team is gone. The team's version moves (its ETag), as for a rename. */
export async function setTeamRunAsUserAllowed(db: Queryable, teamId: number, allowed: boolean, at: Date): Promise<TeamRow | undefined> {
  return (
    await db.query<TeamRow>(
      `UPDATE teams t SET run_as_user_allowed = $2, updated_at = $3, version = version + 1 WHERE id = $1 RETURNING ${columns}`,
      [teamId, allowed, at],
    )
  ).rows[0];
}

/** The team's egress setting (docs/runtime.md, "The pod network"); undefined when the team is gone. */
export async function teamEgress(db: Queryable, teamId: number): Promise<'on' | 'off' | undefined> {
  return (await db.query<{ egress: 'on' | 'off' }>('SELECT egress FROM teams WHERE id = $1', [teamId])).rows[0]?.egress;
}

/** Sets it (its workspaces' rows follow, migration 044); undefined when the team is gone. The team's version moves. */
export async function setTeamEgress(db: Queryable, teamId: number, egress: 'on' | 'off', at: Date): Promise<TeamRow | undefined> {
  return (
    await db.query<TeamRow>(`UPDATE teams t SET egress = $2, updated_at = $3, version = version + 1 WHERE id = $1 RETURNING ${columns}`, [teamId, egress, at])
  ).rows[0];
}

export interface TeamQuotaRow {
  cpu_quota_millis: number;
  memory_quota_mib: number;
  storage_quota_gib: number;
}

export async function teamQuota(db: Queryable, teamId: number): Promise<TeamQuotaRow | undefined> {
  return (await db.query<TeamQuotaRow>('SELECT cpu_quota_millis, memory_quota_mib, storage_quota_gib FROM teams WHERE id = $1', [teamId])).rows[0];
}

/** Sets the team's quotas; undefined when the team is gone. The team's version moves (its ETag). */
export async function setTeamQuota(db: Queryable, teamId: number, quota: TeamQuotaRow, at: Date): Promise<TeamRow | undefined> {
  return (
    await db.query<TeamRow>(
      `UPDATE teams t SET cpu_quota_millis = $2, memory_quota_mib = $3, storage_quota_gib = $4, updated_at = $5, version = version + 1
       WHERE id = $1 RETURNING ${columns}`,
      [teamId, quota.cpu_quota_millis, quota.memory_quota_mib, quota.storage_quota_gib, at],
    )
  ).rows[0];
}
