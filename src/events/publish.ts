// Events leave the store as NOTIFY svc_events in the transaction of the change (sent at commit).
// The event stream (GET /events) fans them out to the callers allowed to see them.
import type { Queryable } from '../store/database.ts';

export type EventType =
  | 'org.updated'
  | 'org.deleted'
  | 'team.created'
  | 'team.updated'
  | 'team.deleted'
  | 'members.updated'
  | 'access.changed';

export interface PlatformEvent {
  type: EventType;
  at: string;
  team_id?: number;
  org_id?: string;
  workspace_id?: number;
  /** For access.changed: the only user it is sent to. */
  user_id?: number;
}

export const EVENTS_CHANNEL = 'svc_events';

export async function publishEvent(db: Queryable, event: PlatformEvent): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, JSON.stringify(event)]);
}
