// The events table (spec 6): written in the transaction of a change, read once per server by the event fan-out,
// swept after an hour. Also the two reads the fan-out needs to decide who may see what.
import type { Queryable } from './database.ts';

export const EVENTS_CHANNEL = 'svc_events';

export interface NewEventRow {
  at: string;
  type: string;
  teamId: number | null;
  orgId: string | null;
  workspaceId: number | null;
  userId: number | null;
  /** For operation.updated without userId: the operation whose creator also receives the event. */
  operationId: string | null;
  payload: object;
}

export interface EventRow {
  id: number;
  type: string;
  team_id: number | null;
  org_id: string | null;
  user_id: number | null;
  /** The payload as JSON text, ready for `data:` without parsing it first. */
  data: string;
}

/** Inserts the event and sends its id on svc_events; the notification leaves at commit, the row is there by then. */
export async function insertEvent(db: Queryable, event: NewEventRow): Promise<number> {
  const result = await db.query<{ id: number }>(
    `WITH e AS (
       INSERT INTO events (at, type, team_id, org_id, workspace_id, user_id, payload)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::bigint, (SELECT created_by FROM operations WHERE id = $7::uuid)), $8::json)
       RETURNING id)
     SELECT id, pg_notify('${EVENTS_CHANNEL}', id::text) FROM e`,
    [event.at, event.type, event.teamId, event.orgId, event.workspaceId, event.userId, event.operationId, JSON.stringify(event.payload)],
  );
  return result.rows[0].id;
}

export async function findEvents(db: Queryable, ids: readonly number[]): Promise<EventRow[]> {
  return (
    await db.query<EventRow>(
      'SELECT id, type, team_id, org_id, user_id, payload::text AS data FROM events WHERE id = ANY($1::bigint[])',
      [ids],
    )
  ).rows;
}

export async function deleteEventsBefore(db: Queryable, before: Date): Promise<number> {
  return (await db.query('DELETE FROM events WHERE at < $1', [before])).rowCount ?? 0;
}

export interface StandingRow {
  user_id: number;
  is_admin: boolean;
  /** Teams the user belongs to, and every team of an organization they own. */
  team_ids: number[];
  /** Organizations the user is a member of (any role). */
  org_ids: string[];
}

/** What each of `userIds` may see; users that no longer exist are left out (they see nothing). */
export async function loadStandings(db: Queryable, userIds: readonly number[]): Promise<StandingRow[]> {
  const rows = (
    await db.query<{ user_id: number; is_admin: boolean; team_ids: string[]; org_ids: string[] }>(
      `SELECT u.id AS user_id, u.is_admin,
         ARRAY(SELECT m.team_id::text FROM team_members m WHERE m.user_id = u.id
               UNION
               SELECT t.id::text FROM teams t JOIN org_members o ON o.org_id = t.org_id
               WHERE o.user_id = u.id AND o.role = 'owner') AS team_ids,
         ARRAY(SELECT o.org_id::text FROM org_members o WHERE o.user_id = u.id) AS org_ids
       FROM users u WHERE u.id = ANY($1::bigint[])`,
      [userIds],
    )
  ).rows;
  return rows.map((row) => ({ ...row, team_ids: row.team_ids.map(Number) }));
}

/** Those of `userIds` who are members of one of `orgIds`. */
export async function orgMembersAmong(db: Queryable, orgIds: readonly string[], userIds: readonly number[]): Promise<number[]> {
  return (
    await db.query<{ user_id: number }>(
      'SELECT DISTINCT user_id FROM org_members WHERE org_id = ANY($1::uuid[]) AND user_id = ANY($2::bigint[])',
      [orgIds, userIds],
    )
  ).rows.map((row) => row.user_id);
}
