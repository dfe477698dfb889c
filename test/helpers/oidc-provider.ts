// A real OpenID Provider on loopback for sign-in tests: the certified `oidc-provider` package with its own users (an
// e-mail, whether it is verified, and a `groups` claim the test may change), a login form of its own (any password),
// consent given, PKCE required, RP-initiated logout on. `signInVia` plays the browser over HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface ProviderUser {
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  users: Map<string, ProviderUser>;
  /** The client svc is; once svc listens (its address is in the redirect URIs). */
  configure(client: { clientId: string; clientSecret: string; redirectUris: string[]; postLogoutRedirectUris: string[] }): void;
  close(): Promise<void>;
}

/** Listens at once (the issuer is known); answers once configured. */
export async function startTestProvider(): Promise<TestProvider> {
  const users = new Map<string, ProviderUser>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let callback: any;
  const configure = (options: { clientId: string; clientSecret: string; redirectUris: string[]; postLogoutRedirectUris: string[] }) => {
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      const user = users.get(id);
      if (!user) return undefined;
      return {
        accountId: id,
        async claims() {
          const now = users.get(id)!;
          return { sub: id, email: now.email, email_verified: now.emailVerified ?? true, name: now.name ?? id, groups: now.groups ?? [] };
        },
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true, logoutSource: async (ctx: { body: string }, form: string) => { ctx.body = `<!doctype html><html><body>${form}<script>document.forms[0].submit()</script></body></html>`; } } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async loadExistingGrant(ctx: any) {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId || !ctx.oidc.client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
    cookies: { keys: ['svc-test-provider'] },
    ttl: { Session: 3600, Interaction: 600, Grant: 3600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
  });
  provider.proxy = false;
  callback = provider.callback();
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const match = /^\/interaction\/([^/?]+)$/.exec(request.url ?? '');
    if (!match) return callback(request, response);
    if (request.method === 'GET') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return response.end(`<!doctype html><html><body><h1>Test provider</h1><form method="post"><input name="login" placeholder="User"><input name="password" type="password" placeholder="Password"><button>Sign in at the provider</button></form></body></html>`);
    }
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const login = new URLSearchParams(body).get('login') ?? '';
      const result = users.has(login) ? { login: { accountId: login } } : { error: 'access_denied', error_description: 'no such user' };
      provider.interactionFinished(request, response, result, { mergeWithLastSubmission: false }).catch((error: Error) => {
        response.writeHead(500);
        response.end(error.message);
      });
    });
  });
  };
  return {
    issuer,
    users,
    configure,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Cookies by host, as a browser keeps them (name=value only; enough for these servers). */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();
  header(url: string): string | undefined {
    const jar = this.jars.get(new URL(url).host);
    return jar && jar.size ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }
  store(url: string, response: Response): void {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.jars.set(host, jar);
  }
  get(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).host)?.get(name);
  }
}

/** One request with the jar's cookies, no redirect followed. */
export async function browserRequest(jar: CookieJar, url: string, init: { method?: string; body?: string; accept?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: init.accept ?? 'text/html' };
  const cookie = jar.header(url);
  if (cookie) headers.cookie = cookie;
  if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body, redirect: 'manual' });
  jar.store(url, response);
  return response;
}

/**
 * Follows redirects from `url` as a browser would, signing in at the provider as `login` when it asks; stops at
 * the first answer that is not a redirect to the provider or through it, and returns it with the address it came from.
 */
export async function signInVia(jar: CookieJar, url: string, login: string, accept = 'text/html'): Promise<{ response: Response; url: string }> {
  let current = url;
  for (let hop = 0; hop < 20; hop++) {
    const response = await browserRequest(jar, current, { accept });
    const location = response.headers.get('location');
    if (response.status === 200 && /\/interaction\//.test(current)) {
      await response.text();
      const posted = await browserRequest(jar, current, { method: 'POST', body: new URLSearchParams({ login, password: 'any' }).toString() });
      current = new URL(posted.headers.get('location')!, current).href;
      continue;
    }
    if (response.status < 300 || response.status >= 400 || !location) return { response, url: current };
    const next = new URL(location, current).href;
    // Back on svc after the callback: the caller looks at where it sends the browser.
    if (/\/auth\/oidc\/[^/]+\/callback/.test(current)) return { response, url: current };
    current = next;
  }
  throw new Error('too many redirects');
}
