// Single sign-on with OpenID Connect: the providers for the sign-in page, a flow's start (a redirect to the
// provider) and its callback (the session cookie as a link sign-in makes it, then back to the console), and linking
// a provider to the signed-in account. A refused callback is a page saying why to a browser, a problem otherwise.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SESSION_COOKIE } from '../../auth/credentials.ts';
import { SESSION_ABSOLUTE_MS, sessionCookie } from '../../auth/sessions.ts';
import { Problem } from '../../core/problems.ts';
import { finishFlow, relyingParty, startFlow } from '../../people/oidc-sign-in.ts';
import { readCookie } from '../../auth/credentials.ts';
import { insertAuditEntry } from '../../store/audit.ts';
import { listIdentitiesOfUser } from '../../store/oidc.ts';
import { API_PREFIX, type ApiDeps } from '../context.ts';
import { DateTime } from '../schemas.ts';

/** Binds a flow to the browser that started it (login CSRF); lives as long as a flow may. */
export const FLOW_COOKIE = '__Host-svc_oidc';
const flowCookie = (value: string) => `${FLOW_COOKIE}=${value}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=600`;
const clearedFlowCookie = `${FLOW_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`;

const ProviderParams = Type.Object({ provider: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,39}$', patternErrorMessage: 'must be a provider id: lower-case letters, digits and dashes, at most 40', description: 'the provider id the operator set' }) });
const ProviderSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'what the sign-in button says' }),
  start_url: Type.String({ description: 'where the browser goes to sign in (add ?return=<console path>)' }),
});
const IdentitySchema = Type.Object({
  provider: Type.String(),
  issuer: Type.String(),
  subject: Type.String(),
  email: Type.Optional(Type.String()),
  created_at: DateTime,
  last_sign_in_at: Type.Optional(DateTime),
});
const StartQuery = Type.Object({ return: Type.Optional(Type.String({ maxLength: 2000, description: 'console path to come back to' })) });
const LinkBody = Type.Object({ return: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false });
const redirectResponse = Type.Null({ description: 'a redirect (Location)' });

export function registerOidcRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const startUrl = (id: string) => `${API_PREFIX}/auth/oidc/${id}/start`;

  app.get(
    '/auth/providers',
    { config: { access: 'public' }, schema: { summary: 'The single sign-on providers of this installation (for the sign-in page)', tags: ['sessions'], response: { 200: Type.Array(ProviderSchema) } } },
    async () => [...deps.oidc.providers.values()].map((p) => ({ id: p.settings.id, name: p.settings.name, start_url: startUrl(p.settings.id) })),
  );

  app.get(
    '/auth/oidc/:provider/start',
    {
      config: { access: 'public' },
      schema: { summary: 'Sign in with a provider: redirects to it', tags: ['sessions'], params: ProviderParams, querystring: StartQuery, response: { 302: redirectResponse } },
    },
    async (request, reply) => {
      try {
        const flow = await startFlow(deps.oidc, request.params.provider, { returnTo: request.query.return ?? '/', linkUserId: null });
        return reply.header('set-cookie', flowCookie(flow.binding)).header('cache-control', 'no-store').redirect(flow.url, 302);
      } catch (error) {
        return refusal(request, reply, error);
      }
    },
  );

  app.get(
    '/auth/oidc/:provider/callback',
    {
      config: { access: 'public' },
      schema: {
        summary: "The provider's answer: signs in (sets the session cookie) or links, then redirects to the console",
        tags: ['sessions'],
        params: ProviderParams,
        querystring: Type.Object({}, { additionalProperties: Type.String() }),
        response: { 302: redirectResponse },
      },
    },
    async (request, reply) => {
      const callbackUrl = new URL(`${API_PREFIX}/auth/oidc/${request.params.provider}/callback`, deps.config.baseUrl);
      callbackUrl.search = new URL(request.url, 'http://x').search;
      try {
        const result = await finishFlow(deps.oidc, request.params.provider, callbackUrl, readCookie(request.headers.cookie, FLOW_COOKIE), request.ip ?? null);
        const cookies = [clearedFlowCookie];
        if (result.kind === 'signed-in') cookies.push(sessionCookie(SESSION_COOKIE, result.session.token, SESSION_ABSOLUTE_MS));
        await insertAuditEntry(deps.pool, {
          at: deps.clock.now(),
          actor_id: result.userId,
          action: result.kind === 'signed-in' ? 'session.create' : 'oidc.identity.link',
          method: 'GET',
          target: `/users/${result.userId}`,
          team_id: null,
          outcome: 302,
          address: request.ip ?? null,
          detail: `provider ${request.params.provider}`,
        });
        return reply.header('set-cookie', cookies).header('cache-control', 'no-store').redirect(result.returnTo, 302);
      } catch (error) {
        reply.header('set-cookie', clearedFlowCookie);
        return refusal(request, reply, error);
      }
    },
  );

  app.post(
    '/me/identities/:provider',
    {
      config: { access: 'session', audit: 'oidc.identity.link_start' },
      schema: {
        summary: 'Start linking a provider to your account: go to authorization_url; its callback links it',
        tags: ['me'],
        params: ProviderParams,
        body: LinkBody,
        response: { 200: Type.Object({ authorization_url: Type.String() }) },
      },
    },
    async (request, reply) => {
      relyingParty(deps.oidc, request.params.provider);
      const flow = await startFlow(deps.oidc, request.params.provider, { returnTo: request.body.return ?? '/settings', linkUserId: request.principal!.user.id });
      return reply.header('set-cookie', flowCookie(flow.binding)).send({ authorization_url: flow.url });
    },
  );

  app.get(
    '/me/identities',
    { config: { access: 'user' }, schema: { summary: 'The providers linked to your account', tags: ['me'], response: { 200: Type.Array(IdentitySchema) } } },
    async (request) =>
      (await listIdentitiesOfUser(deps.pool, request.principal!.user.id)).map((row) => ({
        provider: row.provider,
        issuer: row.issuer,
        subject: row.subject,
        email: row.email ?? undefined,
        created_at: row.created_at.toISOString(),
        last_sign_in_at: row.last_sign_in_at?.toISOString(),
      })),
  );
}

/** A browser (it asks for HTML) gets a page saying why; an API caller the problem. */
function refusal(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  if (!(error instanceof Problem) || !String(request.headers.accept ?? '').includes('text/html')) throw error;
  return reply.code(error.status).type('text/html; charset=utf-8').header('cache-control', 'no-store').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(refusalPage(error));
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function refusalPage(error: Problem): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(error.title)} · svc</title>
<meta name="viewport" content="width=device-width"><style>body{font:15px system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:560px;margin:64px auto;background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:28px 32px}h1{font-size:22px;margin:0 0 16px}
.type{color:#5b6473;font-size:12px}</style></head><body><main><h1>${escape(error.title)}</h1><p id="detail">${escape(error.detail ?? '')}</p>
<p><a href="/sign-in">Back to sign-in</a></p><p class="type">${escape(error.type)}</p></main></body></html>`;
}
