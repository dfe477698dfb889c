import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR, DAY } from '../src/core/clock.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server?.close());

describe('creating API keys (4.2)', () => {
  test('a session creates a key: 201, token svc_<id>_<secret>, prefix, source, Location, ETag', async () => {
    const answer = await server.adminSession.post('/me/api-keys', { name: 'laptop' });
    assert.equal(answer.status, 201, answer.text);
    const key = answer.body;
    assert.match(key.token, /^svc_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.prefix, `svc_${key.id}_`);
    assert.ok(key.token.startsWith(key.prefix));
    assert.equal(key.source, 'console');
    assert.equal(key.name, 'laptop');
    assert.equal(key.expires_at, undefined);
    assert.equal(answer.headers.get('location'), `/api/v1/me/api-keys/${key.id}`);
    assert.match(answer.headers.get('etag') ?? '', /^"v\d+"$/);
    const read = await server.adminSession.get(`/me/api-keys/${key.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.token, undefined, 'the token is shown only once');
  });

  test('source cli is kept', async () => {
    const answer = await server.adminSession.post('/me/api-keys', { name: 'svc login', source: 'cli' });
    assert.equal(answer.status, 201);
    assert.equal(answer.body.source, 'cli');
  });

  test('creating a key with an API key answers 403 session-required', async () => {
    const key = await server.adminSession.mintKey();
    assertProblem(await key.post('/me/api-keys', { name: 'successor' }), 403, 'session-required');
  });

  test('names: 1 to 100 chars, no leading or trailing space', async () => {
    for (const name of ['', ' lead', 'trail ', 'x'.repeat(101), '\tx']) {
      const answer = await server.adminSession.post('/me/api-keys', { name });
      assertProblem(answer, 422, 'validation');
      assert.equal(answer.body.errors[0].pointer, '/name');
    }
    for (const name of ['x', 'x'.repeat(100), 'my key (laptop)', 'ü ß']) {
      assert.equal((await server.adminSession.post('/me/api-keys', { name })).status, 201, name);
    }
    assertProblem(await server.adminSession.post('/me/api-keys', {}), 422, 'validation');
    const unknown = await server.adminSession.post('/me/api-keys', { name: 'a', colour: 'red' });
    assertProblem(unknown, 422, 'validation');
    assert.equal(unknown.body.errors[0].pointer, '/colour');
  });

  test('expires_at must be in the future and at most one year away', async () => {
    const now = server.clock.now().getTime();
    const at = (ms: number) => new Date(now + ms).toISOString();
    for (const expires_at of [at(-1000), at(0), at(367 * DAY)]) {
      const answer = await server.adminSession.post('/me/api-keys', { name: 'k', expires_at });
      assertProblem(answer, 422, 'validation');
      assert.equal(answer.body.errors[0].pointer, '/expires_at');
    }
    assertProblem(await server.adminSession.post('/me/api-keys', { name: 'k', expires_at: 'tomorrow' }), 422, 'validation');
    const ok = await server.adminSession.post('/me/api-keys', { name: 'k', expires_at: at(365 * DAY) });
    assert.equal(ok.status, 201, ok.text);
  });
});

describe('using API keys', () => {
  let person: { session: ApiClient; key: ApiClient; id: number };
  before(async () => {
    person = await createPerson(server.admin, 'keys@example.com');
  });

  test('Authorization and Svc-Authorization: Bearer are both accepted', async () => {
    const me = await person.key.get('/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.email, 'keys@example.com');
    assert.equal(me.body.authenticated_by, 'key');
    const viaSvc = await server.anonymous.get('/me', { headers: { 'svc-authorization': `Bearer ${person.key.auth.token}` } });
    assert.equal(viaSvc.status, 200);
    const svcWins = await server.anonymous.get('/me', {
      headers: { 'svc-authorization': `Bearer ${person.key.auth.token}`, authorization: 'Basic dXNlcjpwYXNz' },
    });
    assert.equal(svcWins.status, 200, 'Authorization is left to the application when Svc-Authorization is sent');
  });

  test('missing, malformed, unknown and wrong-secret keys answer 401', async () => {
    assertProblem(await server.anonymous.get('/me'), 401, 'unauthenticated');
    assertProblem(await server.anonymous.get('/me', { headers: { authorization: 'Basic abc' } }), 401, 'unauthenticated');
    assertProblem(await server.anonymous.withToken('svc_nonsense').get('/me'), 401, 'unauthenticated');
    const token = person.key.auth.token!;
    const wrongSecret = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    assertProblem(await server.anonymous.withToken(wrongSecret).get('/me'), 401, 'unauthenticated');
    const answer = await server.anonymous.get('/me');
    assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  test('a deleted key answers 401 at once, even right after it was used (cached)', async () => {
    const key = await person.session.mintKey('doomed');
    assert.equal((await key.get('/me')).status, 200);
    const id = key.auth.token!.slice(4, 40);
    const deleted = await person.session.delete(`/me/api-keys/${id}`);
    assert.equal(deleted.status, 204);
    assertProblem(await key.get('/me'), 401, 'unauthenticated');
    assertProblem(await person.session.delete(`/me/api-keys/${id}`), 404, 'not-found');
  });

  test('a key deleted by itself stops at once (svc logout)', async () => {
    const key = await person.session.mintKey('self');
    const id = key.auth.token!.slice(4, 40);
    assert.equal((await key.delete(`/me/api-keys/${id}`)).status, 204);
    assertProblem(await key.get('/me'), 401, 'unauthenticated');
  });

  test('an expired key answers 401 at once', async () => {
    const expires_at = new Date(server.clock.now().getTime() + HOUR).toISOString();
    const created = await person.session.post('/me/api-keys', { name: 'short', expires_at });
    const key = person.key.withToken(created.body.token);
    assert.equal((await key.get('/me')).status, 200);
    server.clock.advance(HOUR);
    assertProblem(await key.get('/me'), 401, 'unauthenticated');
  });

  test('regenerate sets regenerated_at; the old secret stops at once; needs the session', async () => {
    const created = await person.session.post('/me/api-keys', { name: 'rotate' });
    const old = person.key.withToken(created.body.token);
    assert.equal((await old.get('/me')).status, 200);
    assertProblem(await old.post(`/me/api-keys/${created.body.id}/regenerate`), 403, 'session-required');
    const again = await person.session.post(`/me/api-keys/${created.body.id}/regenerate`);
    assert.equal(again.status, 200, again.text);
    assert.notEqual(again.body.token, created.body.token);
    assert.equal(again.body.id, created.body.id);
    assert.ok(again.body.regenerated_at);
    assertProblem(await old.get('/me'), 401, 'unauthenticated');
    assert.equal((await person.key.withToken(again.body.token).get('/me')).status, 200);
  });

  test('last_used_at is written on use, and again only after an hour', async () => {
    const created = await person.session.post('/me/api-keys', { name: 'usage' });
    const key = person.key.withToken(created.body.token);
    const path = `/me/api-keys/${created.body.id}`;
    assert.equal((await person.session.get(path)).body.last_used_at, undefined);
    await key.get('/me');
    const first = await waitFor(async () => (await person.session.get(path)).body.last_used_at);
    server.clock.advance(30 * 60_000);
    await key.get('/me');
    assert.equal((await person.session.get(path)).body.last_used_at, first, 'not rewritten within the hour');
    server.clock.advance(31 * 60_000);
    await key.get('/me');
    const second = await waitFor(async () => {
      const value = (await person.session.get(path)).body.last_used_at;
      return value !== first ? value : undefined;
    });
    assert.ok(new Date(second) > new Date(first));
  });

  test('keys of others are invisible (404)', async () => {
    const mine = await server.adminSession.post('/me/api-keys', { name: 'admin only' });
    assertProblem(await person.key.get(`/me/api-keys/${mine.body.id}`), 404, 'not-found');
    assertProblem(await person.key.delete(`/me/api-keys/${mine.body.id}`), 404, 'not-found');
    assertProblem(await person.session.post(`/me/api-keys/${mine.body.id}/regenerate`), 404, 'not-found');
  });

  test('the list pages newest first with a cursor', async () => {
    const names = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const other = await createPerson(server.admin, 'pager@example.com');
    server.clock.advance(1000);
    for (const name of names) {
      await other.session.post('/me/api-keys', { name });
      server.clock.advance(1000);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await other.key.get(`/me/api-keys?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.items.length <= 2);
      seen.push(...page.body.items.map((k: { name: string }) => k.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['p5', 'p4', 'p3', 'p2', 'p1', 'test key']);
  });
});

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
