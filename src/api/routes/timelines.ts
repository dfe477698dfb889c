// Operation timelines (issue 40): where the time of a create, start, wake or Sync went, phase by phase, readable
// while it runs. GET /operations/{id}/timeline for any operation that recorded one; GET /workspaces/{ws}/timings
// for a workspace's latest (or a given) one.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { wallClockMs } from '../../core/phases.ts';
import { notFound, problem } from '../../core/problems.ts';
import { timelineView } from '../../operations/timeline-view.ts';
import { findOperationTimeline, latestTimedOperation } from '../../store/operation-timelines.ts';
import { findOperation, type OperationRow } from '../../store/operations.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, Id, StringEnum, Uuid } from '../schemas.ts';
import { readableOperation } from './operations.ts';
import { workspaceAccess } from './workspaces.ts';

const PhaseSchema = Type.Object({
  name: Type.String({ description: 'e.g. queue and claim, volume, clone, base image, networks, agent start, editor start, web healthy' }),
  beside: Type.Boolean({ description: 'ran beside the operation\'s line of phases (a service\'s start and first healthy answer) rather than on it' }),
  state: StringEnum(['done', 'running', 'failed']),
  started_at: DateTime,
  offset_ms: Type.Integer({ minimum: 0, description: 'from the moment the operation was queued' }),
  duration_ms: Type.Integer({ minimum: 0, description: 'a running phase: so far' }),
  detail: Type.Optional(Type.String({ description: 'what it did, e.g. cloned https://example.com/repo.git (12 MB on the volume)' })),
  summary: Type.String({ description: 'what it did and how long it took, e.g. pulling 1.2 GB of image layers: 40 s' }),
});

export const TimelineSchema = Type.Object({
  operation_id: Uuid,
  kind: Type.String({ description: 'workspace.create, workspace.wake (a start too) or landscape.sync' }),
  operation_state: StringEnum(['pending', 'running', 'succeeded', 'failed']),
  started_at: DateTime,
  wall_ms: Type.Integer({ minimum: 0, description: 'the operation\'s time from queued to finished (or now)' }),
  phases_ms: Type.Integer({ minimum: 0, description: 'the phases on the line together; they add up to wall_ms' }),
  phases: Type.Array(PhaseSchema, { description: 'by start' }),
});

const TimingsQuery = Type.Object({
  op: Type.Optional(Type.String({ format: 'uuid', description: 'an operation of the workspace; default: its latest create, start, wake or Sync' })),
});

export function registerTimelineRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const viewOf = async (row: OperationRow) => {
    const stored = await findOperationTimeline(deps.pool, row.id);
    if (!stored) throw problem('not-found', 404, `Operation ${row.id} (${row.kind}) recorded no timeline: only creates, starts, wakes and Syncs of workspaces do.`);
    return timelineView(row, stored, wallClockMs()); // the timeline's own clock: durations are physical
  };

  app.get(
    '/operations/:id/timeline',
    {
      config: { access: 'user' },
      schema: { summary: 'The operation\'s phases with their durations (a create, start, wake or Sync of a workspace), readable while it runs', tags: ['operations'], params: Type.Object({ id: Uuid }), response: { 200: TimelineSchema } },
    },
    async (request) => viewOf(await readableOperation(deps, request.principal!.user, request.params.id)),
  );

  app.get(
    '/workspaces/:ws/timings',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Where the time of the workspace\'s latest create, start, wake or Sync went (or of the operation `op`)',
        tags: ['workspaces'],
        params: Type.Object({ ws: Id }),
        querystring: TimingsQuery,
        response: { 200: TimelineSchema },
      },
    },
    async (request) => {
      const { row: workspace } = await workspaceAccess(deps, request);
      const id = request.query.op ?? (await latestTimedOperation(deps.pool, workspace.id))?.id;
      if (!id) throw problem('not-found', 404, `No create, start, wake or Sync of workspace ${workspace.name} has a timeline (they are kept 7 days with their operations).`);
      const row = await findOperation(deps.pool, id);
      if (!row || row.target !== `/workspaces/${workspace.id}`) throw notFound('operation');
      return viewOf(row);
    },
  );
}
