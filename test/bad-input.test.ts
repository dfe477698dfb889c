// No 500 from bad input (issue 13, item 2), on every route, generated from the OpenAPI document the server serves:
// a NUL character in each string field, and "Infinity", "-Infinity", "1e400" (and the JSON literal 1e400 in a body)
// in each integer field, one bad field at a time in an otherwise valid request, as an administrator so that
// validation is reached. Each must be a 422 validation problem whose errors name the field; never a 500.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import type { Answer, ApiClient } from './helpers/client.ts';
import { bodyWith, fieldsOf, operationsOf, pathWith, sample, type Field, type Operation } from './helpers/openapi-inputs.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let operations: Operation[];
before(async () => {
  server = await startTestServer();
  const answer = await fetch(`${server.url}/api/v1/openapi.yaml`);
  operations = operationsOf(parse(await answer.text()));
});
after(async () => server?.close());

/**
 * A %00 in a path is a malformed request on both data planes (issue 13 item 3): 400 bad-request before routing, so
 * it never reaches validation; the answer must still be a problem.
 */
const isPathNul = (field: Field) => field.in === 'path' && field.schema.type === 'string';
const BAD_NUMBERS = ['Infinity', '-Infinity', '1e400'];
const LITERAL = '"\u0001literal\u0001"';

interface Case {
  label: string;
  operation: Operation;
  field: Field;
  send(client: ApiClient): Promise<Answer>;
  /** False where the bad value cannot reach svc's validation; the answer must still be a 4xx. */
  reachesValidation: boolean;
}

function clientFor(operation: Operation): ApiClient {
  return operation.security === 'session' ? server.adminSession : operation.security === 'public' ? server.anonymous : server.admin;
}

const apiPath = (path: string) => path.replace(/^\/api\/v1/, '');

function casesFor(operation: Operation, field: Field): Case[] {
  const type = field.schema.type;
  const values: unknown[] = type === 'string' ? [`${String(sample(field.schema))}\u0000`] : type === 'integer' || type === 'number' ? BAD_NUMBERS : [];
  const label = (value: unknown) => `${operation.method} ${operation.path} ${field.in} ${field.pointer} = ${JSON.stringify(value)}`;
  const base = (client: ApiClient, path: string, query = '', body?: unknown, rawBody?: string) =>
    client.request(operation.method, apiPath(path) + query, {
      ...(rawBody !== undefined ? { rawBody, headers: { 'content-type': 'application/json' } } : { body: body ?? (operation.body ? sample(operation.body) : undefined) }),
    });
  const cases: Case[] = values.map((value) => ({
    label: label(value),
    operation,
    field,
    reachesValidation: !isPathNul(field),
    send: (client) => {
      const text = String(value);
      if (field.in === 'path') return base(client, pathWith(operation, { name: field.pointer, text: encodeURIComponent(text) }));
      if (field.in === 'query') return base(client, pathWith(operation), `?${new URLSearchParams({ [field.pointer]: text })}`);
      if (field.in === 'header') return rawRequest(operation.method, pathWith(operation), { [field.pointer]: text });
      return base(client, pathWith(operation), '', bodyWith(operation.body!, field.pointer, value));
    },
  }));
  if (field.in === 'body' && (type === 'integer' || type === 'number')) {
    cases.push({
      label: label('1e400 as a JSON number'),
      operation,
      field,
      reachesValidation: true,
      send: (client) => base(client, pathWith(operation), '', undefined, JSON.stringify(bodyWith(operation.body!, field.pointer, LITERAL)).replace(JSON.stringify(LITERAL), '1e400')),
    });
  }
  return cases;
}

/** A request written byte by byte: fetch refuses to send a NUL in a header, a client on the network does not. */
function rawRequest(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(server.url);
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${url.host}`, 'connection: close', `authorization: Bearer ${server.admin.auth.token}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.end(`${lines.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, headers: new Headers(), body: text, text });
    });
  });
}

/** What is wrong with the answer to one case, or undefined when it is right. */
function fault(spoiled: Case, answer: Answer): string | undefined {
  if (answer.status >= 500 || answer.status < 400) return `${answer.status} ${answer.text.slice(0, 200)}`;
  const type = answer.headers.get('content-type')?.split(';')[0];
  if (isPathNul(spoiled.field)) {
    return answer.status === 400 && type === 'application/problem+json' && answer.body.type === 'urn:svc:problem:bad-request' ? undefined : `${answer.status} ${type} ${answer.text.slice(0, 300)}`;
  }
  if (!spoiled.reachesValidation || spoiled.field.in === 'header') return undefined;
  const pointer = spoiled.field.in === 'body' ? spoiled.field.pointer : `/${spoiled.field.pointer}`;
  const named = answer.body?.errors?.some((e: { pointer: string; in?: string }) => e.pointer === pointer && (e.in ?? 'body') === spoiled.field.in);
  if (answer.status !== 422 || type !== 'application/problem+json' || answer.body.type !== 'urn:svc:problem:validation' || !named) {
    return `${answer.status} ${type} ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

describe('no 500 from bad input, on every route of the OpenAPI document', () => {
  test('the document yields the cases the issue names (the generator is not empty)', () => {
    const labels = operations.flatMap((operation) => fieldsOf(operation).flatMap((field) => casesFor(operation, field))).map((c) => c.label);
    for (const expected of [
      'POST /api/v1/sessions body /email = "a\\u0000"',
      'POST /api/v1/orgs body /name = "a\\u0000"',
      'POST /api/v1/workspaces body /storage_gib = "Infinity"',
      'PATCH /api/v1/workspaces/{ws} body /idle_timeout_minutes = "1e400 as a JSON number"',
      'PUT /api/v1/workspaces/{ws}/variables/{name} body /value = "a\\u0000"',
      'GET /api/v1/orgs query limit = "-Infinity"',
      'GET /api/v1/workspaces/{ws} path ws = "1e400"',
    ]) {
      assert.ok(labels.includes(expected), `${expected} is not among the ${labels.length} generated cases`);
    }
  });

  test('every integer a request takes has bounds (an unbounded one would reach PostgreSQL out of range)', () => {
    const unbounded = operations.flatMap((operation) =>
      fieldsOf(operation)
        .filter((field) => field.schema.type === 'integer' && (field.schema.maximum === undefined || field.schema.minimum === undefined))
        .map((field) => `${operation.method} ${operation.path} ${field.in} ${field.pointer}`),
    );
    assert.deepEqual(unbounded, []);
  });

  test('NUL in every string field, Infinity, -Infinity and 1e400 in every integer field: 422 naming the field', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const operation of operations) {
      for (const field of fieldsOf(operation)) {
        for (const spoiled of casesFor(operation, field)) {
          const answer = await spoiled.send(clientFor(operation));
          sent += 1;
          const wrong = fault(spoiled, answer);
          if (wrong) failures.push(`${spoiled.label}: ${wrong}`);
        }
      }
    }
    assert.ok(sent > 100, `only ${sent} requests were generated`);
    assert.deepEqual(failures, [], `${failures.length} of ${sent} bad requests were not refused as 422 naming the field`);
  });

  test('a session cookie that is not percent-encoding (%ff) is a 401 problem, not a 500', async () => {
    for (const value of ['%ff', '%', 'a%00b']) {
      const answer = await fetch(`${server.url}/api/v1/me`, { headers: { cookie: `__Host-svc_session=${value}` } });
      assert.equal(answer.status, 401, `${value}: ${await answer.text()}`);
      assert.equal(answer.headers.get('content-type')?.split(';')[0], 'application/problem+json');
    }
  });

  test('a NUL in Idempotency-Key never reaches PostgreSQL', async () => {
    const answer = await rawRequest('POST', '/api/v1/orgs', { 'idempotency-key': 'key\u0000', 'content-length': '0' });
    assert.ok(answer.status >= 400 && answer.status < 500, answer.text);
  });
});
