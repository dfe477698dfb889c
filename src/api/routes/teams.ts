// Teams of an organization and their members (roles admin, developer, viewer).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { orgAccess, requirePermission, teamAccess } from '../../auth/access.ts';
import { teamPermissions, teamRoles, type TeamRole } from '../../auth/permissions.ts';
import { notFound, problem } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { isUniqueViolation, withTransaction, type Queryable } from '../../store/database.ts';
import { ensureOrgMember, orgRole } from '../../store/orgs.ts';
import {
  deleteTeam,
  insertTeam,
  listTeamMembers,
  listTeams,
  removeTeamMember,
  renameTeam,
  teamRole,
  upsertTeamMember,
  type TeamRow,
} from '../../store/teams.ts';
import { findUserById } from '../../store/users.ts';
import type { ApiDeps } from '../context.ts';
import { preconditionFailed, requireIfMatch, setEtag } from '../conventions/etag.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DisplayName, Id, IfMatchHeaders, MemberSchema, TeamSchema, Uuid, iso, StringEnum } from '../schemas.ts';
import { memberView } from './orgs.ts';
import { workspaceUrls } from './workspaces.ts';
import { ownerLeft } from '../../people/owners.ts';

export function teamView(row: TeamRow, role: TeamRole | undefined, permissions: string[]) {
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    role,
    permissions,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const TeamParams = Type.Object({ team: Id });
const TeamMemberParams = Type.Object({ team: Id, user: Id });
const NewTeam = Type.Object({ org_id: Uuid, name: DisplayName }, { additionalProperties: false });
const TeamBody = Type.Object({ name: DisplayName }, { additionalProperties: false });
const TeamRoleBody = Type.Object({ role: StringEnum(teamRoles) }, { additionalProperties: false });

const nameTaken = (name: string) => problem('name-taken', 409, `The organization has a team named "${name}" already.`);
const teamIdOf = (request: { params: { team: number } }) => request.params.team;

export function registerTeamRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => deps.clock.now();

  app.post(
    '/teams',
    {
      config: { access: 'user', audit: 'team.create' },
      schema: { summary: 'Create a team in an organization; you become its admin', tags: ['teams'], body: NewTeam, response: { 201: TeamSchema } },
    },
    async (request, reply) => {
      const body = request.body;
      const user = request.principal!.user;
      const org = await orgAccess(deps.pool, user, body.org_id);
      requirePermission(org.permissions, 'team.create');
      try {
        const row = await withTransaction(deps.pool, async (db) => {
          const team = await insertTeam(db, { orgId: body.org_id, name: body.name, at: now() });
          await ensureOrgMember(db, body.org_id, user.id, now());
          await upsertTeamMember(db, team.id, user.id, 'admin', now());
          await publishEvent(db, { type: 'team.created', at: iso(now()), team_id: team.id, org_id: team.org_id });
          return team;
        });
        request.auditTarget = `/teams/${row.id}`;
        request.auditTeamId = row.id;
        setEtag(reply, row.version);
        reply.code(201).header('location', `/api/v1/teams/${row.id}`);
        return teamView(row, 'admin', teamPermissions({ isAdmin: user.isAdmin, orgRole: org.role, teamRole: 'admin' }));
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(body.name);
        throw error;
      }
    },
  );

  app.get(
    '/teams',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Teams you can see (all of them for administrators)',
        tags: ['teams'],
        querystring: Type.Object({ ...PageQuery, org: Type.Optional(Uuid) }),
        response: { 200: Page(TeamSchema) },
      },
    },
    async (request) => {
      const query = request.query;
      const user = request.principal!.user;
      const after = query.cursor ? deps.cursors.decode<number>('teams', query.cursor) : 0;
      const rows = await listTeams(deps.pool, { userId: user.id, everything: user.isAdmin, orgId: query.org }, after, pageLimit(query));
      const views = await Promise.all(rows.map((row) => standingView(deps.pool, row, user)));
      return pageOf(views, pageLimit(query), (v) => v, (last) => deps.cursors.encode('teams', last.id));
    },
  );

  app.get(
    '/teams/:team',
    { config: { access: 'user' }, schema: { summary: 'Read a team', tags: ['teams'], params: TeamParams, response: { 200: TeamSchema } } },
    async (request, reply) => {
      const access = await teamAccess(deps.pool, request.principal!.user, teamIdOf(request));
      setEtag(reply, access.team.version);
      return teamView(access.team, access.role, access.permissions);
    },
  );

  app.patch(
    '/teams/:team',
    {
      config: { access: 'user', audit: 'team.update' },
      schema: { summary: 'Rename a team (If-Match required)', tags: ['teams'], params: TeamParams, headers: IfMatchHeaders, body: TeamBody, response: { 200: TeamSchema } },
    },
    async (request, reply) => {
      const access = await teamAccess(deps.pool, request.principal!.user, teamIdOf(request));
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.update');
      const version = requireIfMatch(request, access.team.version);
      const { name } = request.body;
      try {
        const row = await withTransaction(deps.pool, async (db) => {
          const renamed = await renameTeam(db, access.team.id, name, version, now());
          if (renamed) await publishEvent(db, { type: 'team.updated', at: iso(now()), team_id: renamed.id });
          return renamed;
        });
        if (!row) throw preconditionFailed();
        setEtag(reply, row.version);
        return teamView(row, access.role, access.permissions);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
    },
  );

  app.delete(
    '/teams/:team',
    {
      config: { access: 'user', audit: 'team.delete' },
      schema: { summary: 'Delete a team (If-Match required)', tags: ['teams'], params: TeamParams, headers: IfMatchHeaders, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const access = await teamAccess(deps.pool, request.principal!.user, teamIdOf(request));
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.delete');
      const version = requireIfMatch(request, access.team.version);
      const deleted = await withTransaction(deps.pool, async (db) => {
        const done = await deleteTeam(db, access.team.id, version);
        if (done) await publishEvent(db, { type: 'team.deleted', at: iso(now()), team_id: access.team.id });
        return done;
      });
      if (!deleted) throw preconditionFailed();
      return reply.code(204).send(null);
    },
  );

  registerTeamMemberRoutes(app, deps);
}

async function standingView(db: Queryable, row: TeamRow, user: { id: number; isAdmin: boolean }) {
  const [role, owner] = await Promise.all([teamRole(db, row.id, user.id), orgRole(db, row.org_id, user.id)]);
  return teamView(row, role, teamPermissions({ isAdmin: user.isAdmin, orgRole: owner, teamRole: role }));
}

function registerTeamMemberRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/teams/:team/members',
    {
      config: { access: 'user' },
      schema: { summary: 'Members of a team', tags: ['teams'], params: TeamParams, querystring: Type.Object(PageQuery), response: { 200: Page(MemberSchema) } },
    },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, teamIdOf(request));
      requirePermission(access.permissions, 'team.members.view');
      const query = request.query;
      const scope = `team-members:${access.team.id}`;
      const after = query.cursor ? deps.cursors.decode<number>(scope, query.cursor) : 0;
      const rows = await listTeamMembers(deps.pool, access.team.id, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), memberView, (last) => deps.cursors.encode(scope, last.user_id));
    },
  );

  app.put(
    '/teams/:team/members/:user',
    {
      config: { access: 'user', audit: 'team.member.set' },
      schema: { summary: "Add a member or change a member's role", tags: ['teams'], params: TeamMemberParams, body: TeamRoleBody, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const params = request.params;
      const access = await teamAccess(deps.pool, request.principal!.user, params.team);
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.members.manage');
      if (!(await findUserById(deps.pool, params.user))) throw notFound('user');
      const { role } = request.body;
      await withTransaction(deps.pool, async (db) => {
        await ensureOrgMember(db, access.team.org_id, params.user, deps.clock.now());
        await upsertTeamMember(db, access.team.id, params.user, role, deps.clock.now());
        await publishTeamMembership(db, access.team.id, params.user, deps);
      });
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/teams/:team/members/:user',
    {
      config: { access: 'user', audit: 'team.member.remove' },
      schema: { summary: 'Remove a member from a team', tags: ['teams'], params: TeamMemberParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const params = request.params;
      const access = await teamAccess(deps.pool, request.principal!.user, params.team);
      request.auditTeamId = access.team.id;
      if (params.user !== request.principal!.user.id) requirePermission(access.permissions, 'team.members.manage');
      const removed = await withTransaction(deps.pool, async (db) => {
        const done = await removeTeamMember(db, access.team.id, params.user);
        if (done) {
          await publishTeamMembership(db, access.team.id, params.user, deps);
          await ownerLeft(db, { userId: params.user, teamIds: [access.team.id], at: deps.clock.now(), urls: workspaceUrls(deps) });
        }
        return done;
      });
      if (!removed) throw notFound('member');
      return reply.code(204).send(null);
    },
  );
}

async function publishTeamMembership(db: Queryable, teamId: number, userId: number, deps: ApiDeps) {
  const at = iso(deps.clock.now());
  await publishEvent(db, { type: 'members.updated', at, team_id: teamId });
  await publishEvent(db, { type: 'access.changed', at, user_id: userId });
}
