// The callers of the workspace list tests: an org owner, a developer of team A (and member of the org), a viewer
// of team B, a stranger and an administrator; teams A, B and an empty C.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { insertOrg, upsertOrgMember } from '../../src/store/orgs.ts';
import { insertTeam, upsertTeamMember } from '../../src/store/teams.ts';
import { insertUser } from '../../src/store/users.ts';

export interface ListCallers {
  owner: number;
  developer: number;
  viewer: number;
  stranger: number;
  admin: number;
  team: number;
  other: number;
  empty: number;
}

export async function insertListCallers(pool: pg.Pool, at: Date): Promise<ListCallers> {
  const user = async (email: string, isAdmin = false) => (await insertUser(pool, { email, name: email, passwordHash: null, isAdmin, at })).id;
  const owner = await user('owner@example.com');
  const developer = await user('dev@example.com');
  const viewer = await user('viewer@example.com');
  const stranger = await user('stranger@example.com');
  const admin = await user('admin@example.com', true);
  const org = await insertOrg(pool, { id: randomUUID(), name: 'Org', ownerId: owner, at });
  const team = (await insertTeam(pool, { orgId: org.id, name: 'A', at })).id;
  const other = (await insertTeam(pool, { orgId: org.id, name: 'B', at })).id;
  const empty = (await insertTeam(pool, { orgId: org.id, name: 'C', at })).id;
  await upsertOrgMember(pool, org.id, developer, 'member', at);
  await upsertTeamMember(pool, team, developer, 'developer', at);
  await upsertTeamMember(pool, other, viewer, 'viewer', at);
  return { owner, developer, viewer, stranger, admin, team, other, empty };
}
