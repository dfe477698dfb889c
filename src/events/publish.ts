// Events leave the store as a row of `events` plus NOTIFY svc_events carrying the event (its id alone when too large),
// in the transaction of the change (sent at commit, gone with a rollback). The event stream (GET /events) fans them
// out to those allowed to see them.
import type { Queryable } from '../store/database.ts';
import { deleteEventsBefore, insertEvent } from '../store/events.ts';

export { EVENTS_CHANNEL } from '../store/events.ts';

/** Every event type of spec 6 except `ready`, which the stream itself sends. */
export const eventTypes = [
  'workspace.created',
  'workspace.updated',
  'workspace.deleted',
  'workspace.restored',
  'workspace.purged',
  'operation.updated',
  'landscape.updated',
  'stage.updated',
  'managed_service.updated',
  'org.updated',
  'org.deleted',
  'team.created',
  'team.updated',
  'team.deleted',
  'members.updated',
  'invites.updated',
  'owner_transfers.updated',
  'access.changed',
  'domain.updated',
] as const;

export type EventType = (typeof eventTypes)[number];

export type StageName = 'prepare' | 'test' | 'run';

/**
 * An event of spec 6. Visibility follows from the ids it carries: `team_id` (those who can view the team),
 * `org_id` without `team_id` (members of the org), `user_id` (that user as well; for access.changed only them).
 */
export interface PlatformEvent {
  type: EventType;
  at: string;
  team_id?: number;
  workspace_id?: number;
  /** The full workspace (workspace.created, .updated, .deleted, .restored). */
  workspace?: object;
  /** The full operation (operation.updated); its creator receives the event besides the team. */
  operation?: { id: string };
  stage?: StageName;
  run_id?: number;
  managed_service_id?: string;
  org_id?: string;
  domain_id?: string;
  /**
   * A user who receives the event besides those who see it through team_id or org_id: for access.changed the only
   * recipient, for owner_transfers.updated the user it is offered to. Not sent to clients.
   */
  user_id?: number;
}

/** Old rows are of no use: there is no replay, and every server reads a row within moments of its commit. */
export const EVENT_RETENTION_MS = 60 * 60_000;

export async function publishEvent(db: Queryable, event: PlatformEvent): Promise<void> {
  const { user_id: userId, ...payload } = event;
  await insertEvent(db, {
    at: event.at,
    type: event.type,
    teamId: event.team_id ?? null,
    orgId: event.org_id ?? null,
    workspaceId: event.workspace_id ?? null,
    userId: userId ?? null,
    operationId: event.type === 'operation.updated' ? (event.operation?.id ?? null) : null,
    payload,
  });
}

/** Housekeeping: deletes events older than the retention; answers how many went. */
export async function sweepEvents(db: Queryable, now: Date): Promise<number> {
  return deleteEventsBefore(db, new Date(now.getTime() - EVENT_RETENTION_MS));
}
