// Signing in (single-use link or password) and out. Sign-in sets the __Host-svc_session cookie.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { SESSION_COOKIE, callerUser } from '../../auth/credentials.ts';
import { decoyPasswordHash, verifyPassword } from '../../auth/passwords.ts';
import { SESSION_ABSOLUTE_MS, clearedSessionCookie, endSession, redeemSignInLink, sessionCookie, startSession } from '../../auth/sessions.ts';
import { problem, validationProblem } from '../../core/problems.ts';
import { findUserByEmail, findUserById } from '../../store/users.ts';
import { sessionProvider } from '../../store/oidc.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, UserSchema } from '../schemas.ts';
import { userView } from './users.ts';

const SignIn = Type.Object(
  {
    link_token: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the token of a sign-in link' })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  },
  { additionalProperties: false, description: 'either link_token, or email and password' },
);

const SessionSchema = Type.Object({ user: UserSchema, expires_at: DateTime });

export function registerSessionRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/sessions',
    {
      config: { access: 'public', audit: 'session.create' },
      schema: { summary: 'Sign in with a sign-in link or a password', tags: ['sessions'], body: SignIn, response: { 201: SessionSchema } },
    },
    async (request, reply) => {
      const body = request.body;
      const now = deps.clock.now();
      let userId: number | undefined;
      if (body.link_token !== undefined) {
        userId = await redeemSignInLink(deps.pool, body.link_token, now);
        if (userId === undefined) {
          throw problem('sign-in-link-invalid', 403, 'Sign-in links work once and for a few minutes; ask for a new one.');
        }
      } else if (body.email !== undefined && body.password !== undefined) {
        const user = await findUserByEmail(deps.pool, body.email);
        const valid = await verifyPassword(body.password, user?.password_hash ?? decoyPasswordHash);
        if (!user || !user.password_hash || !valid) throw problem('sign-in-failed', 401, 'The e-mail or the password is wrong.');
        userId = user.id;
      } else {
        throw validationProblem([{ pointer: '/link_token', message: 'send link_token, or email and password' }]);
      }
      const user = (await findUserById(deps.pool, userId))!;
      const session = await startSession(deps.pool, user.id, now);
      request.principal = { via: 'session', user: callerUser(user), sessionHash: Buffer.alloc(0) };
      request.auditTarget = `/users/${user.id}`;
      reply.header('set-cookie', sessionCookie(SESSION_COOKIE, session.token, SESSION_ABSOLUTE_MS));
      return reply.code(201).send({ user: userView(user), expires_at: session.expiresAt.toISOString() });
    },
  );

  app.delete(
    '/sessions/current',
    {
      config: { access: 'session', audit: 'session.delete' },
      schema: {
        summary: 'Sign out: ends the browser session (200 with end_session_url when the provider it came from signs out too)',
        tags: ['sessions'],
        response: { 200: Type.Object({ end_session_url: Type.String({ description: "the provider's sign-out (RP-initiated logout): send the browser there" }) }), 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const from = principal.via === 'session' ? await sessionProvider(deps.pool, principal.sessionHash) : undefined;
      if (principal.via === 'session') await endSession(deps.pool, principal.sessionHash);
      reply.header('set-cookie', clearedSessionCookie(SESSION_COOKIE));
      const party = from && deps.oidc.providers.get(from.provider);
      const endSessionUrl = party && (await party.endSessionUrl(from.idToken, new URL('/sign-in', deps.config.baseUrl).href));
      if (endSessionUrl) return reply.code(200).send({ end_session_url: endSessionUrl });
      return reply.code(204).send(null);
    },
  );
}
