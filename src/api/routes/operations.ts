// Operations (2.4, 4.8): readable by their creator and by everyone who can view their team, 7 days after finishing.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { teamAccess } from '../../auth/access.ts';
import { notFound, Problem } from '../../core/problems.ts';
import { operationView } from '../../operations/view.ts';
import { findOperation } from '../../store/operations.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, ProblemRef, StringEnum, Uuid } from '../schemas.ts';

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

export function registerOperationRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/operations/:id',
    {
      config: { access: 'user' },
      schema: { summary: 'Read an operation', tags: ['operations'], params: Type.Object({ id: Uuid }), response: { 200: OperationSchema } },
    },
    async (request) => {
      const user = request.principal!.user;
      const row = await findOperation(deps.pool, (request.params as { id: string }).id);
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
      return operationView(row);
    },
  );
}
