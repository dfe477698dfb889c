// Credentials, the route's access rule and the CSRF rule for cookie-authenticated changes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readCredentials } from '../../auth/credentials.ts';
import { problem } from '../../core/problems.ts';
import type { AccessRule, ApiDeps } from '../context.ts';
import { addRouteHook } from './route-hooks.ts';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(method: string): boolean {
  return !safeMethods.has(method);
}

const unauthenticated = (detail: string) =>
  problem('unauthenticated', 401, detail, { headers: { 'www-authenticate': 'Bearer realm="svc"' } });

async function authenticate(request: FastifyRequest, deps: ApiDeps): Promise<void> {
  const credentials = readCredentials(request.headers);
  switch (credentials.kind) {
    case 'none':
      throw unauthenticated('Send an API key as "Authorization: Bearer svc_..." or sign in.');
    case 'malformed':
      throw unauthenticated('The Authorization header must be "Bearer <API key>".');
    case 'key':
      request.principal = await deps.credentials.resolveKey(credentials.token);
      if (!request.principal) throw unauthenticated('The API key is invalid, expired or deleted.');
      return;
    case 'session':
      request.principal = await deps.credentials.resolveSession(credentials.token);
      if (!request.principal) throw unauthenticated('Your session has ended; sign in again.');
      checkCsrf(request, new URL(deps.config.baseUrl).origin);
  }
}

/** A change made with the cookie must carry Svc-CSRF: 1 and, when the browser sends one, the console's Origin. */
function checkCsrf(request: FastifyRequest, consoleOrigin: string): void {
  if (!isStateChanging(request.method)) return;
  if (request.headers['svc-csrf'] !== '1') {
    throw problem('csrf', 403, 'A change made with the browser session must send the header "Svc-CSRF: 1".');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== consoleOrigin) {
    throw problem('csrf', 403, `Requests from ${origin} may not change anything here.`);
  }
}

async function checkAccess(request: FastifyRequest, access: AccessRule, deps: ApiDeps): Promise<void> {
  await authenticate(request, deps);
  const principal = request.principal!;
  if (access === 'session' && principal.via !== 'session') {
    throw problem('session-required', 403, 'This needs the browser session; an API key cannot do it.');
  }
  if (access === 'admin' && !principal.user.isAdmin) {
    throw problem('forbidden', 403, 'Only administrators (platform.admin) may do this.');
  }
}

export function registerAuthentication(app: FastifyInstance, deps: ApiDeps): void {
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (access === undefined || access === 'public') return;
    addRouteHook(route, 'onRequest', (request: FastifyRequest) => checkAccess(request, access, deps));
  });
}
