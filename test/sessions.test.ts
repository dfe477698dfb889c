import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR, DAY, MINUTE } from '../src/core/clock.ts';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server?.close());

async function newLink(email: string): Promise<{ token: string; userId: number }> {
  const created = await server.admin.post('/users', { email, name: 'Someone', password: 'correct horse battery' });
  assert.equal(created.status, 201, created.text);
  const link = await server.admin.post(`/users/${created.body.id}/sign-in-links`);
  assert.equal(link.status, 201, link.text);
  assert.ok(link.body.url.startsWith(`${server.url}/sign-in#token=`));
  return { token: new URL(link.body.url).hash.slice('#token='.length), userId: created.body.id };
}

describe('sign-in links', () => {
  test('a link signs in once and sets __Host-svc_session (HttpOnly, Secure, SameSite=Lax, Path=/)', async () => {
    const { token, userId } = await newLink('once@example.com');
    const answer = await server.anonymous.post('/sessions', { link_token: token });
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.body.user.id, userId);
    const cookie = answer.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^__Host-svc_session=[A-Za-z0-9_-]{43}; /);
    for (const part of ['Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax', `Max-Age=${7 * 24 * 3600}`]) {
      assert.ok(cookie.split('; ').includes(part), `${part} in ${cookie}`);
    }
    assert.ok(!/Domain=/i.test(cookie), '__Host- cookies carry no Domain');
    const reused = await server.anonymous.post('/sessions', { link_token: token });
    assertProblem(reused, 403, 'sign-in-link-invalid');
    assert.equal(reused.body.title, 'This link has expired');
  });

  test('a link expires after its minutes', async () => {
    const { token } = await newLink('late@example.com');
    server.clock.advance(15 * MINUTE + 1);
    assertProblem(await server.anonymous.post('/sessions', { link_token: token }), 403, 'sign-in-link-invalid');
  });

  test('an unknown link answers 403 and a body with neither way answers 422', async () => {
    assertProblem(await server.anonymous.post('/sessions', { link_token: 'made-up' }), 403, 'sign-in-link-invalid');
    assertProblem(await server.anonymous.post('/sessions', {}), 422, 'validation');
    assertProblem(await server.anonymous.post('/sessions', { email: 'x@example.com' }), 422, 'validation');
  });

  test('only administrators create sign-in links and users', async () => {
    const person = await createPerson(server.admin, 'plain@example.com');
    assertProblem(await person.key.post(`/users/${person.id}/sign-in-links`), 403, 'forbidden');
    assertProblem(await person.key.post('/users', { email: 'new@example.com', name: 'New' }), 403, 'forbidden');
    assertProblem(await server.admin.post('/users/999999/sign-in-links'), 404, 'not-found');
  });
});

describe('passwords', () => {
  test('sign in with e-mail and password; a wrong one answers 401 without telling which part was wrong', async () => {
    await newLink('pw@example.com');
    const good = await server.anonymous.post('/sessions', { email: 'PW@example.com', password: 'correct horse battery' });
    assert.equal(good.status, 201, good.text);
    const wrong = await server.anonymous.post('/sessions', { email: 'pw@example.com', password: 'wrong password' });
    assertProblem(wrong, 401, 'sign-in-failed');
    const nobody = await server.anonymous.post('/sessions', { email: 'nobody@example.com', password: 'wrong password' });
    assertProblem(nobody, 401, 'sign-in-failed');
    assert.equal(nobody.body.detail, wrong.body.detail);
  });

  test('a user without a password sets one with the session; the current one is needed to change it', async () => {
    const person = await createPerson(server.admin, 'setpw@example.com');
    assertProblem(await person.key.put('/me/password', { new_password: 'a new password' }), 403, 'session-required');
    assertProblem(await person.session.put('/me/password', { new_password: 'short' }), 422, 'validation');
    assert.equal((await person.session.put('/me/password', { new_password: 'first password' })).status, 204);
    assert.equal((await person.session.get('/me')).body.has_password, true);
    const wrong = await person.session.put('/me/password', { current_password: 'nope', new_password: 'second password' });
    assertProblem(wrong, 422, 'validation');
    assert.equal(wrong.body.errors[0].pointer, '/current_password');
    const right = await person.session.put('/me/password', { current_password: 'first password', new_password: 'second password' });
    assert.equal(right.status, 204);
    const signIn = await server.anonymous.post('/sessions', { email: 'setpw@example.com', password: 'second password' });
    assert.equal(signIn.status, 201);
  });
});

describe('session lifetime', () => {
  test('12 hours idle ends a session; use keeps it alive', async () => {
    const person = await createPerson(server.admin, 'idle@example.com');
    server.clock.advance(11 * HOUR);
    assert.equal((await person.session.get('/me')).status, 200);
    server.clock.advance(11 * HOUR);
    assert.equal((await person.session.get('/me')).status, 200, 'used 11 h ago: still alive');
    server.clock.advance(12 * HOUR);
    assertProblem(await person.session.get('/me'), 401, 'unauthenticated');
  });

  test('7 days absolute ends a session even when used all along', async () => {
    const person = await createPerson(server.admin, 'absolute@example.com');
    for (let hours = 0; hours < 7 * 24 - 10; hours += 10) {
      server.clock.advance(10 * HOUR);
      assert.equal((await person.session.get('/me')).status, 200);
    }
    server.clock.advance(11 * HOUR);
    assertProblem(await person.session.get('/me'), 401, 'unauthenticated');
    assert.ok(7 * DAY > 0);
  });

  test('sign-out ends the session and clears the cookie', async () => {
    const person = await createPerson(server.admin, 'out@example.com');
    const out = await person.session.delete('/sessions/current');
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /__Host-svc_session=; .*Max-Age=0/);
    assertProblem(await person.session.get('/me'), 401, 'unauthenticated');
    assertProblem(await person.key.delete('/sessions/current'), 403, 'session-required');
  });
});

describe('CSRF rule for the cookie', () => {
  let session: ApiClient;
  before(async () => {
    session = (await createPerson(server.admin, 'csrf@example.com')).session;
  });

  test('a change with the cookie but without Svc-CSRF: 1 answers 403', async () => {
    assertProblem(await session.post('/orgs', { name: 'No header' }, { noCsrf: true }), 403, 'csrf');
    assertProblem(await session.post('/orgs', { name: 'Wrong value' }, { noCsrf: true, headers: { 'svc-csrf': 'yes' } }), 403, 'csrf');
  });

  test("a change with the cookie from another Origin answers 403; the console's Origin passes", async () => {
    assertProblem(await session.post('/orgs', { name: 'Evil' }, { headers: { origin: 'https://evil.example' } }), 403, 'csrf');
    assertProblem(await session.post('/orgs', { name: 'Evil' }, { headers: { origin: 'null' } }), 403, 'csrf');
    const ok = await session.post('/orgs', { name: 'Same origin' }, { headers: { origin: server.url } });
    assert.equal(ok.status, 201, ok.text);
  });

  test('reads with the cookie need no header; changes with a key need neither', async () => {
    assert.equal((await session.get('/me', { noCsrf: true })).status, 200);
    const key = await session.mintKey();
    const ok = await key.post('/orgs', { name: 'By key' }, { headers: { origin: 'https://elsewhere.example' } });
    assert.equal(ok.status, 201, ok.text);
  });
});
