// Custom domains on the router (spec 2.7, 3.6, 5 item 2, 7): every domain a team added is known by name (loaded at
// start, each reloaded when NOTIFY svc_domains names it), so that a request for it never reaches the console. A
// verified domain serves its routes (longest prefix on segment boundaries) from a workspace's dev URL or one of its
// services, with the domain's timeout and body limit; a restricted one only to a team member's API key in
// Svc-Authorization or the sign-in cookie of the host. Any other status serves the 404 page "Nothing here".
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type pg from 'pg';
import type { NotificationHub } from '../events/hub.ts';
import { DOMAINS_CHANNEL, findCustomDomain, findCustomDomainsByName, type CustomDomainRow, type DomainRoute } from '../store/custom-domains.ts';
import { findAcmeChallenge } from '../store/domain-certificates.ts';
import type { AccessDecision, WorkspaceAccess } from './access.ts';
import type { Upstream } from './proxy.ts';
import { Refusal } from './refusal.ts';
import { matchRoute, underPrefix, type Route } from './routes.ts';
import { answerableWhileWaking, serviceAnswerableWhileWaking, type WorkspaceRouting } from './workspace-routes.ts';

/** The known domains by name; kept in step with the store through NOTIFY svc_domains. */
export class CustomDomainTable {
  private readonly byName = new Map<string, CustomDomainRow>();
  private readonly nameOf = new Map<string, string>();
  private unsubscribe?: () => void;

  constructor(private readonly deps: { pool: pg.Pool; hub: NotificationHub; log: (m: string) => void; onChange?: () => void }) {}

  async start(): Promise<void> {
    this.unsubscribe = this.deps.hub.subscribe(DOMAINS_CHANNEL, {
      notify: (id) => void this.reload(id).catch((error: Error) => this.deps.log(`router: domain ${id}: ${error.message}`)),
      reset: () => void this.loadAll().catch((error: Error) => this.deps.log(`router: domains: ${error.message}`)),
    });
    await this.deps.hub.whenListening(DOMAINS_CHANNEL);
    await this.loadAll();
  }

  close(): void {
    this.unsubscribe?.();
  }

  get(name: string): CustomDomainRow | undefined {
    return this.byName.get(name);
  }

  private async loadAll(): Promise<void> {
    const rows = (await this.deps.pool.query<{ id: string }>('SELECT id FROM custom_domains')).rows;
    for (const id of new Set([...this.nameOf.keys(), ...rows.map((r) => r.id)])) await this.reload(id);
  }

  /**
   * Several teams may hold a name unverified (claims): the name shows the one that was verified, else the oldest
   * claim (all of which serve nothing but "Nothing here" and ACME answers).
   */
  private async reload(id: string): Promise<void> {
    const row = await findCustomDomain(this.deps.pool, id);
    const names = new Set([this.nameOf.get(id), row?.name].filter((n): n is string => n !== undefined));
    this.nameOf.delete(id);
    if (row) this.nameOf.set(id, row.name);
    for (const name of names) {
      const shown = (await findCustomDomainsByName(this.deps.pool, name))[0];
      if (shown) this.byName.set(name, shown);
      else this.byName.delete(name);
    }
    this.deps.onChange?.();
  }
}

/** The route of a domain for a request target, and the target as the workspace sees it (strip removes the prefix). */
export function domainRouteFor(routes: DomainRoute[], requestTarget: string): { route: DomainRoute; upstreamTarget: string } | undefined {
  const asRoutes: Route[] = routes.map((r) => ({ path: r.path, strip: r.strip, target: { kind: 'service', service: '', port: 0 } }));
  const match = matchRoute(asRoutes, requestTarget);
  if (!match) return undefined;
  return { route: routes[asRoutes.indexOf(match.route)], upstreamTarget: match.upstreamTarget };
}

/** The port of a service's route without one: the port of its first route on the dev URL, or of its public port. */
export function servicePort(routing: WorkspaceRouting, service: string): number | undefined {
  for (const route of routing.routes.dev) if (route.target.kind === 'service' && route.target.service === service) return route.target.port;
  for (const published of routing.routes.publicPorts.values()) if (published.service === service) return published.port;
  return undefined;
}

/** What the router lends the domain resolver: its routings, access checks, waking and replica choice. */
export interface DomainRouterDeps {
  table: CustomDomainTable;
  access: WorkspaceAccess;
  routing(workspaceId: number): Promise<WorkspaceRouting | undefined>;
  /** Wakes and holds as for the workspace's own hosts; `answerable`: what lets a request to a waking workspace go on. */
  awake(request: IncomingMessage, routing: WorkspaceRouting, userId: number, answerable: (waking: WorkspaceRouting) => boolean): Promise<WorkspaceRouting>;
  devUpstream(request: IncomingMessage, routing: WorkspaceRouting, url: string): Promise<Upstream>;
  replica(request: IncomingMessage, routing: WorkspaceRouting, service: string): Promise<{ host: string }>;
  crossSite(method: string, headers: IncomingHttpHeaders, host: string): boolean;
  signInUrl(host: string, next: string, workspaceId: number): string;
  /** The port where the data plane terminates TLS for custom domains; undefined without TLS. */
  tlsPort(): number | undefined;
  /** Whether the request came over TLS (node's TLS listener, or nginx's saying so in X-Forwarded-Proto). */
  overTls(request: IncomingMessage): boolean;
  pool: pg.Pool;
  log(message: string): void;
}

/** Where the CA fetches HTTP-01 answers (RFC 8555, 8.3); served on every known domain, over HTTP. */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

export type DomainAnswer =
  | { kind: 'upstream'; upstream: Upstream; timeoutMs: number; routing: WorkspaceRouting }
  | { kind: 'answer'; status: number; headers: Record<string, string>; body: string };

/** The certificate states with which the data plane serves the domain over TLS (plain HTTP then redirects). */
const SERVED_OVER_TLS = new Set<CustomDomainRow['certificate']>(['issued', 'uploaded', 'covered']);

/** The HTTP-01 answer for a token, or a redirect to HTTPS once the domain has a certificate; undefined otherwise. */
async function answerBeforeRoutes(deps: DomainRouterDeps, request: IncomingMessage, row: CustomDomainRow): Promise<DomainAnswer | undefined> {
  const url = request.url ?? '/';
  if (url.startsWith(ACME_CHALLENGE_PREFIX)) {
    const keyAuthorization = await findAcmeChallenge(deps.pool, url.slice(ACME_CHALLENGE_PREFIX.length));
    if (keyAuthorization === undefined) throw new Refusal('noRoute');
    return { kind: 'answer', status: 200, headers: { 'content-type': 'text/plain', 'cache-control': 'no-store' }, body: keyAuthorization };
  }
  const port = deps.tlsPort();
  if (port === undefined || deps.overTls(request) || !SERVED_OVER_TLS.has(row.certificate)) return undefined;
  const location = `https://${row.name}${port === 443 ? '' : `:${port}`}${url}`;
  return { kind: 'answer', status: 308, headers: { location, 'content-type': 'text/plain' }, body: `308 ${location}` };
}

/** Where a request for custom domain `name` goes and how long its upstream may take; every refusal is thrown. */
export async function customDomainUpstream(deps: DomainRouterDeps, request: IncomingMessage, name: string): Promise<DomainAnswer> {
  const row = deps.table.get(name);
  if (!row) throw new Refusal('noWorkspace');
  const early = await answerBeforeRoutes(deps, request, row);
  if (early) return early;
  if (row.verification !== 'verified') throw new Refusal('noWorkspace');
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const match = domainRouteFor(row.routes, url);
  if (!match) throw row.routes.some((r) => underPrefix(path, r.path)) || row.routes.length > 0 ? new Refusal('noRoute') : new Refusal('nothingServed');
  let routing = await deps.routing(match.route.workspace_id);
  if (!routing || Number(routing.row.team_id) !== row.team_id) throw new Refusal('noWorkspace');
  const decision = await admission(deps, request, row, routing);
  if (Number(request.headers['content-length'] ?? 0) > row.body_limit_bytes) throw new Refusal('tooLarge');
  const { route, upstreamTarget } = match;
  // a waking workspace serves the domain's route once its service has a ready replica, as its dev URL does
  const answerable = (waking: WorkspaceRouting) =>
    route.service === undefined ? answerableWhileWaking(waking, { kind: 'dev', workspaceId: waking.row.id }, upstreamTarget) : serviceAnswerableWhileWaking(waking, route.service);
  routing = await deps.awake(request, routing, decision?.ok ? decision.user.id : (routing.row.owner_id ?? routing.row.created_by ?? 0), answerable);
  const timeoutMs = row.timeout_seconds * 1000;
  if (route.service === undefined) return { kind: 'upstream', upstream: await deps.devUpstream(request, routing, upstreamTarget), timeoutMs, routing };
  const port = route.port ?? servicePort(routing, route.service);
  if (port === undefined) throw new Refusal('nothingServed', `${route.service} has no port with a route; give the domain's route a port.`);
  return { kind: 'upstream', upstream: { ...(await deps.replica(request, routing, route.service)), port, path: upstreamTarget }, timeoutMs, routing };
}

/** A restricted domain admits those of the team (API key in Svc-Authorization, or the host's sign-in cookie). */
async function admission(deps: DomainRouterDeps, request: IncomingMessage, row: CustomDomainRow, routing: WorkspaceRouting): Promise<AccessDecision | undefined> {
  if (!row.restricted) return undefined;
  const decision = await deps.access.check(request.headers, row.name, { id: routing.row.id, team_id: routing.row.team_id, restricted: false }).catch((error: Error) => {
    deps.log(`router: sign-in check failed: ${error.message}`);
    throw new Refusal('signInUnavailable', undefined, 5);
  });
  if (!decision.ok) {
    throw new Refusal('signInRequired', 'This domain is restricted to its team: sign in with the console, or send an API key in Svc-Authorization.', undefined, deps.signInUrl(row.name, request.url ?? '/', routing.row.id));
  }
  if (decision.via === 'cookie' && deps.crossSite(request.method ?? 'GET', request.headers, row.name)) throw new Refusal('crossSite');
  return decision;
}
