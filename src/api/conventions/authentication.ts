// Credentials, the route's access rule and the CSRF rule for cookie-authenticated changes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readCredentials, type Principal } from '../../auth/credentials.ts';
import { problem } from '../../core/problems.ts';
import { SERVER_VERSION } from '../../core/version.ts';
import type { AccessRule, ApiDeps } from '../context.ts';
import type { RateCheck } from './rate-limit.ts';
import { addRouteHook } from './route-hooks.ts';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(method: string): boolean {
  return !safeMethods.has(method);
}

const unauthenticated = (detail: string) =>
  problem('unauthenticated', 401, detail, { headers: { 'www-authenticate': 'Bearer realm="svc"' } });

function acceptKey(request: FastifyRequest, principal: Principal | undefined): void {
  if (!principal) throw unauthenticated('The API key is invalid, expired or deleted.');
  request.principal = principal;
}

/** Sets request.principal or throws 401; synchronous when the key cache answers, else a promise. */
function authenticate(request: FastifyRequest, deps: ApiDeps, optional = false): void | Promise<void> {
  const credentials = readCredentials(request.headers);
  switch (credentials.kind) {
    case 'none':
      if (optional) return;
      throw unauthenticated('Send an API key as "Authorization: Bearer svc_..." or sign in.');
    case 'malformed':
      throw unauthenticated('The Authorization header must be "Bearer <API key>".');
    case 'key': {
      // No closure on the hot path (a cached key): each one made per request costs more than the lookup.
      const resolved = deps.credentials.resolveKey(credentials.token);
      if (resolved instanceof Promise) return resolved.then((principal) => acceptKey(request, principal));
      return acceptKey(request, resolved);
    }
    case 'session':
      return deps.credentials.resolveSession(credentials.token).then((principal) => {
        // A browser keeps an ended session's cookie: on an `optional` route it is no caller, not a refusal.
        if (!principal && optional) return;
        if (!principal) throw unauthenticated('Your session has ended; sign in again.');
        request.principal = principal;
        checkCsrf(request, new URL(deps.config.baseUrl).origin);
      });
  }
}

/**
 * A change made with the cookie must carry Svc-CSRF: 1 and, when the browser sends one, the console's Origin. A
 * WebSocket upgrade is a GET that cannot carry headers of the page's choosing, but it opens a shell: with the cookie
 * it must come from the console's Origin (browsers always send one), so no other page, not even one on a workspace
 * host of the same site (the cookie is SameSite=Lax), can open it.
 */
function checkCsrf(request: FastifyRequest, consoleOrigin: string): void {
  if (isWebSocketUpgrade(request)) {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== consoleOrigin) throw problem('csrf', 403, `Pages on ${origin} may not open streams here with the browser session.`);
    return;
  }
  if (!isStateChanging(request.method)) return;
  if (request.headers['svc-csrf'] !== '1') {
    throw problem('csrf', 403, 'A change made with the browser session must send the header "Svc-CSRF: 1".');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== consoleOrigin) {
    throw problem('csrf', 403, `Requests from ${origin} may not change anything here.`);
  }
}

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

function checkRole(request: FastifyRequest, access: AccessRule): void {
  const principal = request.principal;
  if (!principal) return; // an `optional` route called without credentials
  if ((access === 'session' || access === 'admin-session') && principal.via !== 'session') {
    throw problem('session-required', 403, 'This needs the browser session; an API key cannot do it.');
  }
  if ((access === 'admin' || access === 'admin-session') && !principal.user.isAdmin) {
    throw problem('forbidden', 403, 'Only administrators (platform.admin) may do this.');
  }
}

/**
 * One hook per request, on every route: the release header (among the reply's own headers, see app.ts), who is
 * calling (credentials and the route's access rule, routes other than public ones), then the rate limit. One hook,
 * not several: each hook Fastify runs costs its own call chain on every request, the API's most frequent calls
 * included.
 */
export function registerCallerHook(app: FastifyInstance, deps: ApiDeps, rateLimit: RateCheck | undefined): void {
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (access === undefined || access === 'public') {
      addRouteHook(route, 'onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
        reply.header('svc-version', SERVER_VERSION);
        done(rateLimit?.(request));
      });
      return;
    }
    // Callback style, so that a key the cache knows costs no promise on the hot path.
    addRouteHook(route, 'onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      reply.header('svc-version', SERVER_VERSION);
      let pending: void | Promise<void>;
      try {
        pending = authenticate(request, deps, access === 'optional');
        if (!pending) checkRole(request, access);
      } catch (error) {
        return done(error as Error);
      }
      if (!pending) return done(rateLimit?.(request));
      pending.then(() => checkRole(request, access)).then(() => done(rateLimit?.(request)), done);
    });
  });
}
