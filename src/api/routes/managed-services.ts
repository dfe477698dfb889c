// Managed services (spec 2.8, 3.4, 4.10): GET /managed-services/{ms}, seen by those who see its workspace's team;
// a deleted one reads as its tombstone (status deleted) until purged, then 404.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { teamAccess } from '../../auth/access.ts';
import { notFound } from '../../core/problems.ts';
import { findManagedService, type ManagedServiceRow } from '../../store/managed-services.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, Id, StringEnum, Uuid, iso } from '../schemas.ts';

const statuses = ['creating', 'updating', 'pausing', 'unpausing', 'deleting', 'synchronized', 'paused', 'deleted', 'unknown', 'invalid-provider'] as const;

export const ManagedServiceSchema = Type.Object({
  id: Uuid,
  team_id: Id,
  workspace_id: Id,
  name: Type.String({ description: 'its service name in the landscape' }),
  provider: Type.String(),
  version: Type.String({ description: 'kept from creation' }),
  plan: Type.String(),
  resources: Type.Record(Type.String(), Type.Number(), {
    description: "the plan's values with the file's overrides as last applied by Sync (cpu in thousandths of a core, memory and storage in MiB, connections a count)",
  }),
  status: StringEnum(statuses),
  details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    description: "what the provider publishes (postgres: host, port, database, user, version); `reason` when it is unknown; last known",
  }),
  created_at: DateTime,
  updated_at: DateTime,
  deleted_at: Type.Optional(DateTime),
});

export function managedServiceView(row: ManagedServiceRow) {
  return {
    id: row.id,
    team_id: Number(row.team_id),
    workspace_id: Number(row.workspace_id),
    name: row.name,
    provider: row.provider,
    version: row.version,
    plan: row.plan,
    resources: row.resources,
    status: row.status,
    details: row.details,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    ...(row.deleted_at && { deleted_at: iso(row.deleted_at) }),
  };
}

export function registerManagedServiceRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/managed-services/:ms',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Read a managed service: its status and details',
        tags: ['managed-services'],
        params: Type.Object({ ms: Uuid }),
        response: { 200: ManagedServiceSchema },
      },
    },
    async (request) => {
      const row = await findManagedService(deps.pool, (request.params as { ms: string }).ms);
      if (!row) throw notFound('managed service');
      const access = await teamAccess(deps.pool, request.principal!.user, Number(row.team_id)).catch(() => {
        throw notFound('managed service');
      });
      if (!access.permissions.includes('workspace.view')) throw notFound('managed service');
      request.auditTeamId = Number(row.team_id);
      return managedServiceView(row);
    },
  );
}
