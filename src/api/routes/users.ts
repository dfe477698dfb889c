// People: administrators create users, list them, and issue sign-in links for them.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerUser, type CallerUser } from '../../auth/credentials.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { createSignInLink } from '../../auth/sessions.ts';
import { notFound, problem } from '../../core/problems.ts';
import { isUniqueViolation } from '../../store/database.ts';
import { findUserById, insertUser, listUsers, type UserRow } from '../../store/users.ts';
import type { ApiDeps } from '../context.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DateTime, Id, UserSchema, Uuid, iso } from '../schemas.ts';
import { mailSignInLink } from '../../people/sign-in-mail.ts';
import { MailSchema, outboxMailView } from './mail-view.ts';

export const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$', patternErrorMessage: 'must be an email address (name@domain) without white space' });
export const Password = Type.String({ minLength: 8, maxLength: 1024, description: 'at least 8 characters' });

export function userView(row: UserRow) {
  return callerView(callerUser(row));
}

export function callerView(user: CallerUser) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    permissions: user.isAdmin ? ['platform.admin'] : [],
    has_password: user.hasPassword,
    created_at: iso(user.createdAt),
  };
}

const NewUser = Type.Object(
  {
    email: Email,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.Optional(Password),
    admin: Type.Optional(Type.Boolean({ default: false, description: 'grants platform.admin' })),
  },
  { additionalProperties: false },
);

const UserParams = Type.Object({ user: Id });
const SignInLinkSchema = Type.Object({
  url: Type.Optional(Type.String({ description: 'the link; absent when it went by mail' })),
  expires_at: DateTime,
  mail: Type.Optional(Type.Object({ id: Uuid, recipient: Type.String(), ...MailSchema.properties }, { description: 'the mail carrying the link (with mail: true)' })),
});

const SignInLinkBody = Type.Object(
  { mail: Type.Optional(Type.Boolean({ default: false, description: "send the link to the user's address through the mail outbox instead of answering it" })) },
  { additionalProperties: false },
);

export function registerUserRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/users',
    {
      config: { access: 'admin', audit: 'user.create' },
      schema: { summary: 'Create a user (administrators)', tags: ['users'], body: NewUser, response: { 201: UserSchema } },
    },
    async (request, reply) => {
      const body = request.body;
      const passwordHash = body.password === undefined ? null : await hashPassword(body.password);
      try {
        const row = await insertUser(deps.pool, { ...body, passwordHash, isAdmin: body.admin ?? false, at: deps.clock.now() });
        request.auditTarget = `/users/${row.id}`;
        return reply.code(201).header('location', `/api/v1/users/${row.id}`).send(userView(row));
      } catch (error) {
        if (isUniqueViolation(error)) throw problem('name-taken', 409, `A user with the e-mail ${body.email} exists already.`);
        throw error;
      }
    },
  );

  app.get(
    '/users',
    {
      config: { access: 'admin' },
      schema: { summary: 'List users (administrators)', tags: ['users'], querystring: Type.Object(PageQuery), response: { 200: Page(UserSchema) } },
    },
    async (request) => {
      const query = request.query;
      const after = query.cursor ? deps.cursors.decode<number>('users', query.cursor) : 0;
      const rows = await listUsers(deps.pool, Number(after) || 0, pageLimit(query));
      return pageOf(rows, pageLimit(query), userView, (last) => deps.cursors.encode('users', last.id));
    },
  );

  app.get(
    '/users/:user',
    {
      config: { access: 'admin' },
      schema: { summary: 'Read a user (administrators)', tags: ['users'], params: UserParams, response: { 200: UserSchema } },
    },
    async (request) => {
      const row = await findUserById(deps.pool, request.params.user);
      if (!row) throw notFound('user');
      return userView(row);
    },
  );

  app.post(
    '/users/:user/sign-in-links',
    {
      config: { access: 'admin', audit: 'user.sign_in_link.create' },
      // The body is optional: a POST without one asks for the link itself, as it always did.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Create a single-use sign-in link for a user (administrators)',
        tags: ['users'],
        params: UserParams,
        body: SignInLinkBody,
        response: { 201: SignInLinkSchema },
      },
    },
    async (request, reply) => {
      const row = await findUserById(deps.pool, request.params.user);
      if (!row) throw notFound('user');
      const linkRequest = { userId: row.id, createdBy: request.principal!.user.id, baseUrl: deps.config.baseUrl, minutes: deps.config.signInLinkMinutes, now: deps.clock.now() };
      if (request.body?.mail) {
        if (!deps.config.smtpUrl) {
          throw problem('not-available', 501, 'Not sent: no mail server configured (svc server --smtp-url). Leave out mail to get the link and hand it over yourself.');
        }
        const { mail, expiresAt } = await mailSignInLink(deps.pool, { ...linkRequest, recipient: row.email });
        return reply.code(201).send({ expires_at: iso(expiresAt), mail: { id: mail.id, recipient: mail.recipient, ...outboxMailView(mail) } });
      }
      const link = await createSignInLink(deps.pool, linkRequest);
      return reply.code(201).send({ url: link.url, expires_at: iso(link.expiresAt) });
    },
  );
}
