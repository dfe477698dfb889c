// The services of a running landscape: the run switch per service (start, stop) and each replica's log (3.2).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { notFound, problem, type Problem } from '../../core/problems.ts';
import { didYouMean, quotedList } from '../../core/suggest.ts';
import { publishEvent } from '../../events/publish.ts';
import { withTransaction } from '../../store/database.ts';
import { findDeployedLandscape, forgetServiceStatuses, setRunSwitch } from '../../store/landscapes.ts';
import type { WorkspaceRow } from '../../store/workspaces.ts';
import { runsReplicas, withNeeds } from '../../workspaces/deployment.ts';
import { workspaceRef } from '../../workspaces/operations.ts';
import type { ApiDeps } from '../context.ts';
import { guardStream } from '../stream-rights.ts';
import { answerLogs, LogQuery, LogResponses } from '../log-stream.ts';
import { Id, ServiceName } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const params = Type.Object({ ws: Id, service: ServiceName });
const tags = ['landscape'];

export const ServiceViewSchema = Type.Object({
  name: Type.String(),
  type: Type.String(),
  status: Type.String({ description: 'pending, starting, running, internal, finished, failure, stopped, sleeping (3.2)' }),
  detail: Type.Optional(Type.String()),
  availability: Type.Optional(Type.String()),
  running: Type.Boolean({ description: 'the run switch: false after Stop; a stopped service never starts on request' }),
  replicas: Type.Object({ ready: Type.Integer(), desired: Type.Integer() }),
  ports: Type.Optional(
    Type.Array(
      Type.Object({
        port: Type.Integer({ description: '0 for the routes of a forward service' }),
        public: Type.Boolean(),
        public_url: Type.Optional(Type.String({ description: "the port's own host, when public" })),
        routes: Type.Array(Type.Object({ path: Type.String(), strip: Type.Boolean(), url: Type.String({ description: 'the route on the dev URL' }) })),
      }),
      { description: 'where the service is reached from outside the workspace; on GET /workspaces/{ws}/landscape' },
    ),
  ),
  image: Type.Optional(
    Type.Object({ reference: Type.String({ description: 'the image as the file writes it' }), digest: Type.String({ description: 'the digest pinned at the last Sync: what the replicas run' }) }, { description: 'container services: the image pinned at the last Sync' }),
  ),
});

const LogsQuery = Type.Object({ ...LogQuery.properties, replica: Type.Optional(Type.Integer({ minimum: 0, maximum: 99, description: 'replica index; default 0' })) });

type Deployed = Awaited<ReturnType<typeof findDeployedLandscape>>;

/** The 404 for a service the deployed landscape does not have: the closest name, and the names it has. */
export function unknownService(row: Pick<WorkspaceRow, 'name'>, deployed: Deployed, service: string): Problem {
  if (!deployed) return problem('not-found', 404, `The landscape of ${row.name} has no services yet: Sync deploys its svc.yml.`);
  if (deployed.torn_down) return problem('not-found', 404, `The landscape of ${row.name} is torn down: Sync starts its services again.`);
  const names = Object.keys(deployed.normal.services).sort();
  if (names.length === 0) return problem('not-found', 404, `The landscape of ${row.name} has no services.`);
  return problem('not-found', 404, `The landscape of ${row.name} has no service "${service}".${didYouMean(service, names)} Its services: ${quotedList(names)}.`, {
    extra: { services: names },
  });
}

/** Spec 7: a managed service has no steps to start or stop; Teardown pauses it and the next Sync resumes it. */
export function managedHasNoRunSwitch(service: string): Problem {
  return problem(
    'managed-service-no-steps',
    409,
    `${service} is a managed service: it has no steps to start or stop, so it has no run switch. Teardown of the landscape pauses it (its data kept) and the next Sync resumes it.`,
    { extra: { service } },
  );
}

async function deployedService(deps: ApiDeps, row: WorkspaceRow, service: string) {
  const deployed = await findDeployedLandscape(deps.pool, row.id);
  if (!deployed || !(service in deployed.normal.services)) throw unknownService(row, deployed, service);
  return deployed;
}

export function registerServiceRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const switchRoute = (action: 'start' | 'stop') =>
    app.post(
      `/workspaces/:ws/landscape/services/:service/${action}`,
      {
        config: { access: 'user', audit: `landscape.service.${action}` },
        schema: {
          summary: action === 'start' ? 'Turn the run switch on and start the service (and the services it needs)' : 'Turn the run switch off and stop every replica',
          tags,
          params,
          response: { 200: ServiceViewSchema },
        },
      },
      async (request) => {
        const { row, access } = await workspaceAccess(deps, request);
        requirePermission(access.permissions, 'landscape.sync');
        const { service } = request.params;
        const deployed = await deployedService(deps, row, service);
        if (deployed.torn_down) throw problem('conflict', 409, 'The landscape is torn down: Sync starts it again.');
        if (deployed.normal.services[service].type === 'managed') throw managedHasNoRunSwitch(service);
        if (action === 'start' && row.state !== 'running') throw problem('workspace-not-running', 409, 'Services run in the workspace: wake it first.');
        // A managed service it needs has no run switch: it runs while the landscape is synced.
        const names = action === 'start' ? [...withNeeds(deployed.normal, [service])].filter((name) => deployed.normal.services[name].type !== 'managed') : [service];
        await withTransaction(deps.pool, async (db) => {
          await setRunSwitch(db, row.id, names, action === 'start', deps.clock.now());
          await forgetServiceStatuses(db, row.id);
          await publishEvent(db, { type: 'landscape.updated', at: deps.clock.now().toISOString(), team_id: row.team_id, workspace_id: row.id });
        });
        await deps.services.apply(row.id, action === 'start' ? { retry: names } : {});
        const views = await deps.services.views(row, await findDeployedLandscape(deps.pool, row.id));
        return views.find((v) => v.name === service)!;
      },
    );
  switchRoute('start');
  switchRoute('stop');

  app.get(
    '/workspaces/:ws/landscape/services/:service/logs',
    {
      config: { access: 'user' },
      schema: {
        summary: "A replica's log (stdout, stderr and the platform's own `system` lines); `follow` streams JSON lines",
        tags,
        params,
        querystring: LogsQuery,
        produces: ['application/json', 'application/x-ndjson'],
        response: LogResponses,
      },
    },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'landscape.view');
      const { service } = request.params;
      const { replica = 0 } = request.query;
      const deployed = await deployedService(deps, row, service);
      const spec = deployed.normal.services[service];
      if (!runsReplicas(spec) || replica >= spec.replicas) throw notFound('replica');
      return answerLogs(request, reply, { read: (since) => deps.driver.replicaLogs(workspaceRef(row), service, replica, { since }) }, (end) =>
        guardStream(deps, request, { workspaceId: row.id, teamId: row.team_id, permission: 'landscape.view' }, end),
      );
    },
  );
}
