// The events table (spec 6): written in the transaction of a change and announced on svc_events, with the event
// itself in the notification when it fits (src/events/feed.ts reads the row otherwise); swept after an hour. Also
// the two reads the fan-out needs to decide who may see what.
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
  workspace_id: number | null;
  user_id: number | null;
  /** The payload as JSON text, ready for `data:` without parsing it first. */
  data: string;
}

/** PostgreSQL refuses a notification payload of 8000 bytes or more (its default build). */
export const NOTIFY_PAYLOAD_LIMIT = 8000;

/**
 * Inserts the event and announces it on svc_events; the notification leaves at commit, the row is there by then.
 * The notification carries the event (encodeNotification) when that is shorter than NOTIFY allows, else the id alone.
 */
export async function insertEvent(db: Queryable, event: NewEventRow): Promise<number> {
  const result = await db.query<{ id: number }>(
    `WITH e AS (
       INSERT INTO events (at, type, team_id, org_id, workspace_id, user_id, payload)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::bigint, (SELECT created_by FROM operations WHERE id = $7::uuid)), $8::json)
       RETURNING id, type, team_id, org_id, workspace_id, user_id, payload::text AS data),
     n AS (
       SELECT id, concat_ws(' ', id, type, COALESCE(team_id::text, '-'), COALESCE(org_id::text, '-'),
                            COALESCE(workspace_id::text, '-'), COALESCE(user_id::text, '-'), data) AS carried
       FROM e)
     SELECT id, pg_notify('${EVENTS_CHANNEL}', CASE WHEN octet_length(carried) < ${NOTIFY_PAYLOAD_LIMIT} THEN carried ELSE id::text END)
     FROM n`,
    [event.at, event.type, event.teamId, event.orgId, event.workspaceId, event.userId, event.operationId, JSON.stringify(event.payload)],
  );
  return result.rows[0].id;
}

/** The text insertEvent's SQL builds: `<id> <type> <team_id> <org_id> <workspace_id> <user_id> <data>`, `-` for none. */
export function encodeNotification(row: EventRow): string {
  const or = (value: number | string | null) => (value === null ? '-' : String(value));
  return `${row.id} ${row.type} ${or(row.team_id)} ${or(row.org_id)} ${or(row.workspace_id)} ${or(row.user_id)} ${row.data}`;
}

/**
 * A notification of svc_events: the event it carries, the id of a row to read (an event too large to carry), or
 * undefined when it is neither.
 */
export function decodeNotification(payload: string): EventRow | number | undefined {
  const fields: string[] = [];
  let from = 0;
  for (let i = 0; i < 6; i++) {
    const space = payload.indexOf(' ', from);
    if (space < 0) {
      if (i > 0) return undefined;
      const id = Number(payload);
      return /^[0-9]+$/.test(payload) && Number.isSafeInteger(id) && id > 0 ? id : undefined;
    }
    fields.push(payload.slice(from, space));
    from = space + 1;
  }
  const [id, type, team, org, workspace, user] = fields;
  const number = (text: string) => (text === '-' ? null : /^[0-9]+$/.test(text) ? Number(text) : NaN);
  const row: EventRow = {
    id: Number(id),
    type,
    team_id: number(team),
    org_id: org === '-' ? null : org,
    workspace_id: number(workspace),
    user_id: number(user),
    data: payload.slice(from),
  };
  const ids = [row.id, row.team_id, row.workspace_id, row.user_id];
  if (!/^[0-9]+$/.test(id) || !row.type || ids.some((n) => Number.isNaN(n)) || !row.data.startsWith('{')) return undefined;
  return row;
}

export async function findEvents(db: Queryable, ids: readonly number[]): Promise<EventRow[]> {
  return (
    await db.query<EventRow>(
      'SELECT id, type, team_id, org_id, workspace_id, user_id, payload::text AS data FROM events WHERE id = ANY($1::bigint[])',
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
