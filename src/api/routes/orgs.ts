// Organizations and their members (roles owner and member).
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { orgAccess, requirePermission } from '../../auth/access.ts';
import { orgPermissions, orgRoles, type OrgRole } from '../../auth/permissions.ts';
import { notFound, problem } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { isUniqueViolation, withTransaction } from '../../store/database.ts';
import {
  countOrgTeams,
  deleteOrg,
  insertOrg,
  listOrgMembers,
  listOrgs,
  lockAndCountOwners,
  orgRole,
  orgTeamIds,
  removeOrgMember,
  renameOrg,
  upsertOrgMember,
  type MemberRow,
  type OrgRow,
} from '../../store/orgs.ts';
import { findUserById } from '../../store/users.ts';
import type { ApiDeps } from '../context.ts';
import { workspaceUrls } from './workspaces.ts';
import { ownerLeft } from '../../people/owners.ts';
import { preconditionFailed, requireIfMatch, setEtag } from '../conventions/etag.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DisplayName, Id, IfMatchHeaders, MemberSchema, OrgSchema, Uuid, iso, StringEnum } from '../schemas.ts';

export function orgView(row: OrgRow, role: OrgRole | undefined, permissions: string[]) {
  return { id: row.id, name: row.name, role, permissions, created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}

export function memberView(row: MemberRow) {
  return { user_id: row.user_id, email: row.email, name: row.name, role: row.role, created_at: iso(row.created_at) };
}

const OrgParams = Type.Object({ org: Uuid });
const OrgMemberParams = Type.Object({ org: Uuid, user: Id });
const OrgBody = Type.Object({ name: DisplayName }, { additionalProperties: false });
const OrgRoleBody = Type.Object(
  { role: StringEnum(orgRoles) },
  { additionalProperties: false },
);

const nameTaken = (name: string) => problem('name-taken', 409, `An organization named "${name}" exists already.`);

export function registerOrgRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => deps.clock.now();

  app.post(
    '/orgs',
    {
      config: { access: 'user', audit: 'org.create' },
      schema: { summary: 'Create an organization; you become its owner', tags: ['orgs'], body: OrgBody, response: { 201: OrgSchema } },
    },
    async (request, reply) => {
      const { name } = request.body;
      try {
        const row = await withTransaction(deps.pool, (db) =>
          insertOrg(db, { id: randomUUID(), name, ownerId: request.principal!.user.id, at: now() }),
        );
        request.auditTarget = `/orgs/${row.id}`;
        setEtag(reply, row.version);
        reply.code(201).header('location', `/api/v1/orgs/${row.id}`);
        return orgView(row, 'owner', orgPermissions({ isAdmin: request.principal!.user.isAdmin, orgRole: 'owner' }));
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
    },
  );

  app.get(
    '/orgs',
    {
      config: { access: 'user' },
      schema: { summary: 'Organizations you belong to (all of them for administrators)', tags: ['orgs'], querystring: Type.Object(PageQuery), response: { 200: Page(OrgSchema) } },
    },
    async (request) => {
      const query = request.query;
      const user = request.principal!.user;
      const after = query.cursor ? deps.cursors.decode<{ name: string; id: string }>('orgs', query.cursor) : undefined;
      const rows = await listOrgs(deps.pool, user.id, user.isAdmin, after, pageLimit(query));
      const roles = await Promise.all(rows.map((row) => orgRole(deps.pool, row.id, user.id)));
      const views = rows.map((row, i) => orgView(row, roles[i], orgPermissions({ isAdmin: user.isAdmin, orgRole: roles[i] })));
      return pageOf(views, pageLimit(query), (v) => v, (last) => deps.cursors.encode('orgs', { name: last.name, id: last.id }));
    },
  );

  app.get(
    '/orgs/:org',
    {
      config: { access: 'user' },
      schema: { summary: 'Read an organization', tags: ['orgs'], params: OrgParams, response: { 200: OrgSchema } },
    },
    async (request, reply) => {
      const access = await orgAccess(deps.pool, request.principal!.user, request.params.org);
      setEtag(reply, access.org.version);
      return orgView(access.org, access.role, access.permissions);
    },
  );

  app.patch(
    '/orgs/:org',
    {
      config: { access: 'user', audit: 'org.update' },
      schema: { summary: 'Rename an organization (If-Match required)', tags: ['orgs'], params: OrgParams, headers: IfMatchHeaders, body: OrgBody, response: { 200: OrgSchema } },
    },
    async (request, reply) => {
      const access = await orgAccess(deps.pool, request.principal!.user, request.params.org);
      requirePermission(access.permissions, 'org.update');
      const version = requireIfMatch(request, access.org.version);
      const { name } = request.body;
      try {
        const row = await withTransaction(deps.pool, async (db) => {
          const renamed = await renameOrg(db, access.org.id, name, version, now());
          if (renamed) await publishEvent(db, { type: 'org.updated', at: iso(now()), org_id: renamed.id });
          return renamed;
        });
        if (!row) throw preconditionFailed();
        setEtag(reply, row.version);
        return orgView(row, access.role, access.permissions);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
    },
  );

  app.delete(
    '/orgs/:org',
    {
      config: { access: 'user', audit: 'org.delete' },
      schema: { summary: 'Delete an organization without teams (If-Match required)', tags: ['orgs'], params: OrgParams, headers: IfMatchHeaders, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const access = await orgAccess(deps.pool, request.principal!.user, request.params.org);
      requirePermission(access.permissions, 'org.delete');
      const version = requireIfMatch(request, access.org.version);
      const teams = await countOrgTeams(deps.pool, access.org.id);
      if (teams > 0) throw problem('org-not-empty', 409, `Delete its ${teams} team(s) first.`);
      const deleted = await withTransaction(deps.pool, async (db) => {
        const done = await deleteOrg(db, access.org.id, version);
        if (done) await publishEvent(db, { type: 'org.deleted', at: iso(now()), org_id: access.org.id });
        return done;
      });
      if (!deleted) throw preconditionFailed();
      return reply.code(204).send(null);
    },
  );

  registerOrgMemberRoutes(app, deps);
}

function registerOrgMemberRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/orgs/:org/members',
    {
      config: { access: 'user' },
      schema: { summary: 'Members of an organization', tags: ['orgs'], params: OrgParams, querystring: Type.Object(PageQuery), response: { 200: Page(MemberSchema) } },
    },
    async (request) => {
      const access = await orgAccess(deps.pool, request.principal!.user, request.params.org);
      requirePermission(access.permissions, 'org.members.view');
      const query = request.query;
      const scope = `org-members:${access.org.id}`;
      const after = query.cursor ? deps.cursors.decode<number>(scope, query.cursor) : 0;
      const rows = await listOrgMembers(deps.pool, access.org.id, after, pageLimit(query));
      return pageOf(rows, pageLimit(query), memberView, (last) => deps.cursors.encode(scope, last.user_id));
    },
  );

  app.put(
    '/orgs/:org/members/:user',
    {
      config: { access: 'user', audit: 'org.member.set' },
      schema: { summary: "Add a member or change a member's role", tags: ['orgs'], params: OrgMemberParams, body: OrgRoleBody, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const params = request.params;
      const access = await orgAccess(deps.pool, request.principal!.user, params.org);
      requirePermission(access.permissions, 'org.members.manage');
      const { role } = request.body;
      if (!(await findUserById(deps.pool, params.user))) throw notFound('user');
      await withTransaction(deps.pool, async (db) => {
        const owners = await lockAndCountOwners(db, params.org);
        if (role !== 'owner' && owners === 1 && (await orgRole(db, params.org, params.user)) === 'owner') {
          throw problem('last-owner', 409, 'An organization needs an owner; make someone else owner first.');
        }
        await upsertOrgMember(db, params.org, params.user, role, deps.clock.now());
        await publishMembership(db, params.org, params.user, deps);
      });
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/orgs/:org/members/:user',
    {
      config: { access: 'user', audit: 'org.member.remove' },
      schema: { summary: 'Remove a member (and from every team of the organization)', tags: ['orgs'], params: OrgMemberParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const params = request.params;
      const access = await orgAccess(deps.pool, request.principal!.user, params.org);
      if (params.user !== request.principal!.user.id) requirePermission(access.permissions, 'org.members.manage');
      await withTransaction(deps.pool, async (db) => {
        const owners = await lockAndCountOwners(db, params.org);
        const role = await orgRole(db, params.org, params.user);
        if (!role) throw notFound('member');
        if (role === 'owner' && owners === 1) {
          throw problem('last-owner', 409, 'An organization needs an owner; make someone else owner first.');
        }
        const teamIds = await orgTeamIds(db, params.org);
        await removeOrgMember(db, params.org, params.user);
        await publishMembership(db, params.org, params.user, deps);
        await ownerLeft(db, { userId: params.user, teamIds, at: deps.clock.now(), urls: workspaceUrls(deps) });
      });
      return reply.code(204).send(null);
    },
  );
}

async function publishMembership(db: Parameters<typeof publishEvent>[0], orgId: string, userId: number, deps: ApiDeps) {
  const at = iso(deps.clock.now());
  await publishEvent(db, { type: 'members.updated', at, org_id: orgId });
  await publishEvent(db, { type: 'access.changed', at, user_id: userId });
}
