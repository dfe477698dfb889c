// What the router knows of each workspace: its row, its routes, its services' statuses and ready replica
// addresses. Built from the store and the driver on first use, kept until an event about the workspace
// (workspace.*, landscape.updated) says it changed; waiters are woken then, so held requests see the change.
import type pg from 'pg';
import type { EventFeed } from '../events/feed.ts';
import type { NotificationHub } from '../events/hub.ts';
import type { EventRow } from '../store/events.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { findDeployedLandscape, serviceRunStates } from '../store/landscapes.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { serviceViews } from '../workspaces/deployment.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import { openDeployedValues } from '../workspaces/service-runner.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { forgetUpstream } from './proxy.ts';
import type { HostTarget } from './hosts.ts';
import { landscapeRoutes, matchRoute, type LandscapeRoutes } from './routes.ts';

export interface ServiceState {
  status: string;
  detail?: string;
  running: boolean;
  /** Pod addresses of the replicas that are ready. */
  ready: string[];
}

export interface WorkspaceRouting {
  row: WorkspaceRow;
  routes: LandscapeRoutes;
  services: Map<string, ServiceState>;
}

/** Announces that a server started or stopped replicas of a workspace (payload: its id): every router routes it afresh. */
export const ROUTES_CHANNEL = 'svc_routes';

/** Events after which who may reach a workspace host may have changed. */
const ACCESS_EVENTS = new Set(['members.updated', 'access.changed', 'team.deleted', 'org.deleted']);

/** A safety net under the events: nothing is kept longer than this. */
const MAX_AGE_MS = 30_000;

export class WorkspaceRoutes {
  private readonly cache = new Map<number, { at: number; value: Promise<WorkspaceRouting | undefined> }>();
  private readonly waiters = new Map<number, Set<() => void>>();
  /** Ready replica addresses last seen per workspace: connections to those that went away are dropped. */
  private readonly lastReady = new Map<number, Set<string>>();
  private unsubscribe?: () => void;
  private unsubscribeRoutes?: () => void;

  constructor(private readonly deps: { pool: pg.Pool; driver: RuntimeDriver; secrets: SecretBox; hub: NotificationHub; feed: EventFeed; log: (m: string) => void; onAccessChange?: () => void; onLoaded?: (id: number, routing: WorkspaceRouting | undefined) => void }) {}

  async start(): Promise<void> {
    // The events come from the server's feed, which the event fan-out shares (one notification, at most one row read).
    this.unsubscribe = this.deps.feed.subscribe({
      events: (rows) => this.eventsArrived(rows),
      reset: () => this.invalidateAll(),
      failed: (error) => {
        this.deps.log(`router: events: ${error.message}`);
        this.invalidateAll();
      },
    });
    this.unsubscribeRoutes = this.deps.hub.subscribe(ROUTES_CHANNEL, { notify: (id) => this.invalidate(Number(id)), reset: () => this.invalidateAll() });
    await this.deps.hub.whenListening(ROUTES_CHANNEL);
  }

  /** This server started or stopped replicas of the workspace: routed afresh here at once, on the others through svc_routes. */
  changedHere(id: number): void {
    this.invalidate(id);
    this.deps.pool.query('SELECT pg_notify($1, $2)', [ROUTES_CHANNEL, String(id)]).catch((error: Error) => this.deps.log(`router: ${ROUTES_CHANNEL}: ${error.message}`));
  }

  /** Whether routes can be trusted: the event subscription is live. */
  get live(): boolean {
    return this.deps.hub.isLive;
  }

  private eventsArrived(rows: readonly EventRow[]): void {
    for (const event of rows) {
      if (ACCESS_EVENTS.has(event.type)) this.deps.onAccessChange?.();
      if (event.workspace_id !== null) this.invalidate(event.workspace_id);
    }
  }

  /** The workspace's routing, loaded at most `maxAgeMs` ago (a held request asks for fresh state often). */
  get(id: number, maxAgeMs = MAX_AGE_MS): Promise<WorkspaceRouting | undefined> {
    const cached = this.cache.get(id);
    if (cached && Date.now() - cached.at < maxAgeMs) return cached.value;
    const value = this.load(id).catch((error: Error) => {
      this.cache.delete(id);
      throw error;
    });
    this.cache.set(id, { at: Date.now(), value });
    return value;
  }

  /** Resolves at the next change of the workspace, or after `ms`. */
  changed(id: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(id) ?? new Set();
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      this.waiters.set(id, set);
    });
  }

  invalidate(id: number): void {
    this.cache.delete(id);
    for (const wake of [...(this.waiters.get(id) ?? [])]) wake();
  }

  invalidateAll(): void {
    for (const id of [...this.cache.keys(), ...this.waiters.keys()]) this.invalidate(id);
  }

  private async load(id: number): Promise<WorkspaceRouting | undefined> {
    const row = await findWorkspace(this.deps.pool, id);
    if (!row || row.deleted_at) {
      this.deps.onLoaded?.(id, undefined);
      return undefined;
    }
    const deployed = await findDeployedLandscape(this.deps.pool, id);
    const live = deployed && !deployed.torn_down ? deployed : undefined;
    const services = new Map<string, ServiceState>();
    if (live) {
      // A waking workspace's replicas start together with its editor: the router sees them as it does a running
      // workspace's, so a request to a service is served once a replica is ready (router.ts, `awake`), without
      // waiting for the editor. The state shown by the API stays `waking_up` until the editor answers.
      const replicasRun = row.state === 'running' || row.state === 'waking_up';
      const observed = replicasRun ? await this.deps.driver.replicaStates(workspaceRef(row)) : [];
      const { stopped, asleep } = await serviceRunStates(this.deps.pool, id);
      const workspaceState = replicasRun ? 'running' : row.state;
      for (const view of serviceViews({ landscape: live.normal, tornDown: false, workspaceState, stopped, asleep, observed })) {
        const ready = observed.filter((o) => o.service === view.name && o.status === 'running' && o.ready && o.address).map((o) => o.address!.host);
        services.set(view.name, { status: view.status, detail: view.detail, running: view.running, ready });
      }
    }
    this.forgetGone(id, services);
    const targets = live ? openDeployedValues(this.deps.secrets, live).targets : {};
    const routing = { row, routes: landscapeRoutes(live?.normal, targets), services };
    this.deps.onLoaded?.(id, routing);
    return routing;
  }

  private forgetGone(id: number, services: Map<string, ServiceState>): void {
    const ready = new Set([...services.values()].flatMap((s) => s.ready));
    for (const address of this.lastReady.get(id) ?? []) if (!ready.has(address)) forgetUpstream(address);
    this.lastReady.set(id, ready);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribeRoutes?.();
    this.invalidateAll();
  }
}

/** The service a directly served request reaches (for its on-demand activity). */
export function serviceOf(routing: WorkspaceRouting, target: HostTarget, url: string): string | undefined {
  if (target.kind === 'public-port') return routing.routes.publicPorts.get(target.port)?.service;
  const routeTarget = target.kind === 'dev' ? matchRoute(routing.routes.dev, url)?.route.target : undefined;
  return routeTarget?.service;
}

/** Whether a service has a replica that takes requests now (not stopped, not asleep). */
export function hasReadyReplica(state: ServiceState | undefined): state is ServiceState {
  return state !== undefined && state.running && state.status !== 'stopped' && state.status !== 'sleeping' && state.ready.length > 0;
}

/**
 * Whether a service's answer to a request no longer waits for its workspace's wake: a replica is ready, its run
 * switch is off (`This service is stopped`) or there is no such service. Starting, pending, failing and asleep
 * services wait until the workspace runs, as before.
 */
function decidedWhileWaking(state: ServiceState | undefined): boolean {
  return state === undefined || !state.running || state.status === 'stopped' || hasReadyReplica(state);
}

/**
 * Whether a request to a workspace that is still waking up can be answered already, without waiting for its editor:
 * its route's service has a ready replica (or is stopped), or the route forwards. Never the editor's own host, and
 * never an address no route or public port serves (a workspace without a landscape): those wait until the
 * workspace runs, so opening any address shows the wake and its reason before "Nothing is served here yet" (spec
 * 3.1). Anything else is held as before.
 */
export function answerableWhileWaking(routing: WorkspaceRouting, target: HostTarget, url: string): boolean {
  if (target.kind === 'public-port') {
    const published = routing.routes.publicPorts.get(target.port);
    return published !== undefined && decidedWhileWaking(routing.services.get(published.service));
  }
  if (target.kind !== 'dev') return false;
  const routeTarget = matchRoute(routing.routes.dev, url)?.route.target;
  return routeTarget !== undefined && (routeTarget.kind === 'forward' || decidedWhileWaking(routing.services.get(routeTarget.service)));
}

/** The same for a custom domain's route to a service of the workspace (custom-domains.ts). */
export function serviceAnswerableWhileWaking(routing: WorkspaceRouting, service: string): boolean {
  return decidedWhileWaking(routing.services.get(service));
}
