// The router: serves workspace hosts on the server's own listener (the console and API answer every other host).
// Per request: the host's workspace, sign-in, wake on request, the route, then the data plane (proxy.ts). Every
// refusal is a router page (pages.ts): HTML for browsers, `STATUS Title` for other clients.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { isLoopbackAddress } from '../core/loopback.ts';
import { SERVER_VERSION } from '../core/version.ts';
import { headersForUpstream, isCrossSite, SIGN_IN_PATH, WorkspaceAccess } from './access.ts';
import { hostName, hostTarget, type HostTarget } from './hosts.ts';
import { renderPage, wantsHtml } from './pages.ts';
import { Refusal } from './refusal.ts';
import { forwardHeaders, proxyRequest, proxyUpgrade, type ProxyFailure, type Upstream } from './proxy.ts';
import { CLIENT_HEADER } from './nginx-config.ts';
import { directRouteFor } from './nginx-map.ts';
import { matchRoute, MAX_URL_LENGTH } from './routes.ts';
import { managedHostUpstream, type ManagedHostDeps } from './managed-hosts.ts';
import { CustomDomainTable, customDomainUpstream, type DomainRouterDeps } from './custom-domains.ts';
import { AllowList } from './ssrf.ts';
import { forwardUpstream } from './forward-upstream.ts';
import { answerSignIn } from './sign-in.ts';
import type { RouterOptions } from './router-options.ts';
import { answerableWhileWaking, serviceOf, WorkspaceRoutes, type WorkspaceRouting } from './workspace-routes.ts';
import { WAIT_HOLD_MS, waitTarget } from './waiting.ts';
import { HeldRequests, type Hold } from './held-requests.ts';
import { upgradeGuard } from './upgrade-guard.ts';
import { EditorPresence } from './editor-presence.ts';
import { gitIdentityOf } from '../git/credentials.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import type { Use } from '../workspaces/activity.ts';
import { UseRecorder } from '../workspaces/use-recorder.ts';

type Resolved = { upstream: Upstream; routing?: WorkspaceRouting; timeoutMs?: number };
/** A workspace host, or a team's custom domain (custom-domains.ts). */
type RoutedTarget = Exclude<HostTarget, { kind: 'console' }> | { kind: 'custom-domain'; name: string };

export type { RouterOptions } from './router-options.ts';

export class Router {
  private readonly routes: WorkspaceRoutes;
  private readonly access: WorkspaceAccess;
  private readonly allow: AllowList;
  private readonly held: HeldRequests;
  private readonly bodyLimit: number;
  private readonly timeoutMs: number;
  private readonly holdMs: number;
  private readonly managedHosts: ManagedHostDeps;
  private readonly domains: DomainRouterDeps;
  /** Who has each workspace's editor open through this server (public: tests read it). */
  readonly editors: EditorPresence;
  /** The uses this server sees of each workspace, counted for its idle timeout (the API's streams note theirs here too). */
  readonly uses: UseRecorder;

  constructor(private readonly options: RouterOptions) {
    this.access = new WorkspaceAccess({ pool: options.pool, credentials: options.credentials, clock: options.clock });
    this.routes = new WorkspaceRoutes({ pool: options.pool, driver: options.driver, secrets: options.secrets, hub: options.hub, feed: options.feed, log: options.log, onAccessChange: () => {
      this.access.forgetDecisions();
      options.onAccessChange?.();
    }, onLoaded: options.onRouting });
    this.allow = new AllowList(options.forwardAllow ?? []);
    this.uses = new UseRecorder({ pool: options.pool, clock: options.clock, log: options.log });
    this.editors = new EditorPresence({ driver: options.driver, identityOf: (user) => gitIdentityOf(options.pool, options.secrets, user), log: options.log });
    this.held = new HeldRequests(this.routes, options);
    options.services.onChange((id) => this.routes.changedHere(id));
    this.bodyLimit = options.bodyLimitBytes ?? 100 * 2 ** 20;
    this.timeoutMs = options.upstreamTimeoutMs ?? 60_000;
    this.holdMs = options.holdMs ?? 60_000;
    this.managedHosts = {
      pool: options.pool, driver: options.driver, access: this.access, bodyLimit: this.bodyLimit, log: options.log,
      crossSite: (method, headers, host) => this.crossSite(method, headers, host),
      signInUrl: (host, next, workspaceId) => this.signInUrl(host, next, workspaceId),
    };
    this.domains = {
      table: new CustomDomainTable({ pool: options.pool, hub: options.hub, log: options.log, onChange: options.onDomainChange }),
      pool: options.pool,
      tlsPort: () => options.tlsPort?.(),
      overTls: (request) => this.overTls(request),
      access: this.access,
      log: options.log,
      routing: (id) => this.routes.get(id),
      awake: async (request, routing, userId, answerable) => {
        const awake = await this.held.awake(this.holdOf(request), routing, userId, answerable);
        this.uses.note(awake.row.id, { kind: 'custom-domain', address: hostName(request.headers.host) ?? '' });
        return awake;
      },
      devUpstream: (request, routing, url) => this.upstreamFor(url, this.holdOf(request), { kind: 'dev', workspaceId: routing.row.id }, routing),
      replica: (request, routing, service) => this.held.replica(this.holdOf(request), routing, service),
      crossSite: (method, headers, host) => this.crossSite(method, headers, host),
      signInUrl: (host, next, workspaceId) => this.signInUrl(host, next, workspaceId),
    };
  }

  async start(): Promise<void> {
    await Promise.all([this.routes.start(), this.domains.table.start()]);
  }

  close(): void {
    this.routes.close();
    this.domains.table.close();
    this.editors.close();
  }

  /** The workspace changed here (slept, stopped): route afresh at once, before its event arrives. */
  invalidate(workspaceId: number): void {
    this.routes.invalidate(workspaceId);
  }

  /** Requests with a larger body get the 413 page. */
  get bodyLimitBytes(): number {
    return this.bodyLimit;
  }

  get workspaceAccess(): WorkspaceAccess {
    return this.access;
  }

  private console?: { url: string; host: string };

  /** The console's host name, parsed again only when the base URL changes (it is set after listening). */
  private consoleHost(): string {
    const url = this.options.consoleUrl();
    if (this.console?.url !== url) this.console = { url, host: new URL(url).hostname };
    return this.console.host;
  }

  /** The workspace host a request is for; undefined for the console and API. */
  targetOf(request: IncomingMessage): RoutedTarget | undefined {
    const { target, name } = this.classify(request.headers.host);
    if (target.kind !== 'console') return target;
    return name !== undefined && this.domains.table.get(name) ? { kind: 'custom-domain', name } : undefined;
  }

  /** The last Host header classified: clients send the same one on every request (the console's, for the API). */
  private lastHost?: { header: string | undefined; consoleHost: string; target: ReturnType<typeof hostTarget>; name: string | undefined };

  /** hostTarget and hostName of a Host header (pure functions of it and the console's host), the last one kept. */
  private classify(header: string | undefined): { target: ReturnType<typeof hostTarget>; name: string | undefined } {
    const consoleHost = this.consoleHost();
    const last = this.lastHost;
    if (last !== undefined && last.header === header && last.consoleHost === consoleHost) return last;
    const target = hostTarget(header, this.options.workspaceDomain, consoleHost);
    this.lastHost = { header, consoleHost, target, name: target.kind === 'console' ? hostName(header) : undefined };
    return this.lastHost;
  }

  /** Whether a Host header names a workspace host (for answers given before a request is parsed or routed). */
  isWorkspaceHost(host: string | undefined): boolean {
    if (hostTarget(host, this.options.workspaceDomain, this.consoleHost()).kind !== 'console') return true;
    const name = hostName(host);
    return name !== undefined && this.domains.table.get(name) !== undefined;
  }

  async handle(request: IncomingMessage, response: ServerResponse, target: RoutedTarget): Promise<void> {
    const waitingFor = waitTarget(request.url);
    try {
      if (waitingFor !== undefined) {
        // the waiting page's question (waiting.ts): held as its own request would be, 204 once that could be served
        await this.resolve(request, target, undefined, { url: waitingFor, holdMs: WAIT_HOLD_MS });
        return void response.writeHead(204, { 'cache-control': 'no-store' }).end();
      }
      const resolved = await this.resolve(request, target, response);
      if (!resolved) return;
      proxyRequest(request, response, resolved.upstream, {
        headers: this.upstreamHeaders(request),
        timeoutMs: resolved.timeoutMs ?? this.timeoutMs,
        fail: (failure) => this.send(request, response, this.failurePage(failure, target)),
      });
    } catch (error) {
      if (error instanceof Refusal) return this.send(request, response, error, waitingFor !== undefined);
      this.options.log(`router: ${(error as Error).stack ?? error}`);
      this.send(request, response, new Refusal('badRequest'));
    }
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, target: RoutedTarget): Promise<void> {
    socket.on('error', () => socket.destroy());
    const refuse = (refusal: Refusal) => {
      const page = renderPage(refusal.page, { accept: undefined, detail: refusal.detail, sleepReason: refusal.sleepReason });
      socket.end(`HTTP/1.1 ${page.status} ${refusal.page}\r\ncontent-type: text/plain; charset=utf-8\r\nsvc-version: ${SERVER_VERSION}\r\nconnection: close\r\n\r\n${page.body}`);
    };
    try {
      const resolved = await this.resolve(request, target, undefined);
      if (!resolved) return refuse(new Refusal('badRequest'));
      const guard = await this.upgradeGuardOf(request, target, resolved);
      // the editor's WebSockets say who has it open: its git acts as that person (editor-presence.ts)
      const editorOf = target.kind === 'ide' && guard && resolved.routing ? { ref: workspaceRef(resolved.routing.row), user: guard.user } : undefined;
      let release = () => undefined as void;
      proxyUpgrade(request, socket, head, resolved.upstream, {
        headers: this.upstreamHeaders(request),
        fail: (failure) => refuse(this.failurePage(failure, target)),
        opened: (relayed) => {
          const unguard = guard?.register(relayed);
          const leave = editorOf && this.editors.opened(editorOf.ref, editorOf.user);
          // an open WebSocket (the editor's, an app's) keeps its workspace awake while open, not only at its start
          const inUse = resolved.routing && target.kind !== 'managed' ? this.uses.holdOpen(resolved.routing.row.id, this.upgradeUseOf(request, target)) : undefined;
          // a client gone (its half of the connection ended) has left, whenever the editor closes its own half
          if (leave) socket.once('end', leave);
          release = () => {
            inUse?.();
            unguard?.();
            leave?.();
          };
        },
        closed: () => release(),
      });
    } catch (error) {
      refuse(error instanceof Refusal ? error : new Refusal('badRequest'));
    }
  }

  /** The guard of an upgrade to a workspace host or a restricted custom domain (public domains need no right). */
  private upgradeGuardOf(request: IncomingMessage, target: RoutedTarget, resolved: Resolved) {
    const host = hostName(request.headers.host)!;
    const deps = { pool: this.options.pool, access: this.access, streams: this.options.streams };
    if (!resolved.routing || target.kind === 'managed') return undefined;
    if (target.kind !== 'custom-domain') return upgradeGuard(deps, request, host, resolved.routing.row);
    return this.domains.table.get(target.name)?.restricted ? upgradeGuard(deps, request, host, resolved.routing.row, false) : undefined;
  }

  private upstreamHeaders(request: IncomingMessage) {
    const host = request.headers.host ?? '';
    const headers = headersForUpstream(request.headers);
    let client = request.socket.remoteAddress ?? '';
    const front = this.options.frontProxy ? request.headers[CLIENT_HEADER] : undefined;
    if (typeof front === 'string' && isLoopbackAddress(client)) {
      // nginx added the client to X-Forwarded-For already; forwardHeaders adds it once more.
      client = front;
      delete headers[CLIENT_HEADER];
      const hops = String(headers['x-forwarded-for'] ?? '').split(',').map((h) => h.trim()).filter(Boolean).slice(0, -1);
      if (hops.length > 0) headers['x-forwarded-for'] = hops.join(', ');
      else delete headers['x-forwarded-for'];
    }
    return forwardHeaders(headers, { for: client, proto: this.overTls(request) ? 'https' : this.scheme(), host });
  }

  /** Whether the request came over TLS: to node's TLS listener, or to nginx's (it says so in X-Forwarded-Proto). */
  private overTls(request: IncomingMessage): boolean {
    if ((request.socket as TLSSocket).encrypted === true) return true;
    return this.options.frontProxy === true && isLoopbackAddress(request.socket.remoteAddress ?? '') && request.headers['x-forwarded-proto'] === 'https';
  }

  /**
   * nginx's question about a request it would serve itself (--data-plane nginx): 204 when svc would
   * admit it and route it to the very upstream group nginx chose (X-Svc-Route), with no wake, hold or page to give;
   * 401 otherwise, and nginx hands the request to svc's router, which answers exactly as without nginx.
   */
  async admitDirect(request: IncomingMessage): Promise<204 | 401> {
    try {
      const target = this.targetOf(request);
      const url = String(request.headers['x-svc-uri'] ?? '');
      const method = String(request.headers['x-svc-method'] ?? 'GET');
      const route = request.headers['x-svc-route'];
      if (!target || target.kind === 'unknown-workspace-host' || target.kind === 'managed' || target.kind === 'custom-domain' || !route || url.length > MAX_URL_LENGTH || !this.routes.live) return 401;
      if (url === SIGN_IN_PATH || url.startsWith(`${SIGN_IN_PATH}?`) || waitTarget(url) !== undefined) return 401;
      if (Number(request.headers['x-svc-length'] || 0) > this.bodyLimit) return 401;
      const routing = await this.routes.get(target.workspaceId);
      if (!routing || directRouteFor(routing, target, url) !== route) return 401;
      const host = hostName(request.headers.host)!;
      const decision = await this.access.check(request.headers, host, routing.row);
      if (!decision.ok || (decision.via === 'cookie' && this.crossSite(method, request.headers, host))) return 401;
      this.uses.note(routing.row.id, this.useOf(request, target));
      const service = serviceOf(routing, target, url);
      if (service) this.options.services.noteRequest(routing.row.id, service);
      return 204;
    } catch (error) {
      this.options.log(`router: admission for nginx: ${(error as Error).message}`);
      return 401;
    }
  }

  private scheme(): 'http' | 'https' {
    return this.options.consoleUrl().startsWith('https:') ? 'https' : 'http';
  }

  private failurePage(failure: ProxyFailure, target: RoutedTarget): Refusal {
    if (target.kind === 'managed') return new Refusal('managedNoAnswer');
    return failure === 'timeout' ? new Refusal('timeout') : new Refusal('noAnswer');
  }

  /**
   * Everything before the data plane; undefined when the request was answered here (sign-in redirect). `as` is
   * the request the waiting page waits for, with its own hold.
   */
  private async resolve(request: IncomingMessage, target: RoutedTarget, response: ServerResponse | undefined, as?: { url: string; holdMs: number }): Promise<Resolved | undefined> {
    const url = as?.url ?? request.url ?? '/';
    const hold = { ms: as?.holdMs ?? this.holdMs, browser: !as && wantsHtml(request.headers.accept) };
    if (url.length > MAX_URL_LENGTH) throw new Refusal('uriTooLong');
    if (target.kind === 'unknown-workspace-host') throw new Refusal('noWorkspace');
    const host = hostName(request.headers.host)!;
    const signingIn = url.startsWith(`${SIGN_IN_PATH}?`) || url === SIGN_IN_PATH;
    if (signingIn && !response) throw new Refusal('badRequest');
    if (target.kind === 'managed' || target.kind === 'custom-domain') {
      if (signingIn) return void (await this.signIn(request, response!, host));
      if (target.kind === 'managed') return { upstream: await managedHostUpstream(this.managedHosts, request, target.number, host) };
      if (!this.routes.live) throw new Refusal('routerStarting', undefined, 2);
      const answer = await customDomainUpstream(this.domains, request, target.name);
      if (answer.kind === 'upstream') return answer;
      if (!response) throw new Refusal('badRequest');
      return void response.writeHead(answer.status, answer.headers).end(request.method === 'HEAD' ? undefined : answer.body);
    }
    if (!this.routes.live) throw new Refusal('routerStarting', undefined, 2);
    let routing = await this.routes.get(target.workspaceId);
    if (!routing) throw new Refusal('noWorkspace');
    if (signingIn) return void (await this.signIn(request, response!, host));
    const decision = await this.access.check(request.headers, host, routing.row).catch((error: Error) => {
      this.options.log(`router: sign-in check failed: ${error.message}`);
      throw new Refusal('signInUnavailable', undefined, 5);
    });
    if (!decision.ok && decision.reason === 'not-allowed') throw new Refusal('noWorkspace');
    if (!decision.ok) throw new Refusal('signInRequired', 'This address is private: sign in with the console.', undefined, this.signInUrl(host, url));
    if (decision.via === 'cookie' && this.crossSite(request.method ?? 'GET', request.headers, host)) throw new Refusal('crossSite');
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > this.bodyLimit) throw new Refusal('tooLarge');
    // the editor's host waits for the editor; any other address may be answered by a service first
    const answerable = target.kind === 'ide' ? undefined : (waking: WorkspaceRouting) => answerableWhileWaking(waking, target, url);
    routing = await this.held.awake(hold, routing, decision.user.id, answerable);
    this.uses.note(routing.row.id, this.useOf(request, target));
    return { upstream: await this.upstreamFor(url, hold, target, routing), routing };
  }

  private signInUrl(host: string, next: string, workspaceId?: number): string {
    const url = new URL('/workspace-sign-in', this.options.consoleUrl());
    url.searchParams.set('host', host);
    url.searchParams.set('next', next);
    // A managed-service host does not name its workspace; the console mints the link there.
    if (workspaceId !== undefined) url.searchParams.set('workspace', String(workspaceId));
    return url.toString();
  }

  private signIn(request: IncomingMessage, response: ServerResponse, host: string): Promise<void> {
    return answerSignIn(this.access, request, response, host, this.scheme() === 'https' || this.overTls(request));
  }

  /** A state-changing request sent by a page of another site (not this host, not the console). */
  private crossSite(method: string, headers: IncomingHttpHeaders, host: string): boolean {
    return isCrossSite(method, headers, host, this.options.consoleUrl());
  }

  /** The hold of a request the router serves itself (not the waiting page's wait). */
  private holdOf(request: IncomingMessage): Hold {
    return { ms: this.holdMs, browser: wantsHtml(request.headers.accept) };
  }

  private upgradeUseOf(request: IncomingMessage, target: RoutedTarget): Use {
    if (target.kind === 'custom-domain') return { kind: 'custom-domain', address: target.name };
    return this.useOf(request, target as { kind: 'ide' | 'dev' | 'public-port' });
  }

  /** What a request to a workspace host counts as: the editor, the dev URL or a service's own address. */
  private useOf(request: IncomingMessage, target: { kind: 'ide' | 'dev' | 'public-port' }): Use {
    const address = hostName(request.headers.host) ?? '';
    if (target.kind === 'ide') return { kind: 'editor', address };
    return { kind: target.kind === 'dev' ? 'dev-url' : 'service-address', address };
  }

  private async upstreamFor(url: string, hold: Hold, target: Exclude<HostTarget, { kind: 'console' | 'unknown-workspace-host' | 'managed' }>, routing: WorkspaceRouting): Promise<Upstream> {
    if (target.kind === 'ide') {
      const { editor_host: host, editor_port: port } = routing.row;
      if (!host || !port) throw new Refusal('noAnswer', 'The editor is not reachable yet.');
      return { host, port, path: url };
    }
    if (target.kind === 'public-port') {
      const published = routing.routes.publicPorts.get(target.port);
      if (!published) throw new Refusal('nothingServed', `No service publishes port ${target.port}.`);
      return { ...(await this.held.replica(hold, routing, published.service)), port: published.port, path: url };
    }
    const match = matchRoute(routing.routes.dev, url);
    if (!match) {
      const servesRoot = routing.routes.dev.some((r) => r.path === '/');
      throw servesRoot || routing.routes.dev.length > 0 ? new Refusal('noRoute') : new Refusal('nothingServed');
    }
    const routeTarget = match.route.target;
    if (routeTarget.kind === 'forward') return forwardUpstream(routeTarget.target, match.upstreamTarget, this.allow);
    return { ...(await this.held.replica(hold, routing, routeTarget.service)), port: routeTarget.port, path: match.upstreamTarget };
  }

  private send(request: IncomingMessage, response: ServerResponse, refusal: Refusal, asText = false): void {
    if (response.headersSent) return void response.destroy();
    const page = renderPage(refusal.page, {
      accept: asText ? undefined : request.headers.accept,
      detail: refusal.detail,
      retryAfterSeconds: refusal.retryAfterSeconds,
      signInUrl: refusal.signInUrl,
      sleepReason: refusal.sleepReason,
    });
    response.writeHead(page.status, page.headers);
    response.end(request.method === 'HEAD' ? undefined : page.body);
    request.resume();
  }
}
