// Personal API keys (2.2, 4.2, 4.4). Minting a key (create, regenerate) needs the browser session, so a
// leaked key cannot mint its successor. Delete and regenerate take no If-Match: revoking must be one call.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { apiKeyPrefix, formatApiKeyToken, mintApiKeySecret, newApiKeyId } from '../../auth/api-key-tokens.ts';
import { DAY } from '../../core/clock.ts';
import { notFound, validationProblem } from '../../core/problems.ts';
import { deleteApiKey, findApiKey, insertApiKey, listApiKeys, regenerateApiKey, type ApiKeyRow } from '../../store/api-keys.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { setEtag } from '../conventions/etag.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { ApiKeySchema, ApiKeyWithToken, DateTime, DisplayName, Uuid, iso, isoOrUndefined, StringEnum } from '../schemas.ts';

const MAX_LIFETIME_MS = 366 * DAY;

export function apiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    source: row.source,
    prefix: apiKeyPrefix(row.id),
    created_at: iso(row.created_at),
    regenerated_at: isoOrUndefined(row.regenerated_at),
    last_used_at: isoOrUndefined(row.last_used_at),
    expires_at: isoOrUndefined(row.expires_at),
  };
}

const NewApiKey = Type.Object(
  {
    name: DisplayName,
    source: Type.Optional(
      StringEnum(['console', 'cli'], { default: 'console', description: '`cli` when minted by `svc login`' }),
    ),
    expires_at: Type.Optional(DateTime),
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ key: Uuid });

/** In the future and at most one year away (a year of 366 days, so "one year from today" always fits). */
function checkExpiry(expiresAt: string | undefined, now: Date): Date | null {
  if (expiresAt === undefined) return null;
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime()) throw validationProblem([{ pointer: '/expires_at', message: 'must be in the future' }]);
  if (at.getTime() - now.getTime() > MAX_LIFETIME_MS) {
    throw validationProblem([{ pointer: '/expires_at', message: 'must be at most one year away' }]);
  }
  return at;
}

async function ownKey(request: RequestWithParams<{ key: string }>, deps: ApiDeps): Promise<ApiKeyRow> {
  const row = await findApiKey(deps.pool, request.params.key);
  if (!row || row.user_id !== request.principal!.user.id) throw notFound('API key');
  return row;
}

export function registerApiKeyRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/me/api-keys',
    {
      config: { access: 'session', audit: 'api_key.create' },
      schema: {
        summary: 'Create an API key (browser session only)',
        tags: ['api-keys'],
        body: NewApiKey,
        response: { 201: ApiKeyWithToken },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const now = deps.clock.now();
      const expiresAt = checkExpiry(body.expires_at, now);
      const id = newApiKeyId();
      const { secret, secretHash } = mintApiKeySecret();
      const row = await insertApiKey(deps.pool, {
        id,
        userId: request.principal!.user.id,
        name: body.name,
        source: body.source ?? 'console',
        secretHash,
        at: now,
        expiresAt,
      });
      request.auditTarget = `/me/api-keys/${id}`;
      setEtag(reply, row.version);
      reply.code(201).header('location', `/api/v1/me/api-keys/${id}`);
      return { ...apiKeyView(row), token: formatApiKeyToken(id, secret) };
    },
  );

  app.get(
    '/me/api-keys',
    {
      config: { access: 'user' },
      schema: { summary: 'List your API keys, newest first', tags: ['api-keys'], querystring: Type.Object(PageQuery), response: { 200: Page(ApiKeySchema) } },
    },
    async (request) => {
      const query = request.query;
      const after = query.cursor ? deps.cursors.decode<[string, string]>('api-keys', query.cursor) : undefined;
      const rows = await listApiKeys(
        deps.pool,
        request.principal!.user.id,
        after ? { at: new Date(after[0]), id: after[1] } : undefined,
        pageLimit(query),
      );
      return pageOf(rows, pageLimit(query), apiKeyView, (last) => deps.cursors.encode('api-keys', [iso(last.created_at), last.id]));
    },
  );

  app.get(
    '/me/api-keys/:key',
    {
      config: { access: 'user' },
      schema: { summary: 'Read one of your API keys', tags: ['api-keys'], params: KeyParams, response: { 200: ApiKeySchema } },
    },
    async (request, reply) => {
      const row = await ownKey(request, deps);
      setEtag(reply, row.version);
      return apiKeyView(row);
    },
  );

  app.delete(
    '/me/api-keys/:key',
    {
      config: { access: 'user', audit: 'api_key.delete' },
      schema: { summary: 'Delete an API key; it stops working at once', tags: ['api-keys'], params: KeyParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const key = request.params.key;
      const since = Date.now();
      if (!(await deleteApiKey(deps.pool, request.principal!.user.id, key))) throw notFound('API key');
      // every server of the installation forgot it before the answer (docs/topology.md)
      await deps.credentials.invalidateEverywhere(`key:${key}`, since);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/me/api-keys/:key/regenerate',
    {
      config: { access: 'session', audit: 'api_key.regenerate' },
      schema: {
        summary: 'Give an API key a new secret; the old one stops working at once (browser session only)',
        tags: ['api-keys'],
        params: KeyParams,
        response: { 200: ApiKeyWithToken },
      },
    },
    async (request, reply) => {
      const existing = await ownKey(request, deps);
      const { secret, secretHash } = mintApiKeySecret();
      const since = Date.now();
      const row = await regenerateApiKey(deps.pool, existing.user_id, existing.id, secretHash, deps.clock.now());
      if (!row) throw notFound('API key');
      await deps.credentials.invalidateEverywhere(`key:${row.id}`, since);
      setEtag(reply, row.version);
      return { ...apiKeyView(row), token: formatApiKeyToken(row.id, secret) };
    },
  );
}
