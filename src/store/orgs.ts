import type { Queryable } from './database.ts';

export type OrgRole = 'owner' | 'member';

export interface OrgRow {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
  version: number;
}

export interface MemberRow {
  user_id: number;
  email: string;
  name: string;
  role: string;
  created_at: Date;
}

const columns = 'o.id, o.name, o.created_at, o.updated_at, o.version';

export async function insertOrg(db: Queryable, org: { id: string; name: string; ownerId: number; at: Date }): Promise<OrgRow> {
  const row = (
    await db.query<OrgRow>(
      'INSERT INTO orgs AS o (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING ' + columns,
      [org.id, org.name, org.at],
    )
  ).rows[0];
  await db.query("INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)", [
    org.id,
    org.ownerId,
    org.at,
  ]);
  return row;
}

export async function findOrg(db: Queryable, id: string): Promise<OrgRow | undefined> {
  return (await db.query<OrgRow>(`SELECT ${columns} FROM orgs o WHERE o.id = $1`, [id])).rows[0];
}

/** Orgs in name order after `afterName`/`afterId`: all of them for `everything`, else those the user belongs to. */
export async function listOrgs(
  db: Queryable,
  userId: number,
  everything: boolean,
  after: { name: string; id: string } | undefined,
  limit: number,
): Promise<OrgRow[]> {
  const visible = everything ? '$1::bigint > 0' : 'EXISTS (SELECT 1 FROM org_members m WHERE m.org_id = o.id AND m.user_id = $1)';
  const position = after ? 'AND (lower(o.name), o.id) > (lower($3), $4::uuid)' : '';
  const params: unknown[] = [userId, limit + 1];
  if (after) params.push(after.name, after.id);
  const sql = `SELECT ${columns} FROM orgs o WHERE ${visible} ${position} ORDER BY lower(o.name), o.id LIMIT $2`;
  return (await db.query<OrgRow>(sql, params)).rows;
}

/** Renames when `version` is current; undefined when the version moved on. */
export async function renameOrg(db: Queryable, id: string, name: string, version: number, at: Date): Promise<OrgRow | undefined> {
  return (
    await db.query<OrgRow>(
      `UPDATE orgs o SET name = $2, updated_at = $4, version = version + 1 WHERE id = $1 AND version = $3 RETURNING ${columns}`,
      [id, name, version, at],
    )
  ).rows[0];
}

export async function deleteOrg(db: Queryable, id: string, version: number): Promise<boolean> {
  return ((await db.query('DELETE FROM orgs WHERE id = $1 AND version = $2', [id, version])).rowCount ?? 0) > 0;
}

export async function countOrgTeams(db: Queryable, id: string): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM teams WHERE org_id = $1', [id])).rows[0].n;
}

export async function orgRole(db: Queryable, orgId: string, userId: number): Promise<OrgRole | undefined> {
  return (
    await db.query<{ role: OrgRole }>('SELECT role FROM org_members WHERE org_id = $1 AND user_id = $2', [orgId, userId])
  ).rows[0]?.role;
}

export async function listOrgMembers(db: Queryable, orgId: string, afterUserId: number, limit: number): Promise<MemberRow[]> {
  return (
    await db.query<MemberRow>(
      `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM org_members m JOIN users u ON u.id = m.user_id
       WHERE m.org_id = $1 AND m.user_id > $2 ORDER BY m.user_id LIMIT $3`,
      [orgId, afterUserId, limit + 1],
    )
  ).rows;
}

export async function upsertOrgMember(db: Queryable, orgId: string, userId: number, role: OrgRole, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role, source = 'manual'`,
    [orgId, userId, role, at],
  );
}

/** Adds the user as a plain member unless already in the org. */
export async function ensureOrgMember(db: Queryable, orgId: string, userId: number, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, 'member', $3) ON CONFLICT DO NOTHING`,
    [orgId, userId, at],
  );
}

/** Removes the user from the org and from every team of it. */
export async function removeOrgMember(db: Queryable, orgId: string, userId: number): Promise<boolean> {
  await db.query('DELETE FROM team_members WHERE user_id = $2 AND team_id IN (SELECT id FROM teams WHERE org_id = $1)', [
    orgId,
    userId,
  ]);
  return ((await db.query('DELETE FROM org_members WHERE org_id = $1 AND user_id = $2', [orgId, userId])).rowCount ?? 0) > 0;
}

/** Locks the org's owner rows and counts them, so two concurrent demotions cannot leave no owner. */
export async function lockAndCountOwners(db: Queryable, orgId: string): Promise<number> {
  const rows = await db.query("SELECT user_id FROM org_members WHERE org_id = $1 AND role = 'owner' FOR UPDATE", [orgId]);
  return rows.rowCount ?? 0;
}

export async function orgTeamIds(db: Queryable, orgId: string): Promise<number[]> {
  return (await db.query<{ id: number }>('SELECT id FROM teams WHERE org_id = $1', [orgId])).rows.map((r) => r.id);
}
