// Workspace actions: sleep, wake, stop, start, soft delete, restore, purge, archive, restore the archive.
// Quick ones answer the workspace; long ones answer 202 with an operation. One operation per workspace at a time.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePermission, type TeamAccess } from '../../auth/access.ts';
import type { TeamPermission } from '../../auth/permissions.ts';
import { problem } from '../../core/problems.ts';
import { enqueueOperation } from '../../operations/queue.ts';
import { withTransaction } from '../../store/database.ts';
import { activeOperationOn } from '../../store/operations.ts';
import { liveWorkspaceNamed, type WorkspaceRow } from '../../store/workspaces.ts';
import type { WorkspaceEvent } from '../../workspaces/lifecycle.ts';
import { busyBlocker, wakeBlocker, type WakeBlocker } from '../../workspaces/wake.ts';
import { refuseOverCapacity, wakeDemand } from '../../capacity/team-capacity.ts';
import { checkTransition } from '../../workspaces/service.ts';
import { sleepWorkspace } from '../../workspaces/sleep.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { requireIfMatch } from '../conventions/etag.ts';
import { IfMatchHeaders } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { WorkspaceParams, WorkspaceSchema } from './workspace-schemas.ts';
import { acceptOperation, viewFor, workspaceAccess, workspaceUrls } from './workspaces.ts';

interface Action {
  path: string;
  method?: 'POST' | 'DELETE';
  summary: string;
  audit: string;
  permission: TeamPermission;
  /** Refuses the request up front when the state machine would refuse the move. */
  check?: (row: WorkspaceRow) => void | Promise<void>;
}

const stateCheck = (event: WorkspaceEvent) => (row: WorkspaceRow) => checkTransition(row, event);
const notArchived = (row: WorkspaceRow) => {
  if (row.archive_sha256) throw problem('conflict', 409, wakeBlocker(row)!.reason);
};

/** Wake blockers of 3.1 answer 503 with Retry-After and the reason, as spec 7 says for a workspace not woken. */
const wakeBlocked = ({ reason, retryAfterSeconds }: WakeBlocker) =>
  problem('wake-blocked', 503, reason, { headers: { 'retry-after': String(retryAfterSeconds) } });

const wakeable = (row: WorkspaceRow) => {
  const blocker = wakeBlocker(row);
  if (blocker && !row.archive_sha256) throw wakeBlocked(blocker);
  notArchived(row);
  stateCheck({ type: 'wake' })(row);
};

async function accessFor(deps: ApiDeps, request: RequestWithParams<{ ws: number }>, action: Action): Promise<{ row: WorkspaceRow; access: TeamAccess }> {
  const found = await workspaceAccess(deps, request);
  requirePermission(found.access.permissions, action.permission);
  await action.check?.(found.row);
  // Its volume is being handed to a new UID (spec 4.7): no action until that is done (a wake answers 503 above).
  if (found.row.before_reown) throw problem('conflict', 409, 'The workspace is busy with its volume (changing its owner); try again when it has finished.');
  // waking or starting it is use (its idle timeout counts from then); putting it to sleep, stopping it or deleting it is not
  if (action.path === 'wake' || action.path === 'start') deps.router.uses.note(found.row.id, { kind: 'action', address: action.path });
  return found;
}

export function registerWorkspaceActionRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const sleepDeps = () => ({ pool: deps.pool, clock: deps.clock, urls: workspaceUrls(deps), driver: deps.driver, stages: deps.stages, gates: deps.gates });

  /** Actions that finish within the request: stopping processes is quick. */
  const immediate = (action: Action, event: Extract<WorkspaceEvent, { type: 'sleep' | 'stop' }>) =>
    app.post(
      `/workspaces/:ws/${action.path}`,
      { config: { access: 'user', audit: action.audit }, schema: { summary: action.summary, tags: ['workspaces'], params: WorkspaceParams, response: { 200: WorkspaceSchema } } },
      async (request) => {
        const { row, access } = await accessFor(deps, request, action);
        // checked again behind the workspace's pod gate, where a sleep or stop that came first has finished
        const saved = await sleepWorkspace(sleepDeps(), row.id, event, { check: action.check });
        deps.router.invalidate(row.id);
        return viewFor(deps, saved, access);
      },
    );

  /** Actions that run as an operation. */
  const queued = (action: Action, kindOf: string | ((row: WorkspaceRow) => string), withIfMatch = false, inputOf: Record<string, unknown> | ((row: WorkspaceRow) => Record<string, unknown>) = {}) => {
    const handler = async (request: FastifyRequest<{ Params: { ws: number } }>, reply: FastifyReply) => {
      const { row } = await accessFor(deps, request, action);
      const kind = typeof kindOf === 'string' ? kindOf : kindOf(row);
      const input = typeof inputOf === 'function' ? inputOf(row) : inputOf;
      if (withIfMatch) requireIfMatch(request, row.version);
      const target = `/workspaces/${row.id}`;
      const operation = await withTransaction(deps.pool, async (db) => {
        const busy = await activeOperationOn(db, target);
        if (busy && kind === 'workspace.wake') throw wakeBlocked(busyBlocker(busy.kind));
        if (busy) throw problem('conflict', 409, `The workspace is busy (${busy.kind}); try again when it has finished.`);
        const user = request.principal!.user.id;
        return enqueueOperation(db, { kind, target, teamId: row.team_id, createdBy: user, input: { workspace_id: row.id, ...input }, at: deps.clock.now() });
      });
      return acceptOperation(reply, operation);
    };
    const options = {
      config: { access: 'user' as const, audit: action.audit },
      schema: { summary: action.summary, tags: ['workspaces'], params: WorkspaceParams, ...(withIfMatch ? { headers: IfMatchHeaders } : {}), response: { 202: OperationSchema } },
    };
    if (action.method === 'DELETE') app.delete(`/workspaces/:ws${action.path}`, options, handler);
    else app.post(`/workspaces/:ws/${action.path}`, options, handler);
  };

  const awake = (row: WorkspaceRow) => {
    if (row.state === 'sleeping') throw problem('conflict', 409, 'The workspace is asleep already.');
    stateCheck({ type: 'sleep', reason: 'by-hand' })(row);
  };
  immediate({ path: 'sleep', summary: 'Put the workspace to sleep (files kept, every process stopped)', audit: 'workspace.sleep', permission: 'workspace.use', check: awake }, { type: 'sleep', reason: 'by-hand' });
  immediate({ path: 'stop', summary: 'Stop the workspace; it does not wake on requests until started', audit: 'workspace.stop', permission: 'workspace.use', check: stateCheck({ type: 'stop' }) }, { type: 'stop' });
  // the team's CPU and memory quotas must hold the workspace awake (409 quota-exceeded with the numbers)
  const fits = (row: WorkspaceRow) => wakeDemand(deps.pool, deps.config.plans, row).then((needed) => refuseOverCapacity(deps.pool, deps.config.plans, row.team_id, needed, 'The workspace', row.id));
  // Retry of a workspace whose clone failed clones again (a workspace.create that starts from an empty volume):
  // it never runs the editor on a volume without its repository.
  const recloned = (row: WorkspaceRow) => row.state === 'error' && !row.source_ready;
  queued(
    { path: 'wake', summary: 'Wake a sleeping workspace, or retry one in Error (an operation; after a failed clone it clones again); 503 with Retry-After when something blocks the wake, 409 when the team quota cannot hold it', audit: 'workspace.wake', permission: 'workspace.use', check: (row) => (wakeable(row), fits(row)) },
    (row) => (recloned(row) ? 'workspace.create' : 'workspace.wake'),
    false,
    (row) => (recloned(row) ? { retry: true } : {}),
  );
  queued({ path: 'start', summary: 'Start a stopped workspace (an operation); 409 when the team quota cannot hold it', audit: 'workspace.start', permission: 'workspace.use', check: (row) => (notArchived(row), stateCheck({ type: 'start' })(row), fits(row)) }, 'workspace.wake', false, { start: true });
  queued({ path: '', method: 'DELETE', summary: 'Delete a workspace; restorable for 7 days (an operation; If-Match required)', audit: 'workspace.delete', permission: 'workspace.delete', check: stateCheck({ type: 'delete' }) }, 'workspace.delete', true);
  const nameFree = async (row: WorkspaceRow) => {
    stateCheck({ type: 'restore' })(row);
    if (await liveWorkspaceNamed(deps.pool, row.team_id, row.name)) {
      throw problem('name-taken', 409, `Another workspace of the team is named "${row.name}"; rename it first.`);
    }
  };
  queued({ path: 'restore', summary: 'Restore a deleted workspace (an operation)', audit: 'workspace.restore', permission: 'workspace.delete', check: nameFree }, 'workspace.restore');
  queued({ path: 'purge', summary: 'Remove a deleted workspace and its files for good (an operation)', audit: 'workspace.purge', permission: 'workspace.delete', check: (row) => { if (!row.deleted_at) throw problem('conflict', 409, 'Only a deleted workspace can be purged; delete it first.'); } }, 'workspace.purge');
  queued({ path: 'archive', summary: 'Pack the volume into the archive store and free it (an operation)', audit: 'workspace.archive', permission: 'workspace.delete', check: (row) => { if (row.deleted_at) throw problem('conflict', 409, 'The workspace is deleted.'); if (row.archive_sha256) throw problem('conflict', 409, 'The workspace is archived already.'); if (['creating', 'cloning'].includes(row.state)) throw problem('conflict', 409, 'The workspace is still being created.'); } }, 'workspace.archive');
  queued({ path: 'restore-archive', summary: 'Refill the volume from its archive while the workspace sleeps (an operation)', audit: 'workspace.restore_archive', permission: 'workspace.delete', check: (row) => { if (!row.archive_sha256) throw problem('conflict', 409, 'The workspace has no archive to restore.'); } }, 'workspace.restore_archive');
}
