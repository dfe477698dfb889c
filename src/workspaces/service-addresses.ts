// Where each deployed service can be reached from outside the workspace (spec 2.8): its routes on the dev URL and
// its public ports on their own hosts, as full URLs for people to open and copy.
import type { NormalLandscape } from '../landscape/index.ts';
import { publicPortAddress, workspaceAddresses, type WorkspaceUrls } from './view.ts';

export interface ServiceRoute {
  path: string;
  strip: boolean;
  url: string;
}

export interface ServicePort {
  port: number;
  public: boolean;
  /** The port's own host (`w<id>-<port>.<domain>`), when public. */
  public_url?: string;
  routes: ServiceRoute[];
}

/** The ports (a forward service's routes as one entry with port 0) of each service of the landscape by name. */
export function serviceAddresses(landscape: NormalLandscape | undefined, workspaceId: number, urls: WorkspaceUrls): Map<string, ServicePort[]> {
  const dev = workspaceAddresses(workspaceId, urls).dev.replace(/\/$/, '');
  const route = (r: { path: string; strip: boolean }): ServiceRoute => ({ path: r.path, strip: r.strip, url: `${dev}${r.path === '/' ? '/' : r.path}` });
  const found = new Map<string, ServicePort[]>();
  for (const [name, service] of Object.entries(landscape?.services ?? {})) {
    if (service.type === 'steps' || service.type === 'container') {
      found.set(
        name,
        service.ports.map((p) => ({ port: p.port, public: p.public, ...(p.public ? { public_url: publicPortAddress(workspaceId, p.port, urls) } : {}), routes: p.routes.map(route) })),
      );
    } else if (service.type === 'forward') {
      found.set(name, [{ port: 0, public: false, routes: service.routes.map(route) }]);
    }
  }
  return found;
}
