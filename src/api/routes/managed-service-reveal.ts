// A managed service's password shown to those who may see the workspace's secrets (`variables.manage`: developers
// and admins): POST /managed-services/{ms}/reveal answers the connection values as the last Sync gave them to the
// instance, password and URL included, so a developer can connect from their own machine through
// `svc port-forward`. A POST, so every reveal (and every refusal) is in the audit log; never cached.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { problem } from '../../core/problems.ts';
import { deployedManagedConnections } from '../../managed/connection-values.ts';
import type { ApiDeps } from '../context.ts';
import { Uuid } from '../schemas.ts';
import { managedServiceAccess } from './managed-services.ts';

export const ManagedServiceCredentialsSchema = Type.Object({
  name: Type.String({ description: 'its service name in the landscape' }),
  provider: Type.String(),
  host: Type.String({ description: 'its name on the workspace network (from your machine: svc port-forward WS NAME:PORT:LOCAL)' }),
  port: Type.Integer(),
  user: Type.Optional(Type.String()),
  database: Type.Optional(Type.String()),
  password: Type.String({ description: 'the password the instance runs with (generated or from the vault at the last Sync)' }),
  url: Type.String({ description: 'the connection URL services get as ${{ services.<name>.dsn }}, password included' }),
});

export function registerManagedServiceRevealRoute(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/managed-services/:ms/reveal',
    {
      config: { access: 'user', audit: 'managed_service.reveal' },
      schema: {
        summary: "Reveal a managed service's password and connection URL (needs variables.manage; audited)",
        tags: ['managed-services'],
        params: Type.Object({ ms: Uuid }),
        response: { 200: ManagedServiceCredentialsSchema },
      },
    },
    async (request, reply) => {
      const { row, access } = await managedServiceAccess(deps, request);
      requirePermission(access.permissions, 'variables.manage');
      if (row.deleted_at) throw problem('conflict', 409, `The managed service ${row.name} is deleted; it has no password any more.`);
      const connections = await deployedManagedConnections(deps.pool, deps.secrets, Number(row.workspace_id), { tornDown: true });
      const found = connections.find((c) => c.name === row.name && c.provider === row.provider);
      if (!found) throw problem('conflict', 409, `The deployed landscape has no managed ${row.provider} service ${row.name}; sync the landscape first.`);
      const { values } = found;
      reply.header('cache-control', 'no-store');
      return {
        name: row.name,
        provider: row.provider,
        host: values.host,
        port: values.port,
        ...(values.details.user !== undefined && { user: String(values.details.user) }),
        ...(values.details.database !== undefined && { database: String(values.details.database) }),
        password: values.secret,
        url: values.dsn,
      };
    },
  );
}
