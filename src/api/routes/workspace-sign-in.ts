// Sign-in on workspace addresses (spec 5, item 9): the console mints a single-use, short-lived link for one host of
// a workspace; opening it there sets that host's session cookie. `/workspace-sign-in` on the console host is where
// the router's "Sign-in required" page sends a browser: it mints the link with the console session and goes on.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound, problem } from '../../core/problems.ts';
import { hostTarget } from '../../router/hosts.ts';
import { findCustomDomainsByName } from '../../store/custom-domains.ts';
import { SIGN_IN_PATH } from '../../router/access.ts';
import { findManagedServiceByNumber } from '../../store/managed-services.ts';
import { workspaceUrlsFromBase } from '../../workspaces/view.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, Id } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const Body = Type.Object(
  {
    host: Type.Optional(Type.String({ maxLength: 253, description: 'a host of the workspace (dev URL, editor, public port, one of its managed services, a custom domain routing to it); the dev URL when absent' })),
    next: Type.Optional(Type.String({ maxLength: 2048, pattern: '^/(?!/)', patternErrorMessage: 'must be a path on this host: it starts with one /', description: 'path to open after signing in; default /' })),
  },
  { additionalProperties: false },
);

const LinkSchema = Type.Object({ url: Type.String({ description: 'open it once, within expires_at' }), expires_at: DateTime });

export function registerWorkspaceSignInRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/workspaces/:ws/sign-in-links',
    { config: { access: 'user', audit: 'workspace.sign_in_link' }, schema: { summary: 'A single-use link (2 minutes) that signs you in on a workspace address', tags: ['workspaces'], params: Type.Object({ ws: Id }), body: Body, response: { 201: LinkSchema } } },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      if (row.deleted_at) throw notFound('workspace');
      const body = request.body ?? {};
      const urls = workspaceUrlsFromBase(deps.config.baseUrl, deps.config.workspaceDomain);
      const host = (body.host ?? `w${row.id}.${urls.domain}`).toLowerCase().replace(/:\d+$/, '');
      const target = hostTarget(host, urls.domain, new URL(deps.config.baseUrl).hostname);
      // A managed-service host (ms-<number>) is one of the workspace's while its instance is live.
      const managed = target.kind === 'managed' ? await findManagedServiceByNumber(deps.pool, target.number) : undefined;
      // A team's custom domain is one of the workspace's while one of its routes leads there.
      const domain = target.kind === 'console' ? (await findCustomDomainsByName(deps.pool, host)).find((d) => d.team_id === Number(row.team_id)) : undefined;
      const ofWorkspace =
        target.kind === 'managed' ? managed !== undefined && !managed.deleted_at && Number(managed.workspace_id) === row.id
        : domain ? domain.team_id === Number(row.team_id) && domain.routes.some((r) => r.workspace_id === row.id)
        : 'workspaceId' in target && target.workspaceId === row.id;
      if (!ofWorkspace) {
        throw problem('validation', 422, `${host} is not an address of workspace ${row.id}.`, { errors: [{ pointer: '/host', message: 'is not an address of this workspace' }] });
      }
      const permission = row.restricted ? 'workspace.use' : 'workspace.view';
      if (!(access.permissions as string[]).includes(permission)) throw problem('forbidden', 403, 'This workspace is restricted to those who may use it.');
      const link = await deps.router.workspaceAccess.mintLink(row.id, host, request.principal!.user.id, body.next ?? '/');
      const port = urls.port === (urls.scheme === 'https' ? 443 : 80) ? '' : `:${urls.port}`;
      const url = `${urls.scheme}://${host}${port}${SIGN_IN_PATH}?token=${link.token}`;
      return reply.code(201).header('cache-control', 'no-store').send({ url, expires_at: link.expiresAt.toISOString() });
    },
  );
}
