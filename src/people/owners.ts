// Owners who leave (spec 2.3 needs_owner): when a workspace's owner leaves its team or is removed from it (or from
// the organization), the workspace needs an owner until a transfer is accepted; a team admin then offers it to a
// member (or to themselves). Transfers still offered to the person who left are cancelled.
import { publishEvent } from '../events/publish.ts';
import type { Queryable } from '../store/database.ts';
import { cancelTransfersTo } from '../store/owner-transfers.ts';
import { markNeedsOwner } from '../store/workspaces.ts';
import { workspaceView, type WorkspaceUrls } from '../workspaces/view.ts';
import { announceTransfer } from './transfers.ts';

/** In the transaction that removed `userId` from `teamIds`. */
export async function ownerLeft(db: Queryable, input: { userId: number; teamIds: number[]; at: Date; urls: WorkspaceUrls }): Promise<void> {
  if (input.teamIds.length === 0) return;
  const at = input.at.toISOString();
  for (const row of await markNeedsOwner(db, input.userId, input.teamIds, input.at)) {
    await publishEvent(db, { type: 'workspace.updated', at, team_id: row.team_id, workspace_id: row.id, workspace: workspaceView(row, input.urls) });
    await publishEvent(db, { type: 'members.updated', at, team_id: row.team_id, workspace_id: row.id });
  }
  for (const transfer of await cancelTransfersTo(db, input.userId, input.teamIds, input.at)) await announceTransfer(db, transfer, input.at);
}
