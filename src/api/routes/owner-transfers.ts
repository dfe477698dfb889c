// Ownership transfers (spec 4.10): GET /workspaces/{ws}/owner-transfers and GET /me/owner-transfers list them;
// offering, accepting, declining and cancelling are actions without If-Match (the transfer's state guards them).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { acceptTransfer, cancelTransfer, declineTransfer, offerTransfer, visibleTransfer } from '../../people/transfers.ts';
import { listTransfers, type TransferRow, type TransferState } from '../../store/owner-transfers.ts';
import type { ApiDeps } from '../context.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DateTime, Id, StringEnum, Uuid, iso, isoOrUndefined } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const states = ['open', 'accepted', 'declined', 'cancelled'] as const;

export const OwnerTransferSchema = Type.Object({
  id: Uuid,
  workspace_id: Id,
  team_id: Id,
  from_user_id: Type.Optional(Id),
  offered_by: Type.Optional(Id),
  to_user_id: Id,
  state: StringEnum(states),
  created_at: DateTime,
  decided_at: Type.Optional(DateTime),
  decided_by: Type.Optional(Id),
});

export function transferView(row: TransferRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    team_id: row.team_id,
    from_user_id: row.from_user_id ?? undefined,
    offered_by: row.offered_by ?? undefined,
    to_user_id: row.to_user_id,
    state: row.state,
    created_at: iso(row.created_at),
    decided_at: isoOrUndefined(row.decided_at),
    decided_by: row.decided_by ?? undefined,
  };
}

const ListQuery = Type.Object({ ...PageQuery, state: Type.Optional(StringEnum(states)) });
const IdParams = Type.Object({ id: Uuid });

export function registerOwnerTransferRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/workspaces/:ws/owner-transfers',
    {
      config: { access: 'user', audit: 'workspace.owner_transfer.offer' },
      schema: {
        summary: 'Offer the workspace to a member of its team (its owner, or an admin of the team)',
        tags: ['owner-transfers'],
        params: Type.Object({ ws: Id }),
        body: Type.Object({ to_user_id: Id }, { additionalProperties: false }),
        response: { 201: OwnerTransferSchema },
      },
    },
    async (request, reply) => {
      const row = await offerTransfer(deps, request.principal!.user, request.params.ws, request.body.to_user_id);
      request.auditTeamId = row.team_id;
      request.auditTarget = `/owner-transfers/${row.id}`;
      reply.code(201).header('location', `/api/v1/owner-transfers/${row.id}`);
      return transferView(row);
    },
  );

  app.get(
    '/workspaces/:ws/owner-transfers',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Ownership transfers of the workspace, newest first',
        tags: ['owner-transfers'],
        params: Type.Object({ ws: Id }),
        querystring: ListQuery,
        response: { 200: Page(OwnerTransferSchema) },
      },
    },
    async (request) => {
      const { row } = await workspaceAccess(deps, request);
      const query = request.query;
      const scope = `owner-transfers:ws:${row.id}:${query.state ?? ''}`;
      const after = query.cursor ? deps.cursors.decode<{ at: string; id: string }>(scope, query.cursor) : undefined;
      const rows = await listTransfers(deps.pool, { workspaceId: row.id, state: query.state }, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), transferView, (last) => deps.cursors.encode(scope, { at: iso(last.created_at), id: last.id }));
    },
  );

  app.get(
    '/me/owner-transfers',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Ownership transfers offered to you or by you, newest first',
        tags: ['owner-transfers'],
        querystring: ListQuery,
        response: { 200: Page(OwnerTransferSchema) },
      },
    },
    async (request) => {
      const user = request.principal!.user;
      const query = request.query;
      const scope = `owner-transfers:me:${user.id}:${query.state ?? ''}`;
      const after = query.cursor ? deps.cursors.decode<{ at: string; id: string }>(scope, query.cursor) : undefined;
      const rows = await listTransfers(deps.pool, { userId: user.id, state: query.state }, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), transferView, (last) => deps.cursors.encode(scope, { at: iso(last.created_at), id: last.id }));
    },
  );

  app.get(
    '/owner-transfers/:id',
    {
      config: { access: 'user' },
      schema: { summary: 'Read an ownership transfer', tags: ['owner-transfers'], params: IdParams, response: { 200: OwnerTransferSchema } },
    },
    async (request) => transferView(await visibleTransfer(deps, request.principal!.user, request.params.id)),
  );

  const action = (name: 'accept' | 'decline' | 'cancel', summary: string, run: typeof acceptTransfer) =>
    app.post(
      `/owner-transfers/:id/${name}`,
      {
        config: { access: 'user', audit: `workspace.owner_transfer.${name}` },
        schema: { summary, tags: ['owner-transfers'], params: IdParams, response: { 200: OwnerTransferSchema } },
      },
      async (request) => {
        const row = await run(deps, request.principal!.user, request.params.id);
        request.auditTeamId = row.team_id;
        return transferView(row);
      },
    );
  action('accept', 'Accept a transfer offered to you: you become the owner (the workspace ETag changes)', acceptTransfer);
  action('decline', 'Decline a transfer offered to you', declineTransfer);
  action('cancel', 'Cancel an open transfer (the offerer, the owner or an admin of the team)', cancelTransfer);
}
