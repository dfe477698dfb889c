// The caller's dotfiles repository (issue 34 item 3): `GET/PUT/DELETE /me/dotfiles`. Applied in HOME of every
// workspace they own at its first start (docs/workspaces.md, "Dotfiles"). A URL carrying a password is refused:
// the address is stored and shown as it is, so a secret in it would leak.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { problem } from '../../core/problems.ts';
import { findDotfilesUrl, setDotfilesUrl } from '../../store/users.ts';
import type { ApiDeps } from '../context.ts';

const DotfilesSchema = Type.Object(
  { url: Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], { description: 'The dotfiles repository; null when none is set' }) },
  { additionalProperties: false },
);

/** Refuses what svc would not clone, and any address with a password in it. */
export function checkDotfilesUrl(url: string, allowLocal: boolean): void {
  const refuse = (detail: string, message: string) => {
    throw problem('repository-not-allowed', 422, detail, { errors: [{ pointer: '/url', message }] });
  };
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(url)) {
    refuse('A dotfiles URL must not carry a password: svc keeps and shows the address as it is. Give it without, and store the credential with `svc git-credentials add HOST`.', 'carries a password');
  }
  const remote = /^(https?|ssh|git):\/\/[^/\s]+\/\S+$/.test(url) || /^[\w.-]+@[\w.-]+:\S+$/.test(url);
  const local = /^file:\/\/\/\S+$/.test(url) || url.startsWith('/');
  if (remote || (local && allowLocal)) return;
  refuse(
    local ? 'Dotfiles from local paths are turned off on this installation; its operator allows them with --allow-local-repositories true.' : `"${url}" is not a git URL.`,
    local ? 'local repositories are not allowed here' : 'is not a git URL',
  );
}

export function registerDotfilesRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['me'];
  app.get(
    '/me/dotfiles',
    { config: { access: 'user' }, schema: { summary: 'Your dotfiles repository', tags, response: { 200: DotfilesSchema } } },
    async (request) => ({ url: await findDotfilesUrl(deps.pool, request.principal!.user.id) }),
  );
  app.put(
    '/me/dotfiles',
    {
      config: { access: 'user', audit: 'user.dotfiles.update' },
      schema: {
        summary: 'Set your dotfiles repository (applied at the first start of each workspace you own)',
        tags,
        body: Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false }),
        response: { 200: DotfilesSchema },
      },
    },
    async (request) => {
      const url = request.body.url.trim();
      // `own` (npm run up's default) checks a workspace's path at create; a dotfiles path is taken only with `true`
      checkDotfilesUrl(url, deps.config.allowLocalRepositories === true);
      await setDotfilesUrl(deps.pool, request.principal!.user.id, url, deps.clock.now());
      return { url };
    },
  );
  app.delete(
    '/me/dotfiles',
    { config: { access: 'user', audit: 'user.dotfiles.delete' }, schema: { summary: 'Forget your dotfiles repository', tags, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await setDotfilesUrl(deps.pool, request.principal!.user.id, null, deps.clock.now());
      return reply.code(204).send(null);
    },
  );
}
