// The routes of one workspace's dev URL and public ports, built from its deployed landscape (spec 2.8: ports,
// routes, forward), and the matching rules: longest prefix on segment boundaries; `strip` removes the prefix.
import type { NormalLandscape } from '../landscape/index.ts';

/** The longest request target the router routes (longer ones get its 414 page). */
export const MAX_URL_LENGTH = 8192;

export type RouteTarget =
  | { kind: 'service'; service: string; port: number }
  | { kind: 'forward'; service: string; target: string };

export interface Route {
  path: string;
  strip: boolean;
  target: RouteTarget;
}

export interface LandscapeRoutes {
  /** Longest path first. */
  dev: Route[];
  /** Public port -> the service listening on it. */
  publicPorts: Map<number, { service: string; port: number }>;
}

/** `targets`: the forward targets as Sync filled them (templates in `target` are filled at Sync). */
export function landscapeRoutes(landscape: NormalLandscape | undefined, targets: Record<string, string> = {}): LandscapeRoutes {
  const dev: Route[] = [];
  const publicPorts = new Map<number, { service: string; port: number }>();
  for (const [service, spec] of Object.entries(landscape?.services ?? {})) {
    if (spec.type === 'forward') {
      for (const route of spec.routes) dev.push({ path: route.path, strip: route.strip, target: { kind: 'forward', service, target: targets[service] ?? spec.target } });
    } else if (spec.type === 'steps' || spec.type === 'container') {
      for (const port of spec.ports) {
        if (port.public) publicPorts.set(port.port, { service, port: port.port });
        for (const route of port.routes) dev.push({ path: route.path, strip: route.strip, target: { kind: 'service', service, port: port.port } });
      }
    }
  }
  dev.sort((a, b) => b.path.length - a.path.length);
  return { dev, publicPorts };
}

/** Whether `path` (without query) lies under `prefix` on a segment boundary: `/api` matches `/api`, `/api/x`, not `/apix`. */
export function underPrefix(path: string, prefix: string): boolean {
  if (prefix === '/') return true; // svc.yml route paths never end with `/` otherwise
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The route for a request target (`/path?query`), and the target as the upstream sees it. */
export function matchRoute(routes: Route[], requestTarget: string): { route: Route; upstreamTarget: string } | undefined {
  const queryAt = requestTarget.indexOf('?');
  const path = queryAt < 0 ? requestTarget : requestTarget.slice(0, queryAt);
  const query = queryAt < 0 ? '' : requestTarget.slice(queryAt);
  const route = routes.find((r) => underPrefix(path, r.path));
  if (!route) return undefined;
  if (!route.strip) return { route, upstreamTarget: requestTarget };
  const rest = route.path === '/' ? path : path.slice(route.path.length);
  return { route, upstreamTarget: `${rest.startsWith('/') ? rest : `/${rest}`}${query}` };
}
