// Managed-service hosts `ms-<number>.<workspace domain>` (spec 5 item 9, 7 "Router pages"): the HTTP endpoint of a
// managed service whose provider has one (nats: its monitoring endpoint), behind the team's sign-in: the host's
// own session cookie (a sign-in link of the console), or an API key of someone who sees the workspace in
// `Svc-Authorization`. The instance's status decides the page; a synchronized one is proxied to its engine's HTTP
// port at the address the driver placed it. Opening the host never resumes a paused instance.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type pg from 'pg';
import { engineOf } from '../managed/engines.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { findDeployedLandscape } from '../store/landscapes.ts';
import { findManagedServiceByNumber, type ManagedServiceStatus } from '../store/managed-services.ts';
import { findWorkspace } from '../store/workspaces.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import type { WorkspaceAccess } from './access.ts';
import type { RouterPageName } from './pages.ts';
import type { Upstream } from './proxy.ts';
import { Refusal } from './refusal.ts';

export interface ManagedHostDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  access: WorkspaceAccess;
  bodyLimit: number;
  log: (message: string) => void;
  /** A state-changing request of a page of another site (router.ts). */
  crossSite: (method: string, headers: IncomingHttpHeaders, host: string) => boolean;
  /** The console's page that signs the browser in on `host` of `workspaceId`, then opens `next`. */
  signInUrl: (host: string, next: string, workspaceId: number) => string;
}

/** The page for an instance that is not proxied in `status`; undefined when it serves (synchronized). */
export function managedStatusPage(status: ManagedServiceStatus): RouterPageName | undefined {
  switch (status) {
    case 'synchronized':
      return undefined;
    case 'paused':
    case 'pausing':
      return 'managedPaused';
    case 'creating':
    case 'unpausing':
    case 'updating':
      return 'managedStarting';
    case 'deleting':
    case 'deleted':
      return 'managedNothing';
    default:
      return 'managedNoAnswer'; // unknown, invalid-provider: no server answers for it
  }
}

/** What the request on ms-<number> reaches; every other outcome is thrown as a Refusal. */
export async function managedHostUpstream(deps: ManagedHostDeps, request: IncomingMessage, number: number, host: string): Promise<Upstream> {
  const url = request.url ?? '/';
  const row = await findManagedServiceByNumber(deps.pool, number);
  const workspace = row && !row.deleted_at ? await findWorkspace(deps.pool, Number(row.workspace_id)) : undefined;
  if (!row || !workspace || workspace.deleted_at) throw new Refusal('managedNothing');
  const decision = await deps.access.check(request.headers, host, workspace).catch((error: Error) => {
    deps.log(`router: sign-in check failed: ${error.message}`);
    throw new Refusal('signInUnavailable', undefined, 5);
  });
  // Someone outside the team is told nothing more than about a number that does not exist (spec 5 item 6).
  if (!decision.ok && decision.reason === 'not-allowed') throw new Refusal('managedNothing');
  if (!decision.ok) throw new Refusal('managedSignIn', undefined, undefined, deps.signInUrl(host, url, workspace.id));
  if (decision.via === 'cookie' && deps.crossSite(request.method ?? 'GET', request.headers, host)) throw new Refusal('crossSite');
  const port = await httpPortOf(deps, Number(row.workspace_id), row.name, row.provider, row.version);
  if (port === undefined) throw new Refusal('managedNothing', `${row.provider} has no HTTP endpoint.`);
  const page = managedStatusPage(row.status);
  if (page) throw new Refusal(page, typeof row.details.reason === 'string' && page === 'managedNoAnswer' ? row.details.reason : undefined);
  if (Number(request.headers['content-length'] ?? 0) > deps.bodyLimit) throw new Refusal('tooLarge');
  const address = await deps.driver.managedServiceAddress?.(workspaceRef(workspace), row.name);
  if (!address) throw new Refusal('managedNoAnswer', 'The instance has no address on the service network.');
  return { host: address, port, path: url };
}

/** The HTTP port of the instance's engine, from its entry in the deployed landscape; undefined when it has none. */
async function httpPortOf(deps: ManagedHostDeps, workspaceId: number, name: string, provider: string, version: string): Promise<number | undefined> {
  const httpPort = engineOf(provider)?.httpPort;
  if (!httpPort) return undefined;
  const service = (await findDeployedLandscape(deps.pool, workspaceId))?.normal.services[name];
  return service?.type === 'managed' && service.provider === provider ? httpPort({ service, version }) : undefined;
}
