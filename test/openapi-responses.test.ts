// Every answer of every route is described in the OpenAPI document: the SDK's types come from it, so a route whose
// response has no schema would hand clients `unknown` (or nothing). Built without a server (src/api/openapi-document.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openApiDocument, type OpenApiDocument } from '../src/api/openapi-document.ts';

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
/** Statuses that have no body by definition (101: a WebSocket route's upgrade; 302: single sign-on's redirects, the answer is the Location). */
const BODILESS = new Set(['101', '204', '205', '302', '304']);

/** `METHOD path status: what is missing` for each response without a schema. */
export function responsesWithoutSchema(document: OpenApiDocument): string[] {
  const missing: string[] = [];
  for (const [path, item] of Object.entries<any>(document.paths ?? {})) {
    for (const method of METHODS.filter((m) => item[m])) {
      const where = `${method.toUpperCase()} ${path}`;
      const responses = Object.entries<any>(item[method].responses ?? {});
      const success = item[method]['x-svc-websocket'] ? /^101$/ : /^[23]/;
      if (!responses.some(([status]) => success.test(status))) missing.push(`${where}: no success response`);
      for (const [status, response] of responses) {
        const content = Object.entries<any>(response.content ?? {});
        if (BODILESS.has(status)) {
          if (content.length > 0) missing.push(`${where} ${status}: a body on a status that has none`);
        } else if (content.length === 0) missing.push(`${where} ${status}: no content`);
        for (const [media, entry] of content) if (!entry.schema) missing.push(`${where} ${status} ${media}: no schema`);
      }
    }
  }
  return missing;
}

test('every response of every route has a schema in the OpenAPI document', async () => {
  const document = await openApiDocument();
  assert.ok(Object.keys(document.paths).length > 50, 'the document lists the routes');
  assert.deepEqual(responsesWithoutSchema(document), []);
});

test('the walk finds a response without a schema (it is no test that cannot fail)', async () => {
  const document = structuredClone(await openApiDocument());
  delete document.paths['/api/v1/version'].get.responses['200'].content['application/json'].schema;
  document.paths['/api/v1/me'].get.responses = { '4XX': document.paths['/api/v1/me'].get.responses['4XX'] };
  assert.deepEqual(responsesWithoutSchema(document), [
    'GET /api/v1/version 200 application/json: no schema',
    'GET /api/v1/me: no success response',
  ]);
});

test('the WebSocket routes are in the document: GET with the upgrade answered 101, the subprotocol each speaks', async () => {
  const document = await openApiDocument();
  const streams = Object.entries<any>(document.paths).flatMap(([path, item]) => (item.get?.['x-svc-websocket'] ? [[path, item.get]] : []));
  assert.deepEqual(Object.fromEntries(streams.map(([path, get]) => [path, get['x-svc-websocket'].subprotocol])), {
    '/api/v1/workspaces/{ws}/exec': 'v5.channel.k8s.io',
    '/api/v1/workspaces/{ws}/port-forward': 'v4.channel.k8s.io',
    '/api/v1/workspaces/{ws}/ssh': 'svc.ssh.v1',
  });
  for (const [path, get] of streams) {
    assert.deepEqual(Object.keys(get.responses).sort(), ['101', '4XX', '5XX'], path);
    assert.deepEqual(get.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name), ['upgrade', 'sec-websocket-protocol'], path);
  }
  const port = document.paths['/api/v1/workspaces/{ws}/port-forward'].get.parameters.find((p: any) => p.name === 'port');
  assert.equal(port.required, true);
});
