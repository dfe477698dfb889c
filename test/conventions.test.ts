import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { assertProblem, createPerson } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server?.close());

const raw = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);

describe('problems everywhere (RFC 9457)', () => {
  test('unknown route: 404 problem', async () => {
    const answer = await server.admin.get('/no/such/thing');
    assertProblem(answer, 404, 'not-found');
    assert.equal(answer.body.instance, '/api/v1/no/such/thing');
  });

  test('malformed JSON: 400 malformed-json', async () => {
    const answer = await server.admin.request('POST', '/orgs', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    assertProblem(answer, 400, 'malformed-json');
    const empty = await server.admin.request('POST', '/orgs', { rawBody: '', headers: { 'content-type': 'application/json' } });
    assertProblem(empty, 400, 'malformed-json');
  });

  test('wrong content type: 415', async () => {
    const answer = await server.admin.request('POST', '/orgs', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assertProblem(answer, 415, 'unsupported-media-type');
  });

  test('body over the limit: 413', async () => {
    const answer = await server.admin.request('POST', '/orgs', {
      rawBody: JSON.stringify({ name: 'x'.repeat(9 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(answer, 413, 'body-too-large');
  });

  test('validation errors list pointers into body, query and path', async () => {
    const body = await server.admin.post('/teams', { name: '  ', extra: 1 });
    assertProblem(body, 422, 'validation');
    const pointers = body.body.errors.map((e: { pointer: string }) => e.pointer).sort();
    assert.deepEqual(pointers, ['/extra', '/name', '/org_id']);
    const query = await server.admin.get('/teams?limit=abc');
    assertProblem(query, 422, 'validation');
    assert.deepEqual(query.body.errors.map((e: { pointer: string; in: string }) => [e.pointer, e.in]), [['/limit', 'query']]);
    const path = await server.admin.get('/teams/0');
    assertProblem(path, 422, 'validation');
    assert.equal(path.body.errors[0].in, 'path');
  });

  test('a value that does not fit a pattern is told what is allowed, in words, never the regular expression', async () => {
    const team = await server.admin.post('/teams', { name: ' padded ', org_id: 1 });
    assertProblem(team, 422, 'validation');
    assert.deepEqual(team.body.errors.find((e: { pointer: string }) => e.pointer === '/name'), { pointer: '/name', message: 'must not start or end with white space', in: 'body' });
    const variable = await server.admin.put('/workspaces/1/variables/1BAD', { value: 'x' });
    assertProblem(variable, 422, 'validation');
    assert.equal(variable.body.detail, '/name must be a variable name: letters, digits and _, not starting with a digit, at most 128 characters');
    assert.doesNotMatch(JSON.stringify(variable.body), /pattern|\^|\$"/);
  });

  test('every pattern of the API carries patternErrorMessage, the words its error says', async () => {
    const document = parse(await (await raw('/api/v1/openapi.yaml')).text());
    const unworded: string[] = [];
    let patterns = 0;
    const walk = (node: unknown, where: string): void => {
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (typeof schema.pattern === 'string') patterns++;
      if (typeof schema.pattern === 'string' && !/^must /.test(String(schema.patternErrorMessage))) unworded.push(`${where}: ${schema.pattern}`);
      for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
    };
    walk(document.paths, '');
    walk(document.components, '#/components');
    assert.ok(patterns >= 10, `${patterns} patterns documented`);
    assert.deepEqual(unworded, []);
  });

  test('every answer carries Svc-Version 1.5.0, errors included', async () => {
    const key = { authorization: `Bearer ${server.admin.auth.token}` };
    const answers = {
      version: await raw('/api/v1/version'),
      'HEAD version': await raw('/api/v1/version', { method: 'HEAD' }),
      me: await raw('/api/v1/me'),
      'no route': await raw('/api/v1/nowhere'),
      openapi: await raw('/api/v1/openapi.yaml'),
      'sign-in page': await raw('/sign-in'),
      'console page': await raw('/'),
      'bad query': await raw('/api/v1/workspaces?limit=many', { headers: key }),
      'bad percent-encoding (a framework error)': await raw('/api/v1/workspaces/%E0%A4%A', { headers: key }),
      'not JSON': await raw('/api/v1/orgs', { method: 'POST', headers: { ...key, 'content-type': 'text/plain' }, body: 'x' }),
      'malformed JSON': await raw('/api/v1/orgs', { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body: '{' }),
      'encoded NUL': await raw('/api/v1/version%00'),
      'over-long address': await raw(`/api/v1/${'a'.repeat(9000)}`),
      'event stream': await raw('/api/v1/events', { headers: key, signal: AbortSignal.timeout(10_000) }),
      'unknown key (refused in the caller hook)': await raw('/api/v1/me', { headers: { authorization: 'Bearer svc_1_nope' } }),
      'stream route without a key': await raw('/api/v1/workspaces/1/exec'),
      'body over the limit': await raw('/api/v1/orgs', { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body: `{"name":"${'x'.repeat(9 * 2 ** 20)}"}` }),
    };
    for (const [name, response] of Object.entries(answers)) {
      assert.equal(response.headers.get('svc-version'), '1.5.0', `${name}: ${response.status}`);
      await response.body?.cancel();
    }
    assert.equal(answers['bad percent-encoding (a framework error)'].status, 400);
    assert.deepEqual([answers['unknown key (refused in the caller hook)'].status, answers['stream route without a key'].status, answers['body over the limit'].status], [401, 401, 413]);
  });
});

describe('without credentials', () => {
  test('GET /version', async () => {
    const answer = await server.anonymous.get('/version');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { version: '1.5.0', api_version: '1.5.0' });
  });

  test('GET /openapi.yaml is generated from the routes, with ETag and 304', async () => {
    const first = await raw('/api/v1/openapi.yaml');
    assert.equal(first.status, 200);
    assert.match(first.headers.get('content-type') ?? '', /yaml/);
    const document = parse(await first.text());
    assert.equal(document.openapi, '3.1.0');
    assert.equal(document.info.version, '1.5.0');
    for (const path of ['/api/v1/me/api-keys', '/api/v1/teams/{team}', '/api/v1/audit-log', '/api/v1/version']) {
      assert.ok(document.paths[path], `${path} documented`);
    }
    const create = document.paths['/api/v1/me/api-keys'].post;
    assert.ok(create.requestBody.content['application/json'].schema.properties.name);
    assert.ok(create.responses['201']);
    assert.ok(create.responses['4XX'] ?? create.responses['4xx']);
    const etag = first.headers.get('etag')!;
    assert.ok(etag);
    const again = await raw('/api/v1/openapi.yaml', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    const stale = await raw('/api/v1/openapi.yaml', { headers: { 'if-none-match': '"other"' } });
    assert.equal(stale.status, 200);
  });
});

describe('the svc.yml schema', () => {
  test('GET /schemas/svc.json serves the JSON Schema without credentials, with ETag and 304', async () => {
    const first = await raw('/api/v1/schemas/svc.json');
    assert.equal(first.status, 200);
    assert.match(first.headers.get('content-type') ?? '', /^application\/schema\+json/);
    const schema = await first.json();
    assert.equal(schema.$id, 'urn:svc:schema:svc-v1');
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    const etag = first.headers.get('etag')!;
    assert.equal((await raw('/api/v1/schemas/svc.json', { headers: { 'if-none-match': etag } })).status, 304);
    assert.equal((await raw('/api/v1/schemas/svc.json', { headers: { 'if-none-match': `W/${etag}` } })).status, 304);
  });
});

describe('pagination', () => {
  test('limit must be 1 to 200', async () => {
    for (const limit of ['0', '201', '-1', '1.5']) {
      const answer = await server.admin.get(`/me/api-keys?limit=${limit}`);
      assertProblem(answer, 422, 'validation');
      assert.equal(answer.body.errors[0].pointer, '/limit');
    }
    assert.equal((await server.admin.get('/me/api-keys?limit=1')).status, 200);
    assert.equal((await server.admin.get('/me/api-keys?limit=200')).status, 200);
  });

  test('a forged cursor, or one from another list, answers 422 invalid-cursor', async () => {
    const forged = Buffer.from(JSON.stringify(['2020-01-01T00:00:00.000Z', '00000000-0000-0000-0000-000000000000'])).toString('base64url');
    for (const cursor of ['garbage', `${forged}.AAAAAAAAAAAAAAAAAAAAAA`, `${forged}`, 'a.b.c']) {
      assertProblem(await server.admin.get(`/me/api-keys?cursor=${encodeURIComponent(cursor)}`), 422, 'invalid-cursor');
    }
    for (let i = 0; i < 3; i++) await server.admin.post('/orgs', { name: `Paged org ${i}` });
    const orgs = await server.admin.get('/orgs?limit=1');
    assert.ok(orgs.body.next_cursor);
    assertProblem(await server.admin.get(`/me/api-keys?cursor=${encodeURIComponent(orgs.body.next_cursor)}`), 422, 'invalid-cursor');
    const next = await server.admin.get(`/orgs?limit=1&cursor=${encodeURIComponent(orgs.body.next_cursor)}`);
    assert.equal(next.status, 200);
  });
});

describe('ETag and If-Match', () => {
  test('a change without If-Match answers 428, with a stale one 412, with the current one 200 and a new ETag', async () => {
    const created = await server.admin.post('/orgs', { name: 'Etag org' });
    const path = `/orgs/${created.body.id}`;
    const read = await server.admin.get(path);
    const etag = read.headers.get('etag')!;
    assert.equal(etag, created.headers.get('etag'));
    assertProblem(await server.admin.patch(path, { name: 'Renamed' }), 428, 'precondition-required');
    const renamed = await server.admin.patch(path, { name: 'Renamed' }, { headers: { 'if-match': etag } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.notEqual(renamed.headers.get('etag'), etag);
    assertProblem(await server.admin.patch(path, { name: 'Again' }, { headers: { 'if-match': etag } }), 412, 'precondition-failed');
    assertProblem(await server.admin.delete(path, { headers: { 'if-match': etag } }), 412, 'precondition-failed');
    assertProblem(await server.admin.delete(path), 428, 'precondition-required');
    assert.equal((await server.admin.delete(path, { headers: { 'if-match': renamed.headers.get('etag')! } })).status, 204);
    assertProblem(await server.admin.get(path), 404, 'not-found');
  });
});

describe('Idempotency-Key (4.1 rules 1 to 6)', () => {
  const key = (name: string) => ({ headers: { 'idempotency-key': `${name}-${Math.random()}` } });

  test('1 and 2: the first request runs; a repeat replays its answer with Idempotent-Replayed: true', async () => {
    const options = key('replay');
    const first = await server.admin.post('/orgs', { name: 'Idempotent org' }, options);
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const second = await server.admin.post('/orgs', { name: 'Idempotent org' }, options);
    assert.equal(second.status, 201, second.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(second.headers.get('location'), first.headers.get('location'));
    const orgs = await server.admin.get('/orgs?limit=200');
    assert.equal(orgs.body.items.filter((o: { name: string }) => o.name === 'Idempotent org').length, 1);
  });

  test('3: two concurrent duplicates: one runs, the other gets 409 with Retry-After: 1', async () => {
    const options = key('concurrent');
    const answers = await Promise.all([
      server.admin.post('/users', { email: 'race@example.com', name: 'Race', password: 'a long password' }, options),
      server.admin.post('/users', { email: 'race@example.com', name: 'Race', password: 'a long password' }, options),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 409], answers.map((a) => a.text).join('\n'));
    const conflict = answers.find((a) => a.status === 409)!;
    assertProblem(conflict, 409, 'idempotency-in-flight');
    assert.equal(conflict.headers.get('retry-after'), '1');
  });

  test('4: the same key with another body, path or method answers 422', async () => {
    const options = key('mismatch');
    assert.equal((await server.admin.post('/orgs', { name: 'Mismatch one' }, options)).status, 201);
    assertProblem(await server.admin.post('/orgs', { name: 'Mismatch two' }, options), 422, 'idempotency-key-reused');
    const otherPath = await server.adminSession.post('/me/api-keys', { name: 'Mismatch one' }, options);
    assertProblem(otherPath, 422, 'idempotency-key-reused');
  });

  test('5: a failed attempt is not kept; the retry runs again', async () => {
    const options = key('retry');
    await server.admin.post('/orgs', { name: 'Taken name' });
    assertProblem(await server.admin.post('/orgs', { name: 'Taken name' }, options), 409, 'name-taken');
    const other = await server.admin.post('/orgs', { name: 'Free name' }, options);
    assert.equal(other.status, 201, 'after a failure the key is free, even for another body');
  });

  test('6: a body above 1 MiB with a key answers 413; without a key it is accepted by the body limit', async () => {
    const big = { name: 'big', source: 'console', expires_at: undefined, padding: 'x'.repeat(1024 * 1024) };
    assertProblem(await server.admin.post('/orgs', big, key('big')), 413, 'idempotency-body-too-large');
    assertProblem(await server.admin.post('/orgs', big), 422, 'validation');
  });

  test('keys are kept per user: another user may use the same key', async () => {
    const shared = { headers: { 'idempotency-key': `shared-${Math.random()}` } };
    assert.equal((await server.admin.post('/orgs', { name: 'Per user A' }, shared)).status, 201);
    const person = await createPerson(server.admin, 'idem@example.com');
    const other = await person.key.post('/orgs', { name: 'Per user B' }, shared);
    assert.equal(other.status, 201, other.text);
    assert.equal(other.headers.get('idempotent-replayed'), null);
  });

  test('an Idempotency-Key over 255 characters answers 422', async () => {
    const answer = await server.admin.post('/orgs', { name: 'Long key' }, { headers: { 'idempotency-key': 'k'.repeat(256) } });
    assertProblem(answer, 422, 'validation');
  });

  test('kept 24 hours: afterwards the same key runs again', async () => {
    const options = key('expiry');
    assert.equal((await server.admin.post('/orgs', { name: 'Day one' }, options)).status, 201);
    server.clock.advance(24 * 3600_000 + 1);
    const later = await server.admin.post('/orgs', { name: 'Day two' }, options);
    assert.equal(later.status, 201, later.text);
    assert.equal(later.headers.get('idempotent-replayed'), null);
  });
});

describe('rate limiting', () => {
  test('over the limit: 429 with Retry-After', async () => {
    const limited = await startTestServer({ rateLimit: 20 });
    try {
      let answer;
      for (let i = 0; i < 25; i++) {
        answer = await limited.anonymous.get('/version');
        if (answer.status === 429) break;
      }
      assertProblem(answer!, 429, 'rate-limited');
      assert.ok(Number(answer!.headers.get('retry-after')) >= 1);
      limited.clock.advance(60_000);
      assert.equal((await limited.anonymous.get('/version')).status, 200, 'tokens come back with time');
    } finally {
      await limited.close();
    }
  });
});
