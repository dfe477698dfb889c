// Operations (2.4, 4.8): readable by their creator and by everyone who can view their team, 7 days after finishing.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { teamAccess } from '../../auth/access.ts';
import type { CallerUser } from '../../auth/credentials.ts';
import { notFound, Problem } from '../../core/problems.ts';
import { operationView } from '../../operations/view.ts';
import { findOperation, listOperations, type OperationRow } from '../../store/operations.ts';
import { visibleTeamIds } from '../../store/teams.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, Id, ProblemRef, StringEnum, Uuid } from '../schemas.ts';

export const OperationSchema = Type.Object({
  id: Uuid,
  kind: Type.String(),
  state: StringEnum(['pending', 'running', 'succeeded', 'failed']),
  target: Type.Optional(Type.String({ description: 'API path of the resource acted on, e.g. /workspaces/7' })),
  detail: Type.Optional(Type.String({ description: 'progress text for people' })),
  error: Type.Optional(ProblemRef),
  created_at: DateTime,
  updated_at: DateTime,
  finished_at: Type.Optional(DateTime),
});

const OperationsQuery = Type.Object({
  ...PageQuery,
  team: Type.Optional(Id),
  active: Type.Optional(Type.Boolean({ default: false, description: 'only pending and running ones' })),
  state: Type.Optional(StringEnum(['pending', 'running', 'succeeded', 'failed'])),
  kind: Type.Optional(Type.String({ pattern: '^[a-z_]+\\.[a-z_]+$', patternErrorMessage: 'must be an operation kind such as landscape.sync: two lowercase words joined by a dot', maxLength: 64, description: 'e.g. landscape.sync, workspace.create' })),
  workspace: Type.Optional(Id),
});

export function registerOperationRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/operations',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Operations you can see (yours and your teams\'), newest first, kept 7 days after they finish; filters: team, active (pending and running), state, kind, workspace',
        tags: ['operations'],
        querystring: OperationsQuery,
        response: { 200: Page(OperationSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const user = request.principal!.user;
      if (query.team !== undefined) await teamAccess(deps.pool, user, query.team);
      const teamIds = user.isAdmin ? null : await visibleTeamIds(deps.pool, user.id);
      const target = query.workspace === undefined ? undefined : `/workspaces/${query.workspace}`;
      // A cursor belongs to one set of filters.
      const scope = `operations:${query.team ?? ''}:${query.active}:${query.state ?? ''}:${query.kind ?? ''}:${target ?? ''}`;
      const after = query.cursor ? deps.cursors.decode<{ us: string; id: string }>(scope, query.cursor) : undefined;
      const rows = await listOperations(deps.pool, { userId: user.id, teamIds, team: query.team, active: query.active ?? false, state: query.state, kind: query.kind, target }, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), operationView, (last) => deps.cursors.encode(scope, { us: last.created_us, id: last.id }));
    },
  );

  app.get(
    '/operations/:id',
    {
      config: { access: 'user' },
      schema: { summary: 'Read an operation', tags: ['operations'], params: Type.Object({ id: Uuid }), response: { 200: OperationSchema } },
    },
    async (request) => operationView(await readableOperation(deps, request.principal!.user, request.params.id)),
  );
}

/** The operation when the user may read it (its creator, anyone who can view its team, an admin); else 404. */
export async function readableOperation(deps: Pick<ApiDeps, 'pool'>, user: CallerUser, id: string): Promise<OperationRow> {
  const row = await findOperation(deps.pool, id);
  if (!row) throw notFound('operation');
  if (row.created_by !== user.id && !user.isAdmin) {
    if (row.team_id === null) throw notFound('operation');
    try {
      await teamAccess(deps.pool, user, row.team_id);
    } catch (error) {
      if (error instanceof Problem) throw notFound('operation');
      throw error;
    }
  }
  return row;
}
