// What keeps a workspace awake (issue 40): its recent uses by kind, and keep-awake for background work
// (docs/workspaces.md, "Sleep and what keeps a workspace awake").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { problem } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { withTransaction } from '../../store/database.ts';
import { keepAwakeOf, workspaceUses } from '../../store/workspace-uses.ts';
import { updateWorkspace, type WorkspaceRow } from '../../store/workspaces.ts';
import { activityView, keepAwakeView } from '../../workspaces/activity.ts';
import { activityFactsOf } from '../../workspaces/activity-facts.ts';
import { workspaceView } from '../../workspaces/view.ts';
import type { ApiDeps } from '../context.ts';
import { ActivityReportSchema, KeepAwakeRequestSchema, KeepAwakeSchema } from './activity-schemas.ts';
import { WorkspaceParams } from './workspace-schemas.ts';
import { workspaceAccess, workspaceUrls } from './workspaces.ts';

const tags = ['workspaces'];

/** States in which a keep-awake means something: the idle timeout puts only a running workspace to sleep. */
const keepableStates = new Set(['running', 'waking_up', 'creating', 'cloning']);

async function saveKeepAwake(deps: ApiDeps, row: WorkspaceRow, changes: Pick<WorkspaceRow, 'keep_awake_until' | 'keep_awake_by' | 'keep_awake_asked_at'>): Promise<void> {
  await withTransaction(deps.pool, async (db) => {
    const saved = await updateWorkspace(db, row.id, changes, deps.clock.now());
    if (saved) await publishEvent(db, { type: 'workspace.updated', at: saved.updated_at.toISOString(), team_id: saved.team_id, workspace_id: saved.id, workspace: workspaceView(saved, workspaceUrls(deps)) });
  });
}

export function registerWorkspaceActivityRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/workspaces/:ws/activity',
    { config: { access: 'user' }, schema: { summary: 'What kept the workspace awake and what put it to sleep: its recent uses by kind and address, its keep-awake', tags, params: WorkspaceParams, response: { 200: ActivityReportSchema } } },
    async (request) => {
      const { row } = await workspaceAccess(deps, request);
      const facts = await activityFactsOf(deps, row);
      const now = deps.clock.now();
      const uses = await workspaceUses(deps.pool, row.id);
      return {
        ...activityView(facts, now),
        idle_timeout_minutes: row.idle_timeout_minutes,
        keep_awake: keepAwakeView(facts.keepAwake, now),
        uses: uses.map((use) => ({ kind: use.kind, address: use.address, first_at: use.firstAt.toISOString(), last_at: use.lastAt.toISOString() })),
      };
    },
  );

  app.post(
    '/workspaces/:ws/keep-awake',
    {
      config: { access: 'user', audit: 'workspace.keep_awake' },
      schema: { summary: 'Keep the workspace awake for background work (at most 24 h; asked again, the new one replaces it); who asked is recorded', tags, params: WorkspaceParams, body: KeepAwakeRequestSchema, response: { 200: KeepAwakeSchema } },
    },
    async (request) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'workspace.use');
      if (row.deleted_at) throw problem('conflict', 409, 'The workspace is deleted.');
      if (!keepableStates.has(row.state)) {
        const hint = row.state === 'sleeping' ? ' Wake it first (svc ws wake).' : row.state === 'stopped' ? ' Start it first (svc ws start).' : '';
        throw problem('conflict', 409, `Only a running workspace can be kept awake; this one is ${row.state.replace('_', ' ')}.${hint}`);
      }
      const now = deps.clock.now();
      const user = request.principal!.user;
      const until = new Date(now.getTime() + request.body.for_seconds * 1000);
      await saveKeepAwake(deps, row, { keep_awake_until: until, keep_awake_by: user.id, keep_awake_asked_at: now });
      // asking is use too: the idle timeout counts from now once the keep-awake ends
      deps.router.uses.note(row.id, { kind: 'action', address: 'keep-awake' });
      return { until: until.toISOString(), asked_by: user.id, asked_by_email: user.email, asked_at: now.toISOString() };
    },
  );

  app.delete(
    '/workspaces/:ws/keep-awake',
    {
      config: { access: 'user', audit: 'workspace.keep_awake_end' },
      schema: { summary: "End the workspace's keep-awake: its idle timeout applies again at once", tags, params: WorkspaceParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'workspace.use');
      if (keepAwakeView(await keepAwakeOf(deps.pool, row.id), deps.clock.now()) === undefined) throw problem('not-found', 404, 'The workspace is not kept awake.');
      await saveKeepAwake(deps, row, { keep_awake_until: null, keep_awake_by: null, keep_awake_asked_at: null });
      return reply.code(204).send(null);
    },
  );
}
