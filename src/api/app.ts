// The HTTP API: Fastify with the shared conventions as hooks and one plugin per resource under /api/v1.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import websocket from '@fastify/websocket';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { SERVER_VERSION, API_VERSION } from '../core/version.ts';
import { API_PREFIX, type ApiDeps } from './context.ts';
import { registerAudit } from './conventions/audit.ts';
import { registerCallerHook } from './conventions/authentication.ts';
import { registerIdempotency } from './conventions/idempotency.ts';
import { registerProblemHandling } from './conventions/problems.ts';
import { databaseAddress, isDatabaseUnavailable } from '../store/availability.ts';
import { answerNginxError, clientErrorHandler, frameworkErrorHandler, hasEncodedNul, MAX_HEADER_BYTES, refuseEncodedNul, refuseLongUrl } from './conventions/request-errors.ts';
import { rateLimitOf } from './conventions/rate-limit.ts';
import { buildRequestValidator } from './conventions/validation.ts';
import { registerConsolePages } from './pages.ts';
import { registerApiKeyRoutes } from './routes/api-keys.ts';
import { registerAuditRoutes } from './routes/audit.ts';
import { registerCatalogRoutes } from './routes/catalog.ts';
import { registerManagedServiceRoutes } from './routes/managed-services.ts';
import { registerManagedServiceActionRoutes } from './routes/managed-service-actions.ts';
import { registerManagedServiceRevealRoute } from './routes/managed-service-reveal.ts';
import { registerManagedDumpRoutes } from './routes/managed-dumps.ts';
import { registerDomainRoutes } from './routes/domains.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerInvitationRoutes } from './routes/invitations.ts';
import { registerOwnerTransferRoutes } from './routes/owner-transfers.ts';
import { registerLandscapeRoutes } from './routes/landscape.ts';
import { registerWorkspaceSignInRoutes } from './routes/workspace-sign-in.ts';
import { registerServiceRoutes } from './routes/services.ts';
import { registerStageRoutes } from './routes/stages.ts';
import { registerGitCredentialRoutes } from './routes/git-credentials.ts';
import { registerMeRoutes } from './routes/me.ts';
import { registerDotfilesRoutes } from './routes/dotfiles.ts';
import { registerMetaRoutes } from './routes/meta.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import { registerRequestMetrics } from '../metrics/request-metrics.ts';
import { registerOperationRoutes } from './routes/operations.ts';
import { registerTimelineRoutes } from './routes/timelines.ts';
import { registerOrgRoutes } from './routes/orgs.ts';
import { registerRegistryCredentialRoutes } from './routes/registry-credentials.ts';
import { registerSessionRoutes } from './routes/sessions.ts';
import { registerOidcRoutes } from './routes/oidc.ts';
import { registerTeamRoutes } from './routes/teams.ts';
import { registerTeamContainerSettingsRoutes } from './routes/team-container-settings.ts';
import { registerTeamNetworkSettingsRoutes } from './routes/team-network-settings.ts';
import { registerTeamQuotaRoutes } from './routes/team-quota.ts';
import { registerTeamVolumeOwnerRoutes } from './routes/team-volume-owner.ts';
import { registerUserRoutes } from './routes/users.ts';
import { registerVariableRoutes } from './routes/variables.ts';
import { registerWorkspaceActionRoutes } from './routes/workspace-actions.ts';
import { registerWorkspaceActivityRoutes } from './routes/workspace-activity.ts';
import { registerWorkspaceRoutes } from './routes/workspaces.ts';
import { registerWorkspaceSshHostRoutes } from './routes/workspace-ssh-host.ts';
import { registerWorkspaceStreamRoutes, streamProtocolOf } from './routes/workspace-streams.ts';
import { ProblemRef, ProblemSchema } from './schemas.ts';
import { ADMIT_SECRET_HEADER, AUTH_PATH, ERROR_PATH } from '../router/nginx-config.ts';
import { MAX_URL_LENGTH } from '../router/routes.ts';
import { answerUpgradeAsRequest, isStreamUpgrade } from './conventions/upgrades.ts';

/** Bodies may be up to 8 MiB in general; with an Idempotency-Key at most 1 MiB (rule 6). */
export const BODY_LIMIT = 8 * 1024 * 1024;

/** Every refusal is an RFC 9457 problem, whatever the route's success answers are. */
const problemResponse = { description: 'An RFC 9457 problem', content: { 'application/problem+json': { schema: ProblemRef } } };

export async function buildApi(deps: ApiDeps, logger: FastifyBaseLogger | undefined): Promise<FastifyInstance> {
  // Upgrades of console and API hosts go through Fastify's routes (shells, forwarded ports); workspace hosts' to the router.
  const apiUpgrades = new EventEmitter();
  /** Closing: Fastify answers 503 itself (return503OnClosing), before any hook. */
  let closing = false;
  const app = Fastify({
    // No logger of Fastify's own: it would make a logger and two response listeners per request. Faults are logged
    // where they happen with svc's logger (conventions/problems.ts); a log line per request is the router's job.
    logger: false,
    // Nothing reads a request id (logs carry the method and path): a constant costs no string per request.
    genReqId: () => '',
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
    // Behind nginx (--data-plane nginx) the client's address is the last X-Forwarded-For hop nginx added.
    trustProxy: deps.config.dataPlane === 'nginx' ? ['127.0.0.1', '::1'] : false,
    // Requests refused before routing are problems on API hosts and router pages on workspace hosts.
    clientErrorHandler: clientErrorHandler((host) => deps.router.isWorkspaceHost(host)),
    frameworkErrors: frameworkErrorHandler,
    // One listener: workspace hosts go to the router, every other host to the console and API.
    serverFactory: (handler) => {
      const admitSecret = deps.nginxAdmitSecret;
      /** The console and API: refusals before routing (an encoded NUL, an address over the router's limit), then Fastify. */
      const answer = (request: http.IncomingMessage, response: http.ServerResponse) => {
        if (hasEncodedNul(request.url)) refuseEncodedNul(request, response, false);
        // The router's limit on addresses holds on API hosts too (svc reads up to MAX_HEADER_BYTES of them).
        else if (request.url!.length > MAX_URL_LENGTH) refuseLongUrl(request, response);
        else handler(request, response);
      };
      const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (request, response) => {
        if (admitSecret && request.headers[ADMIT_SECRET_HEADER] === admitSecret) {
          response.setHeader('svc-version', SERVER_VERSION);
          if (request.url === AUTH_PATH) return void deps.router.admitDirect(request).then((status) => response.writeHead(status, { 'content-length': 0 }).end());
          if (request.url?.startsWith(`${ERROR_PATH}/`)) return answerNginxError(request, response, (host) => deps.router.isWorkspaceHost(host));
        }
        const target = deps.router.targetOf(request);
        // Every answer carries the release. Fastify's get it among their own headers (the caller hook, sendProblem;
        // the refusals before routing write their own): a header set here, before Fastify's writeHead, sends Node's
        // writeHead down its slower path (5-14 % of the cheapest calls' rate, docs/api.md). Only the 503 Fastify
        // writes itself while closing needs it here.
        if (target === undefined) {
          if (closing) response.setHeader('svc-version', SERVER_VERSION);
          return answer(request, response);
        }
        // Router pages and the replicas' answers.
        response.setHeader('svc-version', SERVER_VERSION);
        if (hasEncodedNul(request.url)) refuseEncodedNul(request, response, true);
        else void deps.router.handle(request, response, target);
      });
      server.on('upgrade', (request, socket, head) => {
        const target = deps.router.targetOf(request);
        if (target) void deps.router.handleUpgrade(request, socket, head, target);
        // Only the stream routes speak WebSocket (@fastify/websocket sees only them); any other upgrade is answered
        // as a plain request on a connection closed after it.
        else if (isStreamUpgrade(request.url)) apiUpgrades.emit('upgrade', request, socket, head);
        else answerUpgradeAsRequest(request, socket, answer);
      });
      // What Fastify sets on a server it makes itself: idle keep-alive connections stay 72 s (Node's 5 s would
      // race clients reusing a connection just as the server closes it).
      server.keepAliveTimeout = 72_000;
      return server;
    },
  });

  await app.register(swagger, {
    // Shared schemas keep their $id as component name (Problem), which the SDK's types are named after.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc API',
        version: API_VERSION,
        description: 'Development workspaces and their landscapes. Errors are RFC 9457 problems.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'svc_<id>_<secret> in Authorization or Svc-Authorization' },
          session: { type: 'apiKey', in: 'cookie', name: '__Host-svc_session' },
        },
      },
    },
  });
  app.addSchema(ProblemSchema);
  // Bodies as sent, integers in query and path only from decimal text, no NUL anywhere (conventions/validation.ts).
  app.setValidatorCompiler(buildRequestValidator(app.getSchemas()));
  // Declared up front so that every request object keeps one shape (V8 keeps the hot path fast).
  app.decorateRequest('principal', undefined);
  app.decorateRequest('auditTeamId', undefined);
  app.decorateRequest('auditTarget', undefined);

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(API_PREFIX) && route.config?.access === undefined) {
      throw new Error(`route ${route.url} declares no access rule`);
    }
    if (route.schema && !route.schema.hide) {
      route.schema.response = { ...(route.schema.response as object), '4xx': problemResponse, '5xx': problemResponse };
      const access = route.config?.access;
      if (access && access !== 'public') {
        (route.schema as Record<string, unknown>).security =
          access === 'session' || access === 'admin-session' ? [{ session: [] }]
          : access === 'optional' ? [{}, { apiKey: [] }, { session: [] }]
          : [{ apiKey: [] }, { session: [] }];
      }
    }
  });
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // The OpenAPI document is built without a pool (openapi-document.ts): no handler runs there.
  const database = databaseAddress(deps.pool?.options.connectionString ?? 'postgres://localhost/');
  registerProblemHandling(app, { keepConnections: deps.config.dataPlane === 'nginx', logger, databaseUnavailable: (error) => isDatabaseUnavailable(error, database) });
  // Authentication, the access rule and the rate limit: one hook per request (conventions/authentication.ts).
  registerCallerHook(app, deps, rateLimitOf(app, deps.config.rateLimitPerMinute, deps.clock));
  registerIdempotency(app, deps.pool, deps.clock);
  registerAudit(app, deps.pool, deps.clock, deps.log);
  if (deps.metrics) registerRequestMetrics(app, deps.metrics);
  await app.register(
    async (api) => {
      registerMetaRoutes(api);
      registerSessionRoutes(api, deps);
      registerOidcRoutes(api, deps);
      registerMeRoutes(api, deps);
      registerGitCredentialRoutes(api, deps);
      registerDotfilesRoutes(api, deps);
      registerApiKeyRoutes(api, deps);
      registerUserRoutes(api, deps);
      registerOrgRoutes(api, deps);
      registerTeamRoutes(api, deps);
      registerInvitationRoutes(api, deps);
      registerRegistryCredentialRoutes(api, deps);
      registerTeamContainerSettingsRoutes(api, deps);
      registerTeamNetworkSettingsRoutes(api, deps);
      registerTeamQuotaRoutes(api, deps);
      registerTeamVolumeOwnerRoutes(api, deps);
      registerAuditRoutes(api, deps);
      registerOperationRoutes(api, deps);
      registerTimelineRoutes(api, deps);
      registerWorkspaceRoutes(api, deps);
      registerWorkspaceSshHostRoutes(api, deps);
      registerWorkspaceActionRoutes(api, deps);
      registerWorkspaceActivityRoutes(api, deps);
      registerOwnerTransferRoutes(api, deps);
      // @fastify/websocket adds a hook on every request and response of its context: only the stream routes pay it.
      await api.register(async (streams) => {
        await streams.register(websocket, {
          options: {
            server: apiUpgrades as unknown as http.Server,
            perMessageDeflate: false,
            maxPayload: 16 * 1024 * 1024,
            handleProtocols: (offered, request) => streamProtocolOf(request.url ?? '', offered),
          },
          errorHandler: (error, socket, request) => {
            logger?.error({ err: error, method: request.method, url: request.url }, 'stream failed');
            socket.terminate();
          },
        });
        registerWorkspaceStreamRoutes(streams, deps);
      });
      registerVariableRoutes(api, deps);
      registerLandscapeRoutes(api, deps);
      registerServiceRoutes(api, deps);
      registerStageRoutes(api, deps);
      registerWorkspaceSignInRoutes(api, deps);
      registerEventRoutes(api, deps);
      registerCatalogRoutes(api, deps);
      registerManagedServiceRoutes(api, deps);
      registerManagedServiceActionRoutes(api, deps);
      registerManagedServiceRevealRoute(api, deps);
      registerManagedDumpRoutes(api, deps);
      registerDomainRoutes(api, deps);
    },
    { prefix: API_PREFIX },
  );
  registerMetricsRoute(app, deps);
  registerConsolePages(app, deps);
  return app;
}
