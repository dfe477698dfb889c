// The workspace servers nginx serves from (--data-plane nginx): per workspace host a `server` block (found by exact
// name) whose locations are the dev URL's routes, `location = /api` and `location /api/`, so that nginx picks the
// longest prefix on segment boundaries as matchRoute does; public ports get their own host's block. A location
// served directly names the upstream group of the service's ready replicas; forward routes, sleeping or stopped
// services and paths no route serves go to svc. Pure: svc renders it from the routings it knows, and the admission
// check (router.ts, `admitDirect`) computes the same route name for a request, so nginx serves a request directly
// only while its configuration agrees with svc's current view; anything else goes to svc. The editor's host
// (`ide-w12`) of a running workspace gets a block too: nginx proxies it to the editor's address and, when svc knows
// the editor's web files on this machine (code-server from the tools directory), serves those itself, precompressed
// and cached for good (their path names the editor's build).
import { createHash } from 'node:crypto';
import type { HostTarget } from './hosts.ts';
import { matchRoute, type Route } from './routes.ts';
import { hasReadyReplica, type WorkspaceRouting } from './workspace-routes.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';

/** Where the workspace servers listen and the files every one of them includes (written by nginx.ts). */
export interface ServerSettings {
  domain: string;
  /** The `listen` address, as nginx writes it (`127.0.0.1:8080`). */
  listen: string;
  /** The locations every workspace server has (sign-in, the admission subrequest, svc's fallback). */
  workspaceInclude: string;
  /** The directives of a directly served location (admission, headers, fallbacks). */
  directInclude: string;
  /** With the installation's wildcard certificate covering workspace hosts: the TLS `listen` and its files. */
  tls?: { listen: string; certificate: string; key: string };
  /** The editor's web files nginx serves itself on editor hosts: their path prefix and the include that serves them. */
  editorFiles?: { urlPrefix: string; include: string };
}

const servable = hasReadyReplica;

/** The upstream group of a service's port with its current ready replicas (a new name when they change). */
export function routeName(workspaceId: number, service: string, port: number, ready: string[]): string {
  const hash = createHash('sha256').update([...ready].sort().join(',')).digest('hex').slice(0, 10);
  return `svc_w${workspaceId}_${service.replace(/[^A-Za-z0-9]/g, '_')}_${port}_${hash}`;
}

/** The upstream group of a running workspace's editor (a new name when its address changes), if it has an address. */
export function editorRouteName(row: Pick<WorkspaceRow, 'id' | 'editor_host' | 'editor_port'>): string | undefined {
  if (!row.editor_host || !row.editor_port) return undefined;
  const hash = createHash('sha256').update(`${row.editor_host}:${row.editor_port}`).digest('hex').slice(0, 10);
  return `svc_e${row.id}_${hash}`;
}

/** The route name nginx should have used for this request, or undefined when svc must answer it. */
export function directRouteFor(routing: WorkspaceRouting, target: HostTarget, requestTarget: string): string | undefined {
  if (routing.row.state !== 'running') return undefined;
  if (target.kind === 'ide') return editorRouteName(routing.row);
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

export interface Upstream {
  name: string;
  servers: string[];
}

/** A location of a workspace server: its nginx match (`= /api`, `/api/`, `/`) and where it goes. */
export interface WorkspaceLocation {
  match: string;
  /** The upstream group, or undefined: svc answers. */
  route?: string;
  /** The prefix removed before the request goes on (strip), '' for none. */
  strip: string;
}

export interface WorkspaceServer {
  host: string;
  locations: WorkspaceLocation[];
  /** The editor's host: its web files may be served from this machine (ServerSettings.editorFiles). */
  editor?: boolean;
}

/** The upstream groups and server blocks of one workspace (none unless it runs). */
export function workspaceServers(routing: WorkspaceRouting, domain: string): { upstreams: Upstream[]; servers: WorkspaceServer[] } {
  const upstreams: Upstream[] = [];
  const servers: WorkspaceServer[] = [];
  if (routing.row.state !== 'running') return { upstreams, servers };
  const id = routing.row.id;
  const editor = editorRouteName(routing.row);
  if (editor) {
    const host = routing.row.editor_host!;
    upstreams.push({ name: editor, servers: [`${host.includes(':') ? `[${host}]` : host}:${routing.row.editor_port}`] });
    servers.push({ host: `ide-w${id}.${domain}`, locations: [{ match: '/', route: editor, strip: '' }], editor: true });
  }
  const use = (service: string, port: number): string | undefined => {
    const state = routing.services.get(service);
    if (!servable(state)) return undefined;
    const name = routeName(id, service, port, state.ready);
    if (!upstreams.some((u) => u.name === name)) upstreams.push({ name, servers: state.ready.map((host) => `${host.includes(':') ? `[${host}]` : host}:${port}`) });
    return name;
  };
  const locationsOf = (route: Route): WorkspaceLocation[] => {
    const name = route.target.kind === 'service' ? use(route.target.service, route.target.port) : undefined;
    const strip = route.strip && route.path !== '/' ? route.path : '';
    if (route.path === '/') return [{ match: '/', route: name, strip }];
    return [
      { match: `= ${route.path}`, route: name, strip },
      { match: `${route.path}/`, route: name, strip },
    ];
  };
  // nginx matches decoded paths: a route with other characters leaves the dev URL to svc.
  if (routing.routes.dev.every((route) => PLAIN_PATH.test(route.path))) {
    const dev = routing.routes.dev.flatMap(locationsOf);
    if (!dev.some((l) => l.match === '/')) dev.push({ match: '/', strip: '' });
    servers.push({ host: `w${id}.${domain}`, locations: dev });
  }
  for (const [publicPort, published] of routing.routes.publicPorts) {
    servers.push({ host: `w${id}-${publicPort}.${domain}`, locations: [{ match: '/', route: use(published.service, published.port), strip: '' }] });
  }
  return { upstreams, servers };
}

/** Route paths nginx serves directly: no characters it would decode or treat specially. */
const PLAIN_PATH = /^\/[A-Za-z0-9._~\/-]*$/;
const quote = (text: string) => `"${text}"`;

function locationText(location: WorkspaceLocation, settings: ServerSettings): string {
  const [modifier, path] = location.match.startsWith('= ') ? ['= ', location.match.slice(2)] : ['', location.match];
  const head = `    location ${modifier}${quote(path)} {\n`;
  if (!location.route) return `${head}      proxy_pass http://svc;\n    }\n`;
  // Without strip the request line goes on as the client sent it; with strip, the admission sets $svc_target.
  return (
    head +
    `      set $svc_route ${location.route};\n` +
    `      set $svc_strip ${quote(location.strip)};\n` +
    `      include ${settings.directInclude};\n` +
    `      proxy_pass http://${location.route}${location.strip ? '$svc_target' : ''};\n    }\n`
  );
}

/** The editor's web files, served by nginx from this machine after the same admission as the rest of the host. */
function editorFilesText(route: string, files: NonNullable<ServerSettings['editorFiles']>): string {
  return `    location ^~ ${quote(files.urlPrefix)} {\n      set $svc_route ${route};\n      set $svc_strip "";\n      include ${files.include};\n    }\n`;
}

/** The generated part of nginx.conf for the routings svc knows: upstream groups and workspace servers. */
export function workspaceConfig(routings: Iterable<WorkspaceRouting>, settings: ServerSettings): string {
  let text = '';
  for (const routing of routings) {
    const { upstreams, servers } = workspaceServers(routing, settings.domain);
    for (const u of upstreams) text += `  upstream ${u.name} { ${u.servers.map((s) => `server ${s};`).join(' ')} keepalive 256; }\n`;
    for (const server of servers) {
      text += `  server {\n    listen ${settings.listen};\n    server_name ${server.host};\n    include ${settings.workspaceInclude};\n`;
      if (settings.tls) text += `    listen ${settings.tls.listen} ssl;\n    ssl_certificate ${settings.tls.certificate};\n    ssl_certificate_key ${settings.tls.key};\n`;
      text += server.locations.map((l) => locationText(l, settings)).join('');
      if (server.editor && settings.editorFiles && server.locations[0].route) text += editorFilesText(server.locations[0].route, settings.editorFiles);
      text += '  }\n';
    }
  }
  return text;
}
