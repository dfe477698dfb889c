// A team's network settings (docs/runtime.md, "The pod network"): whether its workspaces' pods reach beyond the
// workspace (`egress: on`, the installation's egress policy) or not (`off`, for restricted work). Everyone who can
// view the team reads it; its admins (and cluster administrators) change it (team.updated). Running and sleeping
// pods take a change at once (the local driver as root), others at their next start.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess } from '../../auth/access.ts';
import { notFound } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { withTransaction } from '../../store/database.ts';
import { setTeamEgress, teamEgress } from '../../store/teams.ts';
import { liveTeamWorkspaces } from '../../store/workspaces.ts';
import { workspaceRef } from '../../workspaces/operations.ts';
import type { ApiDeps } from '../context.ts';
import { Id, iso } from '../schemas.ts';
import { EgressSetting } from './workspace-schemas.ts';

const params = Type.Object({ team: Id });
const NetworkSettings = Type.Object({ egress: EgressSetting }, { additionalProperties: false });
const tags = ['teams'];

export function registerTeamNetworkSettingsRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/teams/:team/network-settings',
    { config: { access: 'user' }, schema: { summary: "The team's network settings (its pods' egress)", tags, params, response: { 200: NetworkSettings } } },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      requirePermission(access.permissions, 'team.view');
      const egress = await teamEgress(deps.pool, access.team.id);
      if (!egress) throw notFound('team');
      return { egress };
    },
  );

  app.put(
    '/teams/:team/network-settings',
    {
      config: { access: 'user', audit: 'team.network_settings.update' },
      schema: { summary: "Change the team's network settings (team admins): egress off keeps its pods inside their workspaces", tags, params, body: NetworkSettings, response: { 200: NetworkSettings } },
    },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.update');
      const { egress } = request.body;
      const now = deps.clock.now();
      const team = await withTransaction(deps.pool, async (db) => {
        const changed = await setTeamEgress(db, access.team.id, egress, now);
        if (changed) await publishEvent(db, { type: 'team.updated', at: iso(now), team_id: changed.id });
        return changed;
      });
      if (!team) throw notFound('team');
      // the pods the team's workspaces have now take it at once (the local driver), the others at their start
      if (deps.driver.applyEgress) {
        for (const row of await liveTeamWorkspaces(deps.pool, team.id)) {
          await deps.driver.applyEgress(workspaceRef(row)).catch((error: Error) => deps.log(`egress of workspace ${row.id}: ${error.message}`));
        }
      }
      return { egress };
    },
  );
}
