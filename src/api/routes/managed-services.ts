// Managed services (spec 2.8, 3.4, 4.10): GET /managed-services/{ms}, seen by those who see its workspace's team;
// a deleted one reads as its tombstone (status deleted) until purged 7 days later, then 404. A team's list,
// GET /teams/{team}/managed-services, narrows to a workspace or a status; deleted=true lists the recently deleted.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess, type TeamAccess } from '../../auth/access.ts';
import { notFound } from '../../core/problems.ts';
import { findManagedService, listManagedServices, type ManagedServiceRow, type ManagedServiceStatus } from '../../store/managed-services.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DateTime, Id, StringEnum, Uuid, iso } from '../schemas.ts';

export const managedStatuses = ['creating', 'updating', 'pausing', 'unpausing', 'deleting', 'synchronized', 'paused', 'deleted', 'unknown', 'invalid-provider'] as const;

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
  status: StringEnum(managedStatuses),
  details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    description: "what the provider publishes (postgres: host, port, database, user, version); `reason` when it is unknown; last known",
  }),
  backup: Type.Optional(
    Type.Object(
      {
        state: StringEnum(['succeeded', 'failed'], { description: 'failed: no dump was made that try; tried again an hour later, within the night' }),
        at: DateTime,
        operation_id: Type.Optional(Uuid),
        dump_id: Type.Optional(Uuid),
        reason: Type.Optional(Type.String({ description: 'why it failed' })),
      },
      { description: 'its last nightly backup (spec 2.8 `backups`); absent before its first night. A change sends managed_service.updated' },
    ),
  ),
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
    ...(row.last_backup && { backup: row.last_backup }),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    ...(row.deleted_at && { deleted_at: iso(row.deleted_at) }),
  };
}

/** The managed service of the request's `ms` and the caller's standing on its team; 404 for those who cannot see it. */
export async function managedServiceAccess(deps: ApiDeps, request: RequestWithParams<{ ms: string }>): Promise<{ row: ManagedServiceRow; access: TeamAccess }> {
  const row = await findManagedService(deps.pool, request.params.ms);
  if (!row) throw notFound('managed service');
  const access = await teamAccess(deps.pool, request.principal!.user, Number(row.team_id)).catch(() => {
    throw notFound('managed service');
  });
  if (!access.permissions.includes('workspace.view')) throw notFound('managed service');
  request.auditTeamId = Number(row.team_id);
  return { row, access };
}

const ListQuery = Type.Object({
  ...PageQuery,
  workspace: Type.Optional(Id),
  status: Type.Optional(StringEnum(managedStatuses)),
  deleted: Type.Optional(Type.Boolean({ default: false, description: 'true: the recently deleted (tombstones kept 7 days) instead of the live ones' })),
});

export function registerManagedServiceRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/teams/:team/managed-services',
    {
      config: { access: 'user' },
      schema: {
        summary: "A team's managed services in creation order; narrowed to a workspace or a status; deleted=true lists the recently deleted",
        tags: ['managed-services'],
        params: Type.Object({ team: Id }),
        querystring: ListQuery,
        response: { 200: Page(ManagedServiceSchema) },
      },
    },
    async (request) => {
      const { team } = request.params;
      const query = request.query;
      const access = await teamAccess(deps.pool, request.principal!.user, team);
      requirePermission(access.permissions, 'workspace.view');
      const scope = `managed-services:${team}:${query.workspace ?? ''}:${query.status ?? ''}:${query.deleted}`;
      const after = query.cursor ? deps.cursors.decode<number>(scope, query.cursor) : 0;
      const rows = await listManagedServices(deps.pool, { teamId: team, workspaceId: query.workspace, status: query.status, deleted: query.deleted ?? false }, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), managedServiceView, (last) => deps.cursors.encode(scope, last.number));
    },
  );

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
    async (request) => managedServiceView((await managedServiceAccess(deps, request)).row),
  );
}
