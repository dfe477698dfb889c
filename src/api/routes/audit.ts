// The audit log (4.3): administrators only, newest first (time, then id), filters combine.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { problem } from '../../core/problems.ts';
import { listAuditEntries, type AuditEntryRow } from '../../store/audit.ts';
import type { ApiDeps } from '../context.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DateTime, Id, iso } from '../schemas.ts';

export const auditActionPattern = '^[a-z][a-z_]*(\\.[a-z][a-z_]*)+$';

const AuditEntrySchema = Type.Object({
  id: Id,
  at: DateTime,
  actor_id: Type.Optional(Id),
  action: Type.String(),
  method: Type.String(),
  target: Type.String(),
  team_id: Type.Optional(Id),
  outcome: Type.Integer({ description: 'HTTP status of the answer' }),
  address: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String({ description: 'what a rule did, for changes no request made (e.g. a role given by an OpenID Connect role rule)' })),
});

const AuditQuery = Type.Object({
  ...PageQuery,
  action: Type.Optional(Type.String({ pattern: auditActionPattern, patternErrorMessage: 'must be an action such as api_key.create: lowercase words of letters and _, joined by dots', maxLength: 100, description: 'e.g. api_key.create' })),
  actor: Type.Optional(Id),
  team: Type.Optional(Id),
  since: Type.Optional(Type.String({ description: 'date-time; entries at or after it' })),
  until: Type.Optional(Type.String({ description: 'date-time; entries before it' })),
});

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A malformed time is a malformed request (400), unlike other bad filters (422): spec 4.3. */
function parseTime(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (!rfc3339.test(value) || Number.isNaN(at.getTime())) {
    throw problem('bad-request', 400, `${name} must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z.`, {
      errors: [{ pointer: `/${name}`, message: 'is not an RFC 3339 date-time', in: 'query' }],
    });
  }
  return at;
}

function entryView(row: AuditEntryRow) {
  return {
    id: row.id,
    at: iso(row.at),
    actor_id: row.actor_id ?? undefined,
    action: row.action,
    method: row.method,
    target: row.target,
    team_id: row.team_id ?? undefined,
    outcome: row.outcome,
    address: row.address ?? undefined,
    detail: row.detail ?? undefined,
  };
}

export function registerAuditRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit-log',
    {
      config: { access: 'admin' },
      schema: { summary: 'The audit log, newest first (administrators)', tags: ['audit'], querystring: AuditQuery, response: { 200: Page(AuditEntrySchema) } },
    },
    async (request) => {
      const query = request.query;
      const since = parseTime(query.since, 'since');
      const until = parseTime(query.until, 'until');
      const before = query.cursor ? deps.cursors.decode<[string, number]>('audit-log', query.cursor) : undefined;
      const rows = await listAuditEntries(
        deps.pool,
        {
          action: query.action,
          actorId: query.actor,
          teamId: query.team,
          since,
          until,
          before: before ? { at: new Date(before[0]), id: before[1] } : undefined,
        },
        pageLimit(query),
      );
      return pageOf(rows, pageLimit(query), entryView, (last) => deps.cursors.encode('audit-log', [iso(last.at), last.id]));
    },
  );
}
