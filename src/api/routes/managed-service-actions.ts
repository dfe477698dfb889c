// Pause and resume a managed service by hand (spec 3.4 "or resume in the console"): 202 with an operation
// (managed_service.pause, managed_service.resume) on its workspace, like a Sync; 409 with the reason when the
// instance cannot move now (src/managed/statuses.ts). Allowed to those who may sync the workspace's landscape.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { problem } from '../../core/problems.ts';
import { managedCatalog } from '../../managed/catalog.ts';
import { checkManualAction, manualActionKinds } from '../../managed/manual-actions.ts';
import type { ManualAction } from '../../managed/statuses.ts';
import { enqueueOperation } from '../../operations/queue.ts';
import { withTransaction } from '../../store/database.ts';
import { activeOperationOn } from '../../store/operations.ts';
import type { ApiDeps } from '../context.ts';
import { Uuid } from '../schemas.ts';
import { managedServiceAccess } from './managed-services.ts';
import { OperationSchema } from './operations.ts';
import { acceptOperation } from './workspaces.ts';

const summaries: Record<ManualAction, string> = {
  pause: 'Pause a managed service: its server stops, its data stays (an operation); 409 when it cannot pause now',
  resume: 'Resume a paused (or unknown) managed service as the last Sync deployed it (an operation); 409 when it cannot resume now',
};

export function registerManagedServiceActionRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const catalog = managedCatalog(deps.config.managedDisabled, deps.config.plans);
  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/managed-services/:ms/${action}`,
      {
        config: { access: 'user', audit: manualActionKinds[action] },
        schema: { summary: summaries[action], tags: ['managed-services'], params: Type.Object({ ms: Uuid }), response: { 202: OperationSchema } },
      },
      async (request, reply) => {
        const { row, access } = await managedServiceAccess(deps, request);
        requirePermission(access.permissions, 'landscape.sync');
        const target = `/workspaces/${row.workspace_id}`;
        const operation = await withTransaction(deps.pool, async (db) => {
          const busy = await activeOperationOn(db, target);
          if (busy) throw problem('conflict', 409, `The workspace is busy (${busy.kind}); try again when it has finished.`);
          await checkManualAction(db, catalog, row, action);
          const input = { workspace_id: Number(row.workspace_id), managed_service_id: row.id };
          return enqueueOperation(db, { kind: manualActionKinds[action], target, teamId: Number(row.team_id), createdBy: request.principal!.user.id, input, at: deps.clock.now() });
        });
        return acceptOperation(reply, operation);
      },
    );
  }
}
