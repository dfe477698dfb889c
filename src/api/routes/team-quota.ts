// A team's quotas (spec 7 "team quota exceeded", docs/capacity.md): CPU and memory that its awake workspaces' pods
// may hold together (from their plans) and storage that its volumes may take. Everyone who can view the team reads
// them with what is used; only a cluster administrator changes them (team.updated).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess } from '../../auth/access.ts';
import { teamUse } from '../../capacity/quota.ts';
import { notFound } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { withTransaction } from '../../store/database.ts';
import { setTeamQuota, teamQuota } from '../../store/teams.ts';
import { awakeTeamWorkspaces, teamStorage } from '../../store/workspaces.ts';
import type { ApiDeps } from '../context.ts';
import { Id, iso } from '../schemas.ts';

const params = Type.Object({ team: Id });
const Amounts = {
  cpu_millis: Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'thousandths of a CPU' }),
  memory_mib: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  storage_gib: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
};
const QuotaBody = Type.Object(Amounts, { additionalProperties: false });
const TeamQuotaSchema = Type.Object({
  ...Amounts,
  used: Type.Object(Amounts, { description: "what the team's awake workspaces hold (CPU, memory) and its volumes take (storage, soft-deleted ones included)" }),
  held_by_deleted: Type.Object({ workspaces: Type.Integer(), storage_gib: Type.Integer() }),
});
const tags = ['teams'];

export function registerTeamQuotaRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const view = async (teamId: number) => {
    const quota = await teamQuota(deps.pool, teamId);
    if (!quota) throw notFound('team');
    const used = teamUse(deps.config.plans, await awakeTeamWorkspaces(deps.pool, teamId));
    const storage = await teamStorage(deps.pool, teamId);
    return {
      cpu_millis: quota.cpu_quota_millis,
      memory_mib: quota.memory_quota_mib,
      storage_gib: quota.storage_quota_gib,
      used: { cpu_millis: used.cpuMillis, memory_mib: used.memoryMiB, storage_gib: storage.usedGib },
      held_by_deleted: { workspaces: storage.deletedWorkspaces, storage_gib: storage.deletedGib },
    };
  };

  app.get(
    '/teams/:team/quota',
    { config: { access: 'user' }, schema: { summary: "The team's CPU, memory and storage quotas and what is used", tags, params, response: { 200: TeamQuotaSchema } } },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      requirePermission(access.permissions, 'team.view');
      return view(access.team.id);
    },
  );

  app.put(
    '/teams/:team/quota',
    {
      config: { access: 'admin', audit: 'team.quota.update' },
      schema: { summary: "Set the team's quotas (cluster administrators only); what runs keeps running, new wakes and Syncs must fit", tags, params, body: QuotaBody, response: { 200: TeamQuotaSchema } },
    },
    async (request) => {
      const teamId = request.params.team;
      const body = request.body;
      const now = deps.clock.now();
      const team = await withTransaction(deps.pool, async (db) => {
        const changed = await setTeamQuota(db, teamId, { cpu_quota_millis: body.cpu_millis, memory_quota_mib: body.memory_mib, storage_quota_gib: body.storage_gib }, now);
        if (changed) await publishEvent(db, { type: 'team.updated', at: iso(now), team_id: changed.id });
        return changed;
      });
      if (!team) throw notFound('team');
      request.auditTeamId = team.id;
      return view(team.id);
    },
  );
}
