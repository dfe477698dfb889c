// The caller: who they are, and their own password.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { CallerUser } from '../../auth/credentials.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { problem } from '../../core/problems.ts';
import { findUserById, updatePassword } from '../../store/users.ts';
import type { ApiDeps } from '../context.ts';
import { UserSchema, StringEnum } from '../schemas.ts';
import { Password, callerView } from './users.ts';

const MeSchema = Type.Object({
  ...UserSchema.properties,
  authenticated_by: StringEnum(['key', 'session']),
});

/**
 * The caller's view as JSON text, made once per cached caller (a key's cached user object lives until the key cache
 * drops it; a session's is made per request): GET /me with a key is the API's most frequent call, and its answer
 * leaves as this text, with no serializer run per request (the schema's fields only: Static<typeof MeSchema>).
 */
const meTexts = { key: new WeakMap<CallerUser, string>(), session: new WeakMap<CallerUser, string>() };
function meText(user: CallerUser, via: 'key' | 'session'): string {
  const made = meTexts[via].get(user);
  if (made !== undefined) return made;
  const view: Static<typeof MeSchema> = { ...callerView(user), authenticated_by: via };
  const text = JSON.stringify(view);
  meTexts[via].set(user, text);
  return text;
}

export function registerMeRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    { config: { access: 'user' }, schema: { summary: 'The caller', tags: ['me'], response: { 200: MeSchema } } },
    // Not async: the cached text sent as it is costs no promise (a string with a JSON media type is not serialized;
    // the schema types the answer as the object whose JSON it is).
    (request, reply) => void reply.type('application/json; charset=utf-8').send(meText(request.principal!.user, request.principal!.via) as never),
  );

  app.put(
    '/me/password',
    {
      config: { access: 'session', audit: 'user.password.update' },
      schema: {
        summary: 'Set or change your password (browser session)',
        tags: ['me'],
        body: Type.Object(
          { current_password: Type.Optional(Type.String({ maxLength: 1024 })), new_password: Password },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const row = (await findUserById(deps.pool, request.principal!.user.id))!;
      if (row.password_hash && !(await verifyPassword(body.current_password ?? '', row.password_hash))) {
        throw problem('validation', 422, 'The current password is wrong.', {
          errors: [{ pointer: '/current_password', message: 'does not match your password' }],
        });
      }
      await updatePassword(deps.pool, row.id, await hashPassword(body.new_password), deps.clock.now());
      return reply.code(204).send(null);
    },
  );
}
