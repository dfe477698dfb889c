// What works without credentials: the version and the OpenAPI document generated from the route schemas.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { API_VERSION, SERVER_VERSION } from '../../core/version.ts';
import { svcSchema } from '../../landscape/index.ts';

function etagOfText(text: string): string {
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}

/** If-None-Match holds the current ETag (weak or strong) or `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  return header !== undefined && header.split(',').some((tag) => tag.trim() === '*' || tag.trim().replace(/^W\//, '') === etag);
}

const versionAnswer = { version: SERVER_VERSION, api_version: API_VERSION };

/** 304 has no body: the copy the client holds (its ETag in If-None-Match) is current. */
const notModified = Type.Null({ description: 'Not modified: If-None-Match holds the current ETag' });

export function registerMetaRoutes(app: FastifyInstance): void {
  app.get(
    '/version',
    {
      config: { access: 'public' },
      schema: {
        summary: "The server's version",
        tags: ['meta'],
        response: { 200: Type.Object({ version: Type.String(), api_version: Type.String() }) },
      },
    },
    // Not async: a value returned as it is costs no promise (the API's cheapest call, e.g. a load balancer's probe).
    () => versionAnswer,
  );

  const schemaText = JSON.stringify(svcSchema, null, 2);
  const schemaEtag = etagOfText(schemaText);
  app.get(
    '/schemas/svc.json',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The JSON Schema of svc.yml (svc/v1), for validators and editors',
        tags: ['meta'],
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
        produces: ['application/schema+json'],
        response: {
          200: { description: 'The JSON Schema (draft 2020-12)', content: { 'application/schema+json': { schema: Type.Record(Type.String(), Type.Unknown()) } } },
          304: notModified,
        },
      },
    },
    async (request, reply) => {
      reply.header('etag', schemaEtag).header('cache-control', 'public, max-age=300');
      if (matchesEtag(request.headers['if-none-match'], schemaEtag)) return reply.code(304).send();
      return reply.type('application/schema+json; charset=utf-8').send(schemaText);
    },
  );

  let document: { text: string; etag: string } | undefined;
  app.get(
    '/openapi.yaml',
    {
      config: { access: 'public' },
      schema: {
        summary: 'The OpenAPI document of this server, generated from its route schemas',
        tags: ['meta'],
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
        produces: ['application/yaml'],
        response: {
          200: { description: 'The OpenAPI 3.1 document as YAML', content: { 'application/yaml': { schema: Type.String() } } },
          304: notModified,
        },
      },
    },
    async (request, reply) => {
      document ??= (() => {
        const text = app.swagger({ yaml: true });
        return { text, etag: etagOfText(text) };
      })();
      reply.header('etag', document.etag).header('cache-control', 'no-cache');
      if (matchesEtag(request.headers['if-none-match'], document.etag)) return reply.code(304).send();
      return reply.type('application/yaml; charset=utf-8').send(document.text);
    },
  );
}
