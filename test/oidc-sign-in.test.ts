// Single sign-on (issue 39) against a real OpenID Provider on loopback (oidc-provider) and, for forged ID tokens, a
// tiny provider of the test's own that signs what the test asks: first sign-in in an allowed domain, one outside
// refused, group -> team role and back, forged tokens refused, two providers, `svc login` through a provider,
// RP-initiated logout, and the link sign-in unchanged.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { CookieJar, browserRequest, signInVia, startTestProvider, type TestProvider } from './helpers/oidc-provider.ts';
import { startSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let corp: TestProvider;
let partner: TestProvider;
let forger: ForgingProvider;
let teamId: number;
let orgId: string;

const SESSION = '__Host-svc_session';

before(async () => {
  corp = await startTestProvider();
  partner = await startTestProvider();
  forger = await startForgingProvider();
  const providers = [
    {
      id: 'corp',
      name: 'Corp SSO',
      issuer: corp.issuer,
      clientId: 'svc',
      clientSecret: 'corp-secret',
      scopes: ['openid', 'email', 'profile', 'groups'],
      allowedDomains: ['corp.example'],
      roleRules: [
        { name: 'developers', value: 'svc-developers', team: 'Acme/Core', role: 'developer' },
        { name: 'admins', value: 'svc-admins', platformAdmin: true },
      ],
    },
    { id: 'partner', name: 'Partner SSO', issuer: partner.issuer, clientId: 'svc-p', clientSecret: 'partner-secret', scopes: ['openid', 'email'], allowedDomains: ['partner.example'] },
    { id: 'forged', name: 'Forger', issuer: forger.issuer, clientId: 'svc-f', clientSecret: 'forged-secret', allowedDomains: ['corp.example'] },
  ];
  server = await startTestServer({ env: { SVC_OIDC_PROVIDERS: JSON.stringify(providers) } });
  for (const [op, id, clientId, secret] of [[corp, 'corp', 'svc', 'corp-secret'], [partner, 'partner', 'svc-p', 'partner-secret']] as const) {
    op.configure({ clientId, clientSecret: secret, redirectUris: [`${server.url}/api/v1/auth/oidc/${id}/callback`], postLogoutRedirectUris: [`${server.url}/sign-in`] });
  }
  forger.redirectUri = `${server.url}/api/v1/auth/oidc/forged/callback`;
  const org = await server.admin.post('/orgs', { name: 'Acme' });
  assert.equal(org.status, 201, org.text);
  orgId = org.body.id;
  const team = await server.admin.post('/teams', { org_id: orgId, name: 'Core' });
  assert.equal(team.status, 201, team.text);
  teamId = team.body.id;
});

after(async () => {
  await server?.close();
  await corp?.close();
  await partner?.close();
  await forger?.close();
});

/** The user's role in the team, or undefined when not a member. */
async function teamRoleOf(userId: number): Promise<string | undefined> {
  const answer = await server.admin.get(`/teams/${teamId}/members?limit=100`);
  assert.equal(answer.status, 200, answer.text);
  return answer.body.items.find((m: { user_id: number }) => m.user_id === userId)?.role;
}
const isAdmin = async (client: ApiClient) => ((await client.get('/me')).body.permissions as string[]).includes('platform.admin');

const start = (provider: string, back = '/') => `${server.url}/api/v1/auth/oidc/${provider}/start?return=${encodeURIComponent(back)}`;

/** The browser's round trip; the session client when svc signed it in. */
async function signIn(provider: string, login: string, jar = new CookieJar(), back = '/') {
  const { response, url } = await signInVia(jar, start(provider, back), login);
  const cookie = jar.get(server.url, SESSION);
  return { response, url, jar, client: cookie ? new ApiClient(server.url, { cookie }) : undefined };
}

test('the providers are listed for the sign-in page, without credentials', async () => {
  const answer = await server.anonymous.get('/auth/providers');
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.body, [
    { id: 'corp', name: 'Corp SSO', start_url: '/api/v1/auth/oidc/corp/start' },
    { id: 'partner', name: 'Partner SSO', start_url: '/api/v1/auth/oidc/partner/start' },
    { id: 'forged', name: 'Forger', start_url: '/api/v1/auth/oidc/forged/start' },
  ]);
  assertProblem(await server.anonymous.get('/auth/oidc/nobody/start'), 404, 'oidc-provider-unknown');
});

test('a first sign-in in an allowed domain makes the account and the session; the start carries PKCE, state and nonce', async () => {
  corp.users.set('ada', { email: 'ada@corp.example', name: 'Ada Lovelace' });
  const jar = new CookieJar();
  const first = await browserRequest(jar, start('corp', '/workspaces'));
  assert.equal(first.status, 302);
  const authorize = new URL(first.headers.get('location')!);
  assert.equal(authorize.origin, corp.issuer);
  for (const name of ['state', 'nonce', 'code_challenge']) assert.ok(authorize.searchParams.get(name), name);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  const { response, client } = await signIn('corp', 'ada', jar, '/workspaces');
  assert.equal(response.status, 302);
  assert.equal(response.headers.get('location'), '/workspaces');
  assert.match(response.headers.getSetCookie().join('\n'), /__Host-svc_session=[^;]+; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=604800/);
  const me = await client!.get('/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.email, 'ada@corp.example');
  assert.equal(me.body.name, 'Ada Lovelace');
  const identities = await client!.get('/me/identities');
  assert.equal(identities.body.length, 1);
  assert.equal(identities.body[0].provider, 'corp');
  assert.equal(identities.body[0].subject, 'ada');
  // The next sign-in finds the same account by (issuer, subject), also after the address changed at the provider.
  corp.users.set('ada', { email: 'ada.l@corp.example', name: 'Ada Lovelace' });
  const again = await signIn('corp', 'ada');
  assert.equal((await again.client!.get('/me')).body.id, me.body.id);
});

test('an address outside the allowed domains, or not verified, is refused with a page saying why', async () => {
  corp.users.set('eve', { email: 'eve@elsewhere.example' });
  const outside = await signIn('corp', 'eve');
  assert.equal(outside.response.status, 403);
  assert.match(outside.response.headers.get('content-type')!, /text\/html/);
  const page = await outside.response.text();
  assert.match(page, /This account may not sign in here/);
  assert.match(page, /eve@elsewhere\.example may not make an account here: Corp SSO admits addresses of corp\.example/);
  assert.equal(outside.client, undefined);
  corp.users.set('mallory', { email: 'mallory@corp.example', emailVerified: false });
  const unverified = await signIn('corp', 'mallory');
  assert.equal(unverified.response.status, 403);
  assert.match(await unverified.response.text(), /has not verified your address mallory@corp\.example/);
  // An API caller gets the problem.
  corp.users.set('eve2', { email: 'eve2@elsewhere.example' });
  const json = await signInVia(new CookieJar(), start('corp'), 'eve2', 'application/json');
  assert.equal(json.response.status, 403);
  const body = (await json.response.json()) as { type: string };
  assert.equal(body.type, 'urn:svc:problem:oidc-sign-in-refused');
});

test('an open invitation lets an address outside the domains in, with the invitation\'s roles', async () => {
  const invited = await server.admin.post(`/orgs/${orgId}/invitations`, { email: 'guest@outside.example' });
  assert.equal(invited.status, 201, invited.text);
  corp.users.set('guest', { email: 'guest@outside.example' });
  const { response, client } = await signIn('corp', 'guest');
  assert.equal(response.status, 302, await response.text());
  const orgs = await client!.get('/orgs');
  assert.ok(orgs.body.items.some((o: { id: string }) => o.id === orgId), orgs.text);
});

test('a group gives a team role at sign-in; removed at the provider, the role goes at the next sign-in with events and audit entries naming the rule', async () => {
  corp.users.set('grace', { email: 'grace@corp.example', groups: ['svc-developers'] });
  const first = await signIn('corp', 'grace');
  const grace = first.client!;
  const userId = (await grace.get('/me')).body.id;
  assert.equal(await teamRoleOf(userId), 'developer');
  const audit = await server.admin.get(`/audit-log?action=oidc.role.grant&actor=${userId}`);
  assert.equal(audit.status, 200, audit.text);
  assert.ok(audit.body.items.some((e: { target: string; detail?: string }) => e.target === `/teams/${teamId}/members/${userId}` && e.detail === 'rule corp/developers: gives team role developer'), audit.text);

  const events = await EventStream.open(grace);
  const team = await EventStream.open(server.admin, `?team=${teamId}`);
  try {
    await events.next('ready');
    await team.next('ready');
    corp.users.set('grace', { email: 'grace@corp.example', groups: [] });
    const second = await signIn('corp', 'grace');
    assert.equal(second.response.status, 302);
    await events.next('access.changed');
    await team.next('members.updated', (data) => data.team_id === teamId);
    assert.equal(await teamRoleOf(userId), undefined);
    const revoked = await server.admin.get(`/audit-log?action=oidc.role.revoke&actor=${userId}`);
    assert.ok(revoked.body.items.some((e: { detail?: string }) => e.detail === 'rule corp/developers: no longer gives team role'), revoked.text);
  } finally {
    team.close();
    events.close();
  }
});

test('a role given by hand is kept apart: a rule neither changes nor takes it', async () => {
  corp.users.set('hopper', { email: 'hopper@corp.example', groups: ['svc-developers'] });
  const userId = (await (await signIn('corp', 'hopper')).client!.get('/me')).body.id;
  // An administrator sets the role by hand: from now on it is theirs, not the rule's.
  assert.equal((await server.admin.put(`/teams/${teamId}/members/${userId}`, { role: 'viewer' })).status, 204);
  corp.users.set('hopper', { email: 'hopper@corp.example', groups: [] });
  await signIn('corp', 'hopper');
  assert.equal(await teamRoleOf(userId), 'viewer');
});

test('a group rule gives platform.admin and takes it away', async () => {
  corp.users.set('root', { email: 'root@corp.example', groups: ['svc-admins'] });
  const admin = (await signIn('corp', 'root')).client!;
  assert.equal(await isAdmin(admin), true);
  corp.users.set('root', { email: 'root@corp.example', groups: [] });
  const plain = (await signIn('corp', 'root')).client!;
  assert.equal(await isAdmin(plain), false);
});

test('two providers at once: each signs in its own people; a subject is never matched by address alone', async () => {
  partner.users.set('pat', { email: 'pat@partner.example' });
  const pat = await signIn('partner', 'pat');
  assert.equal((await pat.client!.get('/me')).body.email, 'pat@partner.example');
  // ada exists (made by corp): partner's account with her address does not get into it.
  partner.users.set('ada-at-partner', { email: 'ada@corp.example' });
  const taken = await signIn('partner', 'ada-at-partner');
  assert.equal(taken.response.status, 403);
  assert.match(await taken.response.text(), /An svc account for ada@corp\.example exists already/);
});

test('a signed-in link-based person links a provider, then signs in with it; the link sign-in still works', async () => {
  const person = await createPerson(server.admin, 'linker@elsewhere.example');
  const jar = new CookieJar();
  const started = await fetch(`${server.url}/api/v1/me/identities/partner`, {
    method: 'POST',
    headers: { cookie: `${SESSION}=${person.session.auth.cookie}`, 'svc-csrf': '1', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(started.status, 200);
  jar.store(server.url, started);
  const { authorization_url: url } = (await started.json()) as { authorization_url: string };
  partner.users.set('linker', { email: 'someone-else@partner.example' });
  const linked = await signInVia(jar, url, 'linker');
  assert.equal(linked.response.status, 302);
  assert.equal(linked.response.headers.get('location'), '/settings');
  const later = await signIn('partner', 'linker');
  assert.equal((await later.client!.get('/me')).body.id, person.id);
  // Linking needs the browser session.
  assertProblem(await person.key.post('/me/identities/partner', {}), 403, 'session-required');
});

test('forged ID tokens and a wrong state are refused', async () => {
  /** Starts a flow at the forging provider; the callback with the token `forge` makes from the flow's nonce. */
  const attempt = async (forge: (nonce: string) => Promise<string>, state?: string) => {
    const jar = new CookieJar();
    const started = await browserRequest(jar, start('forged'), { accept: 'application/json' });
    assert.equal(started.status, 302);
    const authorize = new URL(started.headers.get('location')!);
    const nonce = authorize.searchParams.get('nonce')!;
    forger.nextIdToken = await forge(nonce);
    const callback = `${server.url}/api/v1/auth/oidc/forged/callback?code=c&state=${state ?? authorize.searchParams.get('state')}`;
    const answer = await browserRequest(jar, callback, { accept: 'application/json' });
    return { answer, nonce, jar, callback };
  };
  const good = await attempt((nonce) => forger.sign({ nonce }));
  assert.equal(good.answer.status, 302, await good.answer.text());
  assert.ok(good.jar.get(server.url, SESSION), 'a well-signed token signs in');
  const cases: Array<[string, (nonce: string) => Promise<string>]> = [
    ['wrong signature', (nonce) => forger.sign({ nonce }, { otherKey: true })],
    ['wrong issuer', (nonce) => forger.sign({ nonce, iss: 'http://127.0.0.1:1' })],
    ['wrong audience', (nonce) => forger.sign({ nonce, aud: 'someone-else' })],
    ['expired', (nonce) => forger.sign({ nonce, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 })],
    ['replayed nonce', () => forger.sign({ nonce: good.nonce })],
  ];
  for (const [name, forge] of cases) {
    const { answer, jar } = await attempt(forge);
    assert.equal(answer.status, 403, name);
    const body = (await answer.json()) as { type: string; detail: string };
    assert.equal(body.type, 'urn:svc:problem:oidc-sign-in-failed', `${name}: ${body.detail}`);
    assert.equal(jar.get(server.url, SESSION), undefined, name);
  }
  const wrongState = await attempt((nonce) => forger.sign({ nonce }), 'x'.repeat(43));
  assert.equal(wrongState.answer.status, 403);
  assert.match(((await wrongState.answer.json()) as { detail: string }).detail, /not one this server started/);
  // A state works once: the same callback again is refused.
  const replay = await attempt((nonce) => forger.sign({ nonce }));
  assert.equal(replay.answer.status, 302);
  const again = await browserRequest(replay.jar, replay.callback, { accept: 'application/json' });
  assert.equal(again.status, 403);
});

test('svc login goes through the provider: the sign-in returns to the CLI page, whose key reaches the command', async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'svc-oidc-login-'));
  const login = startSvc(['login', server.url], { XDG_CONFIG_HOME: home, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_BROWSER: 'true' });
  try {
    const [address] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/cli-login\?\S+/);
    const cliPage = new URL(address);
    corp.users.set('cli', { email: 'cli@corp.example' });
    // The page without a session sends the browser to /sign-in?return=<the page>; its provider button starts here.
    const { response, client } = await signIn('corp', 'cli', new CookieJar(), cliPage.pathname + cliPage.search);
    assert.equal(response.headers.get('location'), cliPage.pathname + cliPage.search);
    // What the page's script does on Allow, with the session the provider gave.
    const minted = await client!.post('/me/api-keys', { name: 'svc CLI', source: 'cli' });
    assert.equal(minted.status, 201, minted.text);
    const handed = await fetch(`http://127.0.0.1:${cliPage.searchParams.get('port')}/callback`, {
      method: 'POST',
      body: new URLSearchParams({ state: cliPage.searchParams.get('state')!, token: minted.body.token, key_id: minted.body.id }),
    });
    assert.equal(handed.status, 200);
    assert.equal(await login.exited, 0, login.stderr());
    assert.match(login.stdout(), /as cli <cli@corp\.example>/);
    const stored = JSON.parse(await readFile(path.join(home, 'svc', 'config.json'), 'utf8'));
    assert.equal(stored.token, minted.body.token);
  } finally {
    login.child.kill('SIGKILL');
    await rm(home, { recursive: true, force: true });
  }
});

test('sign-out ends the session and sends the browser to the provider to sign out there', async () => {
  corp.users.set('leaver', { email: 'leaver@corp.example' });
  const { client } = await signIn('corp', 'leaver');
  const out = await client!.delete('/sessions/current');
  assert.equal(out.status, 200, out.text);
  const url = new URL(out.body.end_session_url);
  assert.equal(url.origin, corp.issuer);
  assert.ok(url.searchParams.get('id_token_hint'));
  assert.equal(url.searchParams.get('post_logout_redirect_uri'), `${server.url}/sign-in`);
  assertProblem(await client!.get('/me'), 401, 'unauthenticated');
  // A link session signs out as before.
  const person = await createPerson(server.admin, 'plain@elsewhere.example');
  assert.equal((await person.session.delete('/sessions/current')).status, 204);
});

interface ForgingProvider {
  issuer: string;
  redirectUri: string;
  nextIdToken: string;
  sign(claims: Record<string, unknown>, options?: { otherKey?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** Discovery, keys and a token endpoint answering the ID token the test made: real signatures, forged claims. */
async function startForgingProvider(): Promise<ForgingProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const forger: ForgingProvider = {
    issuer,
    redirectUri: '',
    nextIdToken: '',
    async sign(claims, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      const body = { iss: issuer, aud: 'svc-f', sub: 'forged-user', email: 'forged@corp.example', email_verified: true, iat: now, exp: now + 300, ...claims };
      return new SignJWT(body).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(options.otherKey ? other.privateKey : privateKey);
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  server.on('request', (request, response) => {
    const json = (value: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    if (request.url === '/.well-known/openid-configuration') {
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (request.url === '/jwks') return json({ keys: [jwk] });
    if (request.url === '/token') {
      request.resume();
      return request.on('end', () => json({ access_token: 'at', token_type: 'Bearer', expires_in: 60, id_token: forger.nextIdToken }));
    }
    response.writeHead(404);
    response.end();
  });
  return forger;
}
