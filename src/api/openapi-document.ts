// The OpenAPI document of the API without a running server or database: the app is built with only what route
// registration reads (the configuration and a log); no handler runs, so nothing else of the dependencies is touched.
// `npm run sdk` generates the SDK from it; GET /api/v1/openapi.yaml serves the same document.
import { loadServerConfig } from '../core/config.ts';
import { buildApi } from './app.ts';
import type { ApiDeps } from './context.ts';

export type OpenApiDocument = Record<string, any>;

export async function openApiDocument(): Promise<OpenApiDocument> {
  const registrationDeps = { config: loadServerConfig([], {}), log: () => undefined } as Partial<ApiDeps> as ApiDeps;
  const app = await buildApi(registrationDeps, undefined);
  try {
    await app.ready();
    return app.swagger() as unknown as OpenApiDocument;
  } finally {
    await app.close();
  }
}
