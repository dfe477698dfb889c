// Ownership transfers of a workspace (spec 2.3 owner_id, 4.10): the owner or a team admin offers it to a member of
// its team; that person accepts or declines; the offerer (or the owner, or a team admin) cancels. Each step emits
// owner_transfers.updated to those who can view the workspace and to the person it is offered to. An owner who
// leaves the team leaves their workspaces needing an owner until a transfer is accepted.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { teamAccess } from '../auth/access.ts';
import type { CallerUser } from '../auth/credentials.ts';
import type { Clock } from '../core/clock.ts';
import { forbidden, notFound, problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import { isUniqueViolation, withTransaction, type Queryable } from '../store/database.ts';
import { closeTransfer, findOpenTransfer, findTransfer, insertTransfer, type TransferRow, type TransferState } from '../store/owner-transfers.ts';
import { orgRole } from '../store/orgs.ts';
import { findTeam, teamRole } from '../store/teams.ts';
import { findUserById } from '../store/users.ts';
import { findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { workspaceUrlsFromBase, workspaceView } from '../workspaces/view.ts';

export interface TransferDeps {
  pool: pg.Pool;
  clock: Clock;
  config: { baseUrl: string; workspaceDomain: string };
}

/** Whether the user belongs to the team: a role in it, or an owner of its organization (who acts as its admin). */
export async function isTeamMember(db: Queryable, teamId: number, userId: number): Promise<boolean> {
  if (await teamRole(db, teamId, userId)) return true;
  const team = await findTeam(db, teamId);
  return team !== undefined && (await orgRole(db, team.org_id, userId)) === 'owner';
}

/** owner_transfers.updated: to the team's viewers (workspace.view) and to the person it is offered to. */
export async function announceTransfer(db: Queryable, row: TransferRow, at: Date): Promise<void> {
  await publishEvent(db, { type: 'owner_transfers.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.workspace_id, user_id: row.to_user_id });
}

/** The workspace and what the caller may do on its team; 404 when they cannot view it or it is deleted. */
async function viewableWorkspace(db: Queryable, caller: CallerUser, workspaceId: number): Promise<{ row: WorkspaceRow; manages: boolean }> {
  const row = await findWorkspace(db, workspaceId);
  if (!row || row.deleted_at) throw notFound('workspace');
  const access = await teamAccess(db, caller, row.team_id).catch(() => {
    throw notFound('workspace');
  });
  if (!access.permissions.includes('workspace.view')) throw notFound('workspace');
  return { row, manages: access.permissions.includes('team.members.manage') };
}

export async function offerTransfer(deps: TransferDeps, caller: CallerUser, workspaceId: number, toUserId: number): Promise<TransferRow> {
  const { row, manages } = await viewableWorkspace(deps.pool, caller, workspaceId);
  const owns = row.owner_id === caller.id && !row.needs_owner;
  if (!owns && !manages) throw forbidden('Only the owner of the workspace or an admin of its team can offer it.');
  const target = await findUserById(deps.pool, toUserId);
  if (!target || !(await isTeamMember(deps.pool, row.team_id, toUserId))) {
    throw problem('not-a-member', 422, `User ${toUserId} is not a member of the workspace's team; add them to the team first.`, {
      errors: [{ pointer: '/to_user_id', message: 'is not a member of the team' }],
    });
  }
  if (toUserId === row.owner_id && !row.needs_owner) {
    throw problem('validation', 422, 'They own the workspace already.', { errors: [{ pointer: '/to_user_id', message: 'owns the workspace already' }] });
  }
  const now = deps.clock.now();
  try {
    return await withTransaction(deps.pool, async (db) => {
      const transfer = await insertTransfer(db, { id: randomUUID(), workspaceId, teamId: row.team_id, fromUserId: row.owner_id, offeredBy: caller.id, toUserId, at: now });
      await announceTransfer(db, transfer, now);
      return transfer;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const open = await findOpenTransfer(deps.pool, workspaceId);
    throw problem('transfer-open', 409, 'The workspace has an open ownership transfer; cancel it first.', { extra: open ? { transfer_id: open.id } : {} });
  }
}

/** A transfer the caller may see: offered to them, or of a workspace they can view. 404 otherwise. */
export async function visibleTransfer(deps: TransferDeps, caller: CallerUser, id: string): Promise<TransferRow> {
  const row = await findTransfer(deps.pool, id);
  if (!row) throw notFound('owner transfer');
  if (row.to_user_id === caller.id) return row;
  await viewableWorkspace(deps.pool, caller, row.workspace_id).catch(() => {
    throw notFound('owner transfer');
  });
  return row;
}

const closedProblem = (state: TransferState) => problem('transfer-closed', 409, `The transfer was ${state} already.`);

/** Accepting makes the person the owner: the workspace's version (its ETag) moves, and needs_owner ends. */
export async function acceptTransfer(deps: TransferDeps, caller: CallerUser, id: string): Promise<TransferRow> {
  const offered = await findTransfer(deps.pool, id);
  if (!offered || offered.to_user_id !== caller.id) throw notFound('owner transfer');
  if (offered.state !== 'open') throw closedProblem(offered.state);
  if (!(await isTeamMember(deps.pool, offered.team_id, caller.id))) {
    throw problem('not-a-member', 409, "You are no longer a member of the workspace's team.");
  }
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const workspace = await findWorkspace(db, offered.workspace_id, true);
    if (!workspace || workspace.deleted_at) throw notFound('workspace');
    const accepted = await closeTransfer(db, id, 'accepted', caller.id, now);
    if (!accepted) throw closedProblem((await findTransfer(db, id))!.state);
    const updated = (await updateWorkspace(db, workspace.id, { owner_id: caller.id, needs_owner: false }, now))!;
    const at = now.toISOString();
    await announceTransfer(db, accepted, now);
    const urls = workspaceUrlsFromBase(deps.config.baseUrl, deps.config.workspaceDomain);
    await publishEvent(db, { type: 'workspace.updated', at, team_id: updated.team_id, workspace_id: updated.id, workspace: workspaceView(updated, urls) });
    await publishEvent(db, { type: 'members.updated', at, team_id: updated.team_id, workspace_id: updated.id });
    return accepted;
  });
}

export async function declineTransfer(deps: TransferDeps, caller: CallerUser, id: string): Promise<TransferRow> {
  const offered = await findTransfer(deps.pool, id);
  if (!offered || offered.to_user_id !== caller.id) throw notFound('owner transfer');
  return close(deps, offered, 'declined', caller.id);
}

/** The offerer, the workspace's owner, or an admin of its team cancels; others who can see it get 403. */
export async function cancelTransfer(deps: TransferDeps, caller: CallerUser, id: string): Promise<TransferRow> {
  const row = await visibleTransfer(deps, caller, id);
  if (row.offered_by !== caller.id) {
    const { row: workspace, manages } = await viewableWorkspace(deps.pool, caller, row.workspace_id);
    if (!manages && workspace.owner_id !== caller.id) throw forbidden('Only the offerer, the owner or an admin of the team can cancel it.');
  }
  return close(deps, row, 'cancelled', caller.id);
}

async function close(deps: TransferDeps, row: TransferRow, state: 'declined' | 'cancelled', by: number): Promise<TransferRow> {
  if (row.state !== 'open') throw closedProblem(row.state);
  const now = deps.clock.now();
  return withTransaction(deps.pool, async (db) => {
    const closed = await closeTransfer(db, row.id, state, by, now);
    if (!closed) throw closedProblem((await findTransfer(db, row.id))!.state);
    await announceTransfer(db, closed, now);
    return closed;
  });
}
