// The CLI's typed client of the API: openapi-fetch's interface over the SDK's generated paths
// (`client.GET('/api/v1/workspaces/{ws}', { params: { path: { ws } } })`, answered `{ data }` or `{ error }` with
// the `response`), and openapi-fetch's own serializers of the path and the query, over the CLI's node:http transport.
// openapi-fetch's createClient is not used here because it makes fetch's Headers and Request for every call (and
// tests every body against FormData), which loads undici's bundle: docs/cli.md, "Start-up". What openapi-fetch
// does with an answer is done the same way below; the CLI sends JSON bodies only and uses no middleware.
import { createFinalURL, createQuerySerializer, defaultPathSerializer, type Client } from 'openapi-fetch';
import type { HttpAnswer, HttpRequest } from './http-transport.ts';

interface CallOptions {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown>; header?: Record<string, unknown> };
  headers?: Record<string, unknown>;
  body?: unknown;
  parseAs?: 'json' | 'text' | 'stream';
  signal?: AbortSignal;
}

type Answer = { data?: unknown; error?: unknown; response: HttpAnswer };

const methods = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

/**
 * The typed client over `send`. Its answers' `response` is the transport's HttpAnswer (status, ok, headers.get,
 * text(), json(), body), which is what the CLI reads of fetch's Response; the type says Response, as openapi-fetch's.
 */
export function createTypedClient<Paths extends {}>(baseUrl: string, send: (request: HttpRequest) => Promise<HttpAnswer>): Client<Paths> {
  const base = baseUrl.replace(/\/$/, '');
  const querySerializer = createQuerySerializer();

  async function call(method: string, schemaPath: string, options: CallOptions = {}): Promise<Answer> {
    const { params = {}, body, parseAs = 'json', signal } = options;
    const url = createFinalURL(schemaPath, { baseUrl: base, params, querySerializer, pathSerializer: defaultPathSerializer });
    // Like openapi-fetch: JSON bodies; headers of the call, then of params.header; null removes one.
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    for (const given of [options.headers, params.header]) {
      for (const [name, value] of Object.entries(given ?? {})) {
        if (value === null) delete headers[name.toLowerCase()];
        else if (value !== undefined) headers[name.toLowerCase()] = String(value);
      }
    }
    const response = await send({ method, url: new URL(url), headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    // What openapi-fetch makes of an answer.
    const contentLength = response.headers.get('content-length');
    if (response.status === 204 || method === 'HEAD' || (contentLength === '0' && !response.headers.get('transfer-encoding')?.includes('chunked'))) {
      await response.text().catch(() => ''); // nothing to read; the connection stays for the next request
      return response.ok ? { data: undefined, response } : { error: undefined, response };
    }
    if (response.ok) {
      if (parseAs === 'stream') return { data: response.body, response };
      const raw = await response.text();
      return { data: parseAs === 'json' ? (raw ? JSON.parse(raw) : undefined) : raw, response };
    }
    let error: unknown = await response.text();
    try {
      error = JSON.parse(error as string);
    } catch {
      // the text as it is
    }
    return { error, response };
  }

  const client = Object.fromEntries(methods.map((method) => [method, (schemaPath: string, options?: CallOptions) => call(method, schemaPath, options)]));
  return client as unknown as Client<Paths>;
}
