// operation_timelines (migration 061): one timeline per operation that records one, saved while it runs.
import type { StoredTimeline } from '../operations/timeline-view.ts';
import type { Queryable } from './database.ts';
import type { OperationRow } from './operations.ts';

/** Saves the timeline; false when the operation is gone (purged meanwhile). */
export async function saveOperationTimeline(db: Queryable, operationId: string, timeline: StoredTimeline, at: Date): Promise<boolean> {
  const result = await db.query(
    `INSERT INTO operation_timelines (operation_id, timeline, updated_at) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM operations WHERE id = $1)
     ON CONFLICT (operation_id) DO UPDATE SET timeline = EXCLUDED.timeline, updated_at = EXCLUDED.updated_at`,
    [operationId, timeline, at],
  );
  return (result.rowCount ?? 0) > 0;
}

export async function findOperationTimeline(db: Queryable, operationId: string): Promise<StoredTimeline | undefined> {
  return (await db.query<{ timeline: StoredTimeline }>('SELECT timeline FROM operation_timelines WHERE operation_id = $1', [operationId])).rows[0]?.timeline;
}

/** The operation kinds whose phases are recorded (a start is a workspace.wake). */
export const TIMED_KINDS = ['workspace.create', 'workspace.wake', 'landscape.sync'];

/** The workspace's latest operation with a timeline among `TIMED_KINDS`. */
export async function latestTimedOperation(db: Queryable, workspaceId: number): Promise<Pick<OperationRow, 'id'> | undefined> {
  return (
    await db.query<{ id: string }>(
      `SELECT o.id FROM operations o JOIN operation_timelines t ON t.operation_id = o.id
       WHERE o.target = $1 AND o.kind = ANY($2) ORDER BY o.created_at DESC, o.queued_wall_at DESC NULLS LAST LIMIT 1`,
      [`/workspaces/${workspaceId}`, TIMED_KINDS],
    )
  ).rows[0];
}
