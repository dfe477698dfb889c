// A team's settings for `container` services that only a cluster administrator may change (spec 2.8): whether its
// landscapes may set `runAsUser` (run as root or a fixed user instead of the workspace's UID).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess } from '../../auth/access.ts';
import { notFound } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { withTransaction } from '../../store/database.ts';
import { setTeamRunAsUserAllowed, teamRunAsUserAllowed } from '../../store/teams.ts';
import type { ApiDeps } from '../context.ts';
import { Id, iso } from '../schemas.ts';

const params = Type.Object({ team: Id });
const ContainerSettings = Type.Object(
  { run_as_user_allowed: Type.Boolean({ description: "container services may set runAsUser (root or a fixed user instead of the workspace's UID)" }) },
  { additionalProperties: false },
);
const tags = ['teams'];

export function registerTeamContainerSettingsRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/teams/:team/container-settings',
    { config: { access: 'user' }, schema: { summary: "The team's settings for container services", tags, params, response: { 200: ContainerSettings } } },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      requirePermission(access.permissions, 'team.view');
      return { run_as_user_allowed: await teamRunAsUserAllowed(deps.pool, access.team.id) };
    },
  );

  app.put(
    '/teams/:team/container-settings',
    {
      config: { access: 'admin', audit: 'team.container_settings.update' },
      schema: { summary: "Change the team's settings for container services (cluster administrators only)", tags, params, body: ContainerSettings, response: { 200: ContainerSettings } },
    },
    async (request) => {
      const teamId = request.params.team;
      const { run_as_user_allowed } = request.body;
      const now = deps.clock.now();
      const team = await withTransaction(deps.pool, async (db) => {
        const changed = await setTeamRunAsUserAllowed(db, teamId, run_as_user_allowed, now);
        if (changed) await publishEvent(db, { type: 'team.updated', at: iso(now), team_id: changed.id });
        return changed;
      });
      if (!team) throw notFound('team');
      request.auditTeamId = team.id;
      return { run_as_user_allowed };
    },
  );
}
