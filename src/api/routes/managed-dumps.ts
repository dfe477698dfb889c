import type { Readable } from 'node:stream';
// Dumps of managed services (spec 2.4 `managed_service.dump`): POST makes one (an operation), GET lists them and
// downloads one, DELETE removes one; POST /restore loads a dump into a managed service, replacing its data (an
// operation). Who may do what (docs/permissions.md): listing needs workspace.view on the service's team; making,
// deleting and restoring are changes of the landscape's services (landscape.sync); downloading a dump, or restoring
// one, reads all of its data, as the editor could (workspace.use on the dump's team).
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess, type TeamAccess } from '../../auth/access.ts';
import { notFound, problem, validationProblem } from '../../core/problems.ts';
import { managedCatalog } from '../../managed/catalog.ts';
import { deleteDump, downloadName, dumpFile, dumpRefusal, enqueueDump, enqueueRestore } from '../../managed/dumps.ts';
import type { ManagedHost } from '../../managed/engine.ts';
import { withTransaction } from '../../store/database.ts';
import { findManagedDump, listManagedDumps, type ManagedDumpRow } from '../../store/managed-dumps.ts';
import { findManagedService, type ManagedServiceRow } from '../../store/managed-services.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { DateTime, Id, StringEnum, Uuid, iso } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { acceptOperation } from './workspaces.ts';

const tags = ['managed-services'];
const ServiceParams = Type.Object({ ms: Uuid });
const DumpParams = Type.Object({ ms: Uuid, dump: Uuid });

export const DumpSchema = Type.Object({
  id: Uuid,
  managed_service_id: Uuid,
  team_id: Id,
  provider: Type.String(),
  version: Type.String({ description: 'the version of the instance dumped' }),
  kind: StringEnum(['manual', 'nightly'], { description: 'made by a POST, or by the nightly backups (the newest 7 kept)' }),
  format: Type.String({ description: 'e.g. `pg_dump custom format`' }),
  media_type: Type.String({ description: 'the Content-Type of its download' }),
  size_bytes: Type.Integer({ minimum: 0 }),
  operation_id: Type.Optional(Uuid),
  created_at: DateTime,
});

const RestoreBody = Type.Object(
  { dump: Type.String({ format: 'uuid', description: 'a dump of the same provider whose team you may download from' }) },
  { additionalProperties: false },
);

function dumpView(row: ManagedDumpRow) {
  return {
    id: row.id,
    managed_service_id: row.managed_service_id,
    team_id: Number(row.team_id),
    provider: row.provider,
    version: row.version,
    kind: row.kind,
    format: row.format,
    media_type: row.media_type,
    size_bytes: Number(row.size_bytes),
    ...(row.operation_id && { operation_id: row.operation_id }),
    created_at: iso(row.created_at),
  };
}

export function registerManagedDumpRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const catalog = managedCatalog(deps.config.managedDisabled, deps.config.plans);
  const host: ManagedHost = { dataDir: deps.config.dataDir, toolsDir: deps.config.toolsDir, log: deps.log };

  /** The managed service of the path as the caller sees it: 404 when it does not exist or they cannot see its team. */
  async function serviceOf(request: RequestWithParams<{ ms: string }>): Promise<{ row: ManagedServiceRow; access: TeamAccess }> {
    const row = await findManagedService(deps.pool, request.params.ms);
    if (!row) throw notFound('managed service');
    const access = await teamAccess(deps.pool, request.principal!.user, Number(row.team_id)).catch(() => {
      throw notFound('managed service');
    });
    if (!access.permissions.includes('workspace.view')) throw notFound('managed service');
    request.auditTeamId = Number(row.team_id);
    return { row, access };
  }

  async function dumpOf(request: RequestWithParams<{ dump: string }>, row: ManagedServiceRow): Promise<ManagedDumpRow> {
    const dump = await findManagedDump(deps.pool, request.params.dump);
    if (!dump || dump.managed_service_id !== row.id) throw notFound('dump');
    return dump;
  }

  app.post(
    '/managed-services/:ms/dumps',
    {
      config: { access: 'user', audit: 'managed_service.dump' },
      schema: {
        summary: 'Dump a managed service (an operation of kind managed_service.dump, ending in a downloadable dump); 409 managed-service-paused while it is paused, dump-not-supported for a provider without dumps; 501 not-available without the client tools',
        tags,
        params: ServiceParams,
        response: { 202: OperationSchema },
      },
    },
    async (request, reply) => {
      const { row, access } = await serviceOf(request);
      requirePermission(access.permissions, 'landscape.sync');
      const refusal = await dumpRefusal({ catalog, host, driver: deps.driver }, row, 'dump');
      if (refusal) throw refusal;
      const id = randomUUID();
      request.auditTarget = `/managed-services/${row.id}/dumps/${id}`;
      const operation = await withTransaction(deps.pool, (db) => enqueueDump(db, row, { id, kind: 'manual', by: request.principal!.user.id, at: deps.clock.now() }));
      return acceptOperation(reply, operation);
    },
  );

  app.get(
    '/managed-services/:ms/dumps',
    {
      config: { access: 'user' },
      schema: { summary: 'The dumps of a managed service, newest first', tags, params: ServiceParams, querystring: Type.Object(PageQuery), response: { 200: Page(DumpSchema) } },
    },
    async (request) => {
      const { row } = await serviceOf(request);
      const query = request.query;
      const scope = `managed-dumps:${row.id}`;
      const after = query.cursor ? deps.cursors.decode<{ at: string; id: string }>(scope, query.cursor) : undefined;
      const rows = await listManagedDumps(deps.pool, row.id, after && { at: new Date(after.at), id: after.id }, pageLimit(query) + 1);
      return pageOf(rows, pageLimit(query), dumpView, (last) => deps.cursors.encode(scope, { at: iso(last.created_at), id: last.id }));
    },
  );

  app.get(
    '/managed-services/:ms/dumps/:dump',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Download a dump (Content-Disposition: attachment); needs workspace.use, as it holds all the data',
        tags,
        params: DumpParams,
        produces: ['application/octet-stream'],
        response: {
          200: { description: "The dump's file, as its media_type says", content: { 'application/octet-stream': { schema: Type.Unsafe<string | Readable>(Type.String({ format: 'binary' })) } } },
        },
      },
    },
    async (request, reply) => {
      const { row, access } = await serviceOf(request);
      const dump = await dumpOf(request, row);
      requirePermission(access.permissions, 'workspace.use');
      const file = dumpFile(deps.config.dataDir, dump);
      const size = await stat(file).then((s) => s.size, () => undefined);
      if (size === undefined) throw problem('not-found', 404, 'The file of this dump is gone.');
      return reply
        .type(dump.media_type)
        .header('content-length', size)
        .header('content-disposition', `attachment; filename="${downloadName(row.name, dump)}"`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .send(createReadStream(file));
    },
  );

  app.delete(
    '/managed-services/:ms/dumps/:dump',
    {
      config: { access: 'user', audit: 'managed_service.dump.delete' },
      schema: { summary: 'Delete a dump', tags, params: DumpParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const { row, access } = await serviceOf(request);
      const dump = await dumpOf(request, row);
      requirePermission(access.permissions, 'landscape.sync');
      await deleteDump(deps.pool, deps.config.dataDir, dump);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/managed-services/:ms/restore',
    {
      config: { access: 'user', audit: 'managed_service.restore' },
      schema: {
        summary: 'Replace the data of a managed service with a dump of the same provider (an operation of kind managed_service.restore)',
        tags,
        params: ServiceParams,
        body: RestoreBody,
        response: { 202: OperationSchema },
      },
    },
    async (request, reply) => {
      const { row, access } = await serviceOf(request);
      requirePermission(access.permissions, 'landscape.sync');
      const body = request.body;
      const unknownDump = validationProblem([{ pointer: '/dump', message: 'is no dump you may see' }]);
      const dump = await findManagedDump(deps.pool, body.dump);
      if (!dump) throw unknownDump;
      const dumpAccess = await teamAccess(deps.pool, request.principal!.user, Number(dump.team_id)).catch(() => undefined);
      if (!dumpAccess?.permissions.includes('workspace.view')) throw unknownDump;
      requirePermission(dumpAccess.permissions, 'workspace.use');
      if (dump.provider !== row.provider) {
        throw validationProblem([{ pointer: '/dump', message: `is a dump of ${dump.provider}; ${row.name} is ${row.provider}` }]);
      }
      const refusal = await dumpRefusal({ catalog, host, driver: deps.driver }, row, 'restore');
      if (refusal) throw refusal;
      const operation = await withTransaction(deps.pool, (db) => enqueueRestore(db, row, dump, request.principal!.user.id, deps.clock.now()));
      return acceptOperation(reply, operation);
    },
  );
}
