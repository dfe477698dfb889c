// Moving a team's workspace volumes to the current UID (spec 4.7): cluster administrators with the browser session
// start the operation `workspace.volume_owner` (src/workspaces/volume-owner.ts) after `security.defaultUid` changed.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound, problem } from '../../core/problems.ts';
import { enqueueOperation } from '../../operations/queue.ts';
import { withTransaction } from '../../store/database.ts';
import { activeOperationOn } from '../../store/operations.ts';
import { findTeam } from '../../store/teams.ts';
import { workspacesNeedingOwner } from '../../store/workspaces.ts';
import { VOLUME_OWNER_KIND, volumeOwnerTarget } from '../../workspaces/volume-owner.ts';
import type { ApiDeps } from '../context.ts';
import { Id } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { acceptOperation } from './workspaces.ts';

const params = Type.Object({ team: Id });

export function registerTeamVolumeOwnerRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/teams/:team/volume-owner',
    {
      config: { access: 'admin-session', audit: 'team.volume_owner' },
      schema: {
        summary:
          "Hand every volume of the team that still belongs to another UID than security.defaultUid gives it to that UID (an operation; cluster administrators with the browser session). 409 volume-owner-unneeded when none needs it, volume-owner-running while a change runs; 501 not-available where the runtime cannot re-own files",
        tags: ['teams'],
        params,
        response: { 202: OperationSchema },
      },
    },
    async (request, reply) => {
      const teamId = request.params.team;
      request.auditTeamId = teamId;
      if (!deps.driver.reownVolume) {
        throw problem('not-available', 501, `The ${deps.driver.name} runtime of this installation cannot change the owner of volumes (the local runtime needs the server to run as root).`);
      }
      const firstUid = deps.config.defaultUid;
      const operation = await withTransaction(deps.pool, async (db) => {
        if (!(await findTeam(db, teamId))) throw notFound('team');
        const target = volumeOwnerTarget(teamId);
        if (await activeOperationOn(db, target)) throw problem('volume-owner-running', 409, "A change of the team's volume owners is still running; wait for its operation to finish.");
        const needing = await workspacesNeedingOwner(db, teamId, firstUid);
        if (needing.length === 0) throw problem('volume-owner-unneeded', 409, `Every volume of the team already belongs to the UID security.defaultUid (${firstUid}) gives it.`);
        request.auditTarget = target;
        return enqueueOperation(db, {
          kind: VOLUME_OWNER_KIND,
          target,
          teamId,
          createdBy: request.principal!.user.id,
          input: { team_id: teamId, default_uid: firstUid },
          detail: `${needing.length} volumes to hand to their new UID`,
          at: deps.clock.now(),
        });
      });
      return acceptOperation(reply, operation);
    },
  );
}
