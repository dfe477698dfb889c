// What works without credentials: the version and the OpenAPI document generated from the route schemas.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { API_VERSION, SERVER_VERSION } from '../../core/version.ts';

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
    async () => ({ version: SERVER_VERSION, api_version: API_VERSION }),
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
      },
    },
    async (request, reply) => {
      document ??= (() => {
        const text = app.swagger({ yaml: true });
        return { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` };
      })();
      reply.header('etag', document.etag).header('cache-control', 'no-cache');
      const wanted = request.headers['if-none-match'];
      if (wanted && wanted.split(',').some((tag) => tag.trim().replace(/^W\//, '') === document!.etag || tag.trim() === '*')) {
        return reply.code(304).send();
      }
      return reply.type('application/yaml; charset=utf-8').send(document.text);
    },
  );
}
