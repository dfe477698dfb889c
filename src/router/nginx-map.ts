// The workspace map nginx serves from (--data-plane nginx): per workspace host and route prefix, the upstream group
// of the service's ready replicas and the request target it gets (strip). Pure: svc renders it from the routings it
// knows and the admission check (router.ts, `admitDirect`) computes the same route name for a request, so nginx
// serves a request directly only while its map agrees with svc's current view; anything else goes to svc.
import { createHash } from 'node:crypto';
import type { HostTarget } from './hosts.ts';
import { matchRoute } from './routes.ts';
import type { ServiceState, WorkspaceRouting } from './workspace-routes.ts';

/** Defines the variables the server block reads when no workspace is served directly. */
export const emptyWorkspaceMap = mapText([], [], []);

const servable = (state: ServiceState | undefined): state is ServiceState =>
  state !== undefined && state.running && state.status !== 'stopped' && state.status !== 'sleeping' && state.ready.length > 0;

/** The upstream group of a service's port with its current ready replicas (a new name when they change). */
export function routeName(workspaceId: number, service: string, port: number, ready: string[]): string {
  const hash = createHash('sha256').update([...ready].sort().join(',')).digest('hex').slice(0, 10);
  return `svc_w${workspaceId}_${service.replace(/[^A-Za-z0-9]/g, '_')}_${port}_${hash}`;
}

/** The route name nginx should have used for this request, or undefined when svc must answer it. */
export function directRouteFor(routing: WorkspaceRouting, target: HostTarget, requestTarget: string): string | undefined {
  if (routing.row.state !== 'running') return undefined;
  const nameOf = (service: string, port: number) => {
    const state = routing.services.get(service);
    return servable(state) ? routeName(routing.row.id, service, port, state.ready) : undefined;
  };
  if (target.kind === 'public-port') {
    const published = routing.routes.publicPorts.get(target.port);
    return published ? nameOf(published.service, published.port) : undefined;
  }
  if (target.kind !== 'dev') return undefined;
  const match = matchRoute(routing.routes.dev, requestTarget);
  if (!match || match.route.target.kind !== 'service') return undefined;
  return nameOf(match.route.target.service, match.route.target.port);
}

interface Upstream {
  name: string;
  servers: string[];
}
/** One map line: a regex on `$host$request_uri`, the value. */
type Line = [string, string];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/"]/g, (c) => (c === '/' ? '/' : `\\${c}`));

/** The map lines of one workspace: its dev URL's routes (longest first) and its public ports. */
export function workspaceLines(routing: WorkspaceRouting, domain: string): { upstreams: Upstream[]; route: Line[]; target: Line[] } {
  const upstreams: Upstream[] = [];
  const route: Line[] = [];
  const target: Line[] = [];
  if (routing.row.state !== 'running') return { upstreams, route, target };
  const id = routing.row.id;
  const use = (service: string, port: number): string => {
    const state = routing.services.get(service);
    if (!servable(state)) return '';
    const name = routeName(id, service, port, state.ready);
    if (!upstreams.some((u) => u.name === name)) upstreams.push({ name, servers: state.ready.map((host) => `${host.includes(':') ? `[${host}]` : host}:${port}`) });
    return name;
  };
  const devHost = escape(`w${id}.${domain}`);
  for (const r of routing.routes.dev) {
    const name = r.target.kind === 'service' ? use(r.target.service, r.target.port) : '';
    const prefix = r.path === '/' ? '' : escape(r.path);
    route.push([`~^${devHost}${prefix}(?:[/?].*)?$`, name]);
    if (!name) continue;
    if (r.strip && prefix) {
      target.push([`~^${devHost}${prefix}(?<svc_t>/.*)$`, '$svc_t']);
      target.push([`~^${devHost}${prefix}(?<svc_t>\\?.*)?$`, '/$svc_t']);
    } else {
      target.push([`~^${devHost}(?<svc_t>${prefix}(?:[/?].*)?)$`, '$svc_t']);
    }
  }
  for (const [publicPort, published] of routing.routes.publicPorts) {
    const host = escape(`w${id}-${publicPort}.${domain}`);
    const name = use(published.service, published.port);
    route.push([`~^${host}/`, name]);
    if (name) target.push([`~^${host}(?<svc_t>/.*)$`, '$svc_t']);
  }
  return { upstreams, route, target };
}

/** The generated part of nginx.conf for the routings svc knows. */
export function workspaceMap(routings: Iterable<WorkspaceRouting>, domain: string): string {
  const all = { upstreams: [] as Upstream[], route: [] as Line[], target: [] as Line[] };
  for (const routing of routings) {
    const lines = workspaceLines(routing, domain);
    all.upstreams.push(...lines.upstreams);
    all.route.push(...lines.route);
    all.target.push(...lines.target);
  }
  return mapText(all.upstreams, all.route, all.target);
}

function mapText(upstreams: Upstream[], route: Line[], target: Line[]): string {
  const lines = (entries: Line[]) => entries.map(([key, value]) => `    "${key}" "${value}";\n`).join('');
  return `${upstreams.map((u) => `  upstream ${u.name} { ${u.servers.map((s) => `server ${s};`).join(' ')} keepalive 256; }\n`).join('')}` +
    `  map "$host$request_uri" $svc_route {\n    default "";\n${lines(route)}  }\n` +
    `  map "$host$request_uri" $svc_target {\n    default "";\n${lines(target)}  }\n` +
    // The router's own cookie never reaches the application.
    `  map $http_cookie $svc_cookie {\n    default $http_cookie;\n` +
    `    "~^svc_ws_session=[^;]*$" "";\n` +
    `    "~^svc_ws_session=[^;]*;\\s*(?<svc_c1>.*)$" "$svc_c1";\n` +
    `    "~^(?<svc_c1>.*?);\\s*svc_ws_session=[^;]*(?<svc_c2>.*)$" "$svc_c1$svc_c2";\n  }\n`;
}
