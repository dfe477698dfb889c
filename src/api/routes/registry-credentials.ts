// A team's container registry credentials (issue 15, item 3): added or replaced per registry host, listed without
// the password, removed. Team members read the list (team.view); changing it is a team setting (team.update).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess } from '../../auth/access.ts';
import { notFound, problem } from '../../core/problems.ts';
import { publishEvent } from '../../events/publish.ts';
import { isRegistryHost, normalizeRegistryHost } from '../../images/reference.ts';
import { registryCredentialPlace } from '../../images/team-credentials.ts';
import { withTransaction } from '../../store/database.ts';
import { deleteRegistryCredential, listRegistryCredentials, setRegistryCredential, type RegistryCredentialRow } from '../../store/registry-credentials.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, Id, iso } from '../schemas.ts';

const Registry = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[A-Za-z0-9.:\\[\\]-]+$',
  patternErrorMessage: 'must be a host or host:port',
  description: 'registry host as image references name it: `registry.example.com:5000`, `ghcr.io`, `docker.io`',
});
const NewCredential = Type.Object(
  {
    registry: Registry,
    username: Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:\\s]+$', patternErrorMessage: 'must have no colon and no white space', description: 'no colon or white space (basic auth)' }),
    password: Type.String({ minLength: 1, maxLength: 4096, description: 'a password or token; sealed at rest and never shown again' }),
  },
  { additionalProperties: false },
);
const CredentialSchema = Type.Object({ registry: Type.String(), username: Type.String(), created_at: DateTime, updated_at: DateTime });
const TeamParams = Type.Object({ team: Id });
const RegistryParams = Type.Object({ team: Id, registry: Registry });

const view = (row: RegistryCredentialRow) => ({ registry: row.registry, username: row.username, created_at: iso(row.created_at), updated_at: iso(row.updated_at) });

/** The registry as stored: lowercase, Docker Hub's aliases as docker.io; refused when it is not a host[:port]. */
function registryName(text: string, pointer: string, where?: 'path'): string {
  const registry = normalizeRegistryHost(text);
  if (!isRegistryHost(registry)) {
    throw problem('validation', 422, `"${text}" is not a registry host (host or host:port, as in image references).`, {
      errors: [{ pointer, message: 'must be a host or host:port', ...(where ? { in: where } : {}) }],
    });
  }
  return registry;
}

export function registerRegistryCredentialRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['teams'];

  app.get(
    '/teams/:team/registry-credentials',
    {
      config: { access: 'user' },
      schema: { summary: "The team's container registry credentials (without passwords)", tags, params: TeamParams, response: { 200: Type.Object({ items: Type.Array(CredentialSchema) }) } },
    },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      requirePermission(access.permissions, 'team.view');
      return { items: (await listRegistryCredentials(deps.pool, access.team.id)).map(view) };
    },
  );

  app.post(
    '/teams/:team/registry-credentials',
    {
      config: { access: 'user', audit: 'registry_credential.set' },
      schema: {
        summary: "Add or replace the team's credentials for a registry; pulls of the team's images from that host use them",
        tags,
        params: TeamParams,
        body: NewCredential,
        response: { 200: CredentialSchema, 201: CredentialSchema },
      },
    },
    async (request, reply) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.update');
      const body = request.body;
      const registry = registryName(body.registry, '/registry');
      const at = deps.clock.now();
      const saved = await withTransaction(deps.pool, async (db) => {
        const sealed = deps.secrets.seal(body.password, registryCredentialPlace(access.team.id, registry));
        const row = await setRegistryCredential(db, { teamId: access.team.id, registry, username: body.username, sealed, at });
        await publishEvent(db, { type: 'team.updated', at: iso(at), team_id: access.team.id });
        return row;
      });
      request.auditTarget = `/teams/${access.team.id}/registry-credentials/${registry}`;
      reply.code(saved.created ? 201 : 200);
      return view(saved);
    },
  );

  app.delete(
    '/teams/:team/registry-credentials/:registry',
    {
      config: { access: 'user', audit: 'registry_credential.delete' },
      schema: { summary: "Remove the team's credentials for a registry", tags, params: RegistryParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const params = request.params;
      const access = await teamAccess(deps.pool, request.principal!.user, params.team);
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.update');
      const registry = registryName(params.registry, '/registry', 'path');
      const removed = await withTransaction(deps.pool, async (db) => {
        const done = await deleteRegistryCredential(db, access.team.id, registry);
        if (done) await publishEvent(db, { type: 'team.updated', at: iso(deps.clock.now()), team_id: access.team.id });
        return done;
      });
      if (!removed) throw notFound('registry credential');
      return reply.code(204).send(null);
    },
  );
}
