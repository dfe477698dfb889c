// The settings of a custom domain as a change asks for them: routes (a path prefix to a workspace of the team, its
// dev URL or one of its services), timeout, body limit, restricted. Checks what the schema cannot: paths unique, a
// port only with a service, every workspace one of the team's (404 otherwise, as for a workspace one cannot see).
import { notFound, validationProblem, type ProblemFieldError } from '../core/problems.ts';
import type { Queryable } from '../store/database.ts';
import type { DomainRoute } from '../store/custom-domains.ts';
import { findWorkspace } from '../store/workspaces.ts';

export const DEFAULT_TIMEOUT_SECONDS = 60;
export const DEFAULT_BODY_LIMIT_BYTES = 100 * 2 ** 20;
export const MAX_ROUTES = 50;

export interface RouteInput {
  path: string;
  workspace_id: number;
  service?: string;
  port?: number;
  strip?: boolean;
}

/** The routes as stored: longest path first; 422 for repeated paths or a port without a service. */
export function normalizeRoutes(routes: RouteInput[]): DomainRoute[] {
  const errors: ProblemFieldError[] = [];
  const seen = new Set<string>();
  routes.forEach((route, index) => {
    if (seen.has(route.path)) errors.push({ pointer: `/routes/${index}/path`, message: `the path ${route.path} has a route already` });
    seen.add(route.path);
    if (route.port !== undefined && route.service === undefined) errors.push({ pointer: `/routes/${index}/port`, message: 'a port needs a service' });
  });
  if (errors.length > 0) throw validationProblem(errors);
  return routes
    .map((r) => ({ path: r.path, workspace_id: r.workspace_id, ...(r.service !== undefined && { service: r.service }), ...(r.port !== undefined && { port: r.port }), strip: r.strip ?? false }))
    .sort((a, b) => b.path.length - a.path.length);
}

/** Every route's workspace is a live workspace of the team; 404 (not told apart from one that does not exist) otherwise. */
export async function checkRouteWorkspaces(db: Queryable, teamId: number, routes: DomainRoute[]): Promise<void> {
  for (const id of new Set(routes.map((r) => r.workspace_id))) {
    const row = await findWorkspace(db, id);
    if (!row || Number(row.team_id) !== teamId || row.deleted_at) throw notFound(`workspace ${id}`);
  }
}
