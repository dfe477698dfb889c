// GET /events (spec 4.6, 6): the live event stream, text/event-stream, until either side closes it.
// The fan-out (src/events/fanout.ts) decides what each stream receives; this route checks the caller and the
// `team` filter, then hands the connection over.
import type { OutgoingHttpHeaders } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { teamAccess } from '../../auth/access.ts';
import { problem } from '../../core/problems.ts';
import type { ApiDeps } from '../context.ts';
import { eventTypes } from '../../events/publish.ts';
import { ResponseSink } from '../../events/response-sink.ts';
import { guardStream } from '../stream-rights.ts';
import { DateTime, Id, StringEnum, Uuid } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { WorkspaceSchema } from './workspace-schemas.ts';

/** `team`: only events of this team; `ready` is always sent. */
const EventsQuery = Type.Object({ team: Type.Optional(Id) });

/** The `data` of each event of the stream (spec 6): ids, and the full workspace or operation where stated. */
export const EventSchema = Type.Object(
  {
    type: StringEnum(['ready', ...eventTypes]),
    at: DateTime,
    team_id: Type.Optional(Id),
    workspace_id: Type.Optional(Id),
    workspace: Type.Optional(WorkspaceSchema),
    operation: Type.Optional(OperationSchema),
    stage: Type.Optional(StringEnum(['prepare', 'test', 'run'])),
    run_id: Type.Optional(Id),
    managed_service_id: Type.Optional(Uuid),
    org_id: Type.Optional(Uuid),
    domain_id: Type.Optional(Uuid),
  },
  { description: 'Each event is `id: <n>`, `event: <type>`, `data: <this object as JSON>`; `: ping` comments every 25 seconds' },
);

export function registerEventRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  // Open streams would keep the HTTP server from closing.
  app.addHook('preClose', (done) => {
    deps.events?.closeAll();
    done();
  });

  app.get(
    '/events',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Live events: `ready` first, then the events you may see; `: ping` every 25 seconds',
        tags: ['events'],
        querystring: EventsQuery,
        produces: ['text/event-stream'],
        response: { 200: { description: 'The event stream; its content schema is that of one event\'s data', content: { 'text/event-stream': { schema: EventSchema } } } },
      },
    },
    async (request, reply) => {
      const fanout = deps.events;
      if (!fanout) throw problem('not-available', 501, 'This server does not stream events.');
      const user = request.principal!.user;
      const { team } = request.query;
      if (team !== undefined) await teamAccess(deps.pool, user, team);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // Proxies such as nginx would otherwise hold events back in their buffers.
        'x-accel-buffering': 'no',
      });
      raw.flushHeaders();
      const principal = request.principal!;
      const subscription = fanout.open(
        {
          userId: user.id,
          team,
          keyId: principal.via === 'key' ? principal.keyId : undefined,
          sessionHash: principal.via === 'session' ? principal.sessionHash.toString('hex') : undefined,
        },
        new ResponseSink(raw),
      );
      // Ended when its key or session stops working (the fan-out ends those at once, too), or, narrowed to a team, when
      // the caller can no longer see the team; a lowered role is the fan-out's filter's concern (visibility.ts).
      const release = guardStream(deps, request, { teamId: team }, () => fanout.close(subscription));
      const closed = () => {
        release();
        fanout.close(subscription);
      };
      raw.on('close', closed);
      raw.on('error', closed);
    },
  );
}
