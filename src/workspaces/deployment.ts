// What runs for a deployed landscape (spec 3.2), as pure decisions: the replicas each `steps` or `container` service
// should have, in the order Run starts them (needs first), and each service's status from what the driver observes.
import type { NormalContainerService, NormalLandscape, NormalService, NormalStepsService } from '../landscape/index.ts';
import type { ContainerRun, PinnedRoot, ReplicaNeed, ReplicaObservation, ReplicaSpec } from '../runtime/driver.ts';
import { landscapeStatusOf, type InstanceState } from '../managed/statuses.ts';
import type { PinnedImage } from '../store/landscapes.ts';

/** The env each service got at Sync, templates filled (secrets among them). */
export type DeployedEnv = Record<string, Record<string, string>>;

export interface ServiceView {
  name: string;
  type: string;
  status: string;
  detail?: string;
  availability?: string;
  running: boolean;
  replicas: { ready: number; desired: number };
  /** A container service's image as pinned at the last Sync: the reference as written and the digest its replicas run. */
  image?: { reference: string; digest: string };
}

/** Service names in an order where every service comes after the services it needs (needs have no cycles). */
export function needsOrder(landscape: NormalLandscape): string[] {
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !(name in landscape.services)) return;
    seen.add(name);
    for (const need of needsOf(landscape.services[name])) visit(need);
    ordered.push(name);
  };
  Object.keys(landscape.services).sort().forEach(visit);
  return ordered;
}

function needsOf(service: NormalService): string[] {
  return service.type === 'steps' || service.type === 'container' ? service.needs : [];
}

/** Every service `names` need, transitively, and the names themselves. */
export function withNeeds(landscape: NormalLandscape, names: string[]): Set<string> {
  const result = new Set<string>();
  const visit = (name: string) => {
    if (result.has(name) || !(name in landscape.services)) return;
    result.add(name);
    needsOf(landscape.services[name]).forEach(visit);
  };
  names.forEach(visit);
  return result;
}

/** Services that run replicas (pods). */
export function runsReplicas(service: NormalService | undefined): service is NormalStepsService | NormalContainerService {
  return service?.type === 'steps' || service?.type === 'container';
}

/** The service runs from an image: a `container` service, or a `steps` service with an `image`. */
export function imageOf(service: NormalService | undefined): string | undefined {
  if (service?.type === 'container') return service.image;
  return service?.type === 'steps' ? service.image : undefined;
}

/** The image pinned at Sync for the service's own reference (a pin of another reference, from an older Sync, is not used). */
function pinOf(service: NormalService, pin: PinnedImage | undefined): PinnedRoot | undefined {
  const image = imageOf(service);
  if (!image || !pin || pin.image !== image) return undefined;
  return { image: pin.image, digest: pin.digest, rootfs: pin.rootfs, config: pin.config };
}

/**
 * The replicas of one `steps` or `container` service, as the driver runs them; a service with an image runs the
 * image pinned at Sync (none without one: it then shows as pending).
 */
export function replicaSpecs(landscape: NormalLandscape, name: string, env: DeployedEnv, images: Record<string, PinnedImage> = {}): ReplicaSpec[] {
  const service = landscape.services[name];
  if (!runsReplicas(service)) return [];
  const root = pinOf(service, images[name]);
  if (imageOf(service) && !root) return [];
  const container = service.type === 'container' ? containerRunOf(service, root!) : undefined;
  const needs = service.needs.flatMap((need) => needAddress(landscape, need));
  return Array.from({ length: service.replicas }, (_, index) => ({
    service: name,
    index,
    steps: service.type === 'steps' ? service.steps.map((step) => ({ name: step.name, run: step.run })) : [],
    ...(container ? { container } : {}),
    env: env[name] ?? {},
    ports: service.ports.map((p) => p.port),
    health: service.health && { port: service.health.port, path: service.health.path, mode: service.health.mode },
    mounts: service.mounts.map((m) => ({ from: m.from, to: m.to })),
    needs,
    ...(service.type === 'steps' && root ? { root } : {}),
    ...(service.type === 'steps' ? { nixWritable: service.nixWritable } : {}),
    plan: service.plan,
  }));
}

function containerRunOf(service: NormalContainerService, pin: PinnedRoot): ContainerRun {
  return {
    ...pin,
    ...(service.command ? { command: service.command } : {}),
    ...(service.args ? { args: service.args } : {}),
    ...(service.runAsUser !== undefined ? { runAsUser: service.runAsUser } : {}),
  };
}

/** How a replica waits for a needed service: its health check, else its first port; nothing to wait for otherwise. */
function needAddress(landscape: NormalLandscape, name: string): ReplicaNeed[] {
  const needed = landscape.services[name];
  if (needed?.type !== 'steps' && needed?.type !== 'container') return [];
  if (needed.health) return [{ name, port: needed.health.port, healthPath: needed.health.path, healthMode: needed.health.mode }];
  return needed.ports.length > 0 ? [{ name, port: needed.ports[0].port }] : [];
}

export interface StatusInput {
  landscape: NormalLandscape;
  tornDown: boolean;
  /** The workspace's state (2.3): replicas run only while it is `running`. */
  workspaceState: string;
  stopped: Set<string>;
  /** On-demand services asleep until their next request. */
  asleep?: Set<string>;
  observed: ReplicaObservation[];
  /** The live managed-service instances of the workspace by name. */
  managed?: ReadonlyMap<string, InstanceState>;
  /** The images pinned at Sync, by service (container services and steps services with an image). */
  images?: Record<string, PinnedImage>;
}

/** Each deployed service with its status (3.2) and replicas ready/desired. */
export function serviceViews(input: StatusInput): ServiceView[] {
  return Object.entries(input.landscape.services).map(([name, service]) => viewOf(name, service, input));
}

function viewOf(name: string, service: NormalService, input: StatusInput): ServiceView {
  const running = !input.stopped.has(name);
  if (service.type === 'forward') {
    return { name, type: service.type, status: 'running', detail: 'no pods, the router forwards', running, replicas: { ready: 0, desired: 0 } };
  }
  if (service.type === 'managed') {
    const { status, detail, ready } = landscapeStatusOf(input.managed?.get(name), input.tornDown);
    // No run switch (spec 7): it runs while the landscape is synced, whatever a switch stored before said.
    return { name, type: service.type, status, detail, running: true, replicas: { ready, desired: 1 } };
  }
  const pin = service.type === 'container' ? input.images?.[name] : undefined;
  const image = pin && pin.image === (service as NormalContainerService).image ? { image: { reference: pin.image, digest: pin.digest } } : {};
  const base = { name, type: service.type, availability: service.availability, running, ...image };
  const desired = service.replicas;
  if (input.tornDown) return { ...base, status: 'stopped', detail: 'Torn down: Sync starts it again', replicas: { ready: 0, desired } };
  if (!running) return { ...base, status: 'stopped', detail: 'Its run switch is off: Start or Run starts it', replicas: { ready: 0, desired } };
  if (input.asleep?.has(name) && input.workspaceState === 'running') {
    return { ...base, status: 'sleeping', detail: `Asleep; ${desired} replica(s) come back on the next request`, replicas: { ready: 0, desired } };
  }
  if (input.workspaceState === 'sleeping') {
    return { ...base, status: 'sleeping', detail: `Asleep with the workspace; ${desired} replica(s) come back when woken`, replicas: { ready: 0, desired } };
  }
  if (input.workspaceState !== 'running') {
    return { ...base, status: 'stopped', detail: `The workspace is ${input.workspaceState.replace('_', ' ')}; its services start when it runs`, replicas: { ready: 0, desired } };
  }
  if (imageOf(service) !== undefined && input.images?.[name]?.image !== imageOf(service)) {
    return { ...base, status: 'pending', detail: 'No image was pinned for it: Sync again to fetch its image', replicas: { ready: 0, desired } };
  }
  const replicas = input.observed.filter((o) => o.service === name && o.index < desired && o.status !== 'stopped');
  const ready = replicas.filter((o) => o.status === 'running' && o.ready).length;
  return { ...base, ...statusOf(service, replicas, desired, ready), replicas: { ready, desired } };
}

function statusOf(service: NormalStepsService | NormalContainerService, replicas: ReplicaObservation[], desired: number, ready: number): { status: string; detail?: string } {
  if (replicas.length === 0) return { status: 'pending', detail: 'No replica scheduled yet' };
  const failed = replicas.find((o) => o.status === 'failure');
  if (failed) return { status: 'failure', detail: failed.detail };
  if (replicas.length === desired && replicas.every((o) => o.status === 'finished')) return { status: 'finished', detail: replicas[0].detail };
  if (ready === desired) {
    const reachable = service.ports.some((p) => p.public || p.routes.length > 0);
    return reachable ? { status: 'running' } : { status: 'internal', detail: 'Running; no routes or public ports: reachable inside the workspace only' };
  }
  const restarting = replicas.find((o) => o.restarts > 0 && o.status === 'starting');
  return { status: 'starting', detail: restarting ? `Restarted ${restarting.restarts} time(s)` : `${ready} of ${desired} replica(s) ready` };
}

export type DevUrlState = 'served' | 'asleep' | 'waking-up' | 'starting' | 'stopped' | 'failed' | 'not-served';

/** The dev URL's state (3.7): by the workspace's state, then by the service that serves `/` of the dev URL. */
export function devUrlState(landscape: NormalLandscape | undefined, tornDown: boolean, workspaceState: string, views: ServiceView[]): { state: DevUrlState; detail: string } {
  if (workspaceState === 'sleeping') return { state: 'asleep', detail: 'Asleep: opening it wakes the workspace' };
  if (workspaceState === 'waking_up') return { state: 'waking-up', detail: 'Waking up' };
  if (workspaceState === 'creating' || workspaceState === 'cloning') return { state: 'starting', detail: 'The workspace is being set up' };
  if (workspaceState !== 'running') return { state: 'stopped', detail: `The workspace is ${workspaceState.replace('_', ' ')}` };
  const root = landscape && !tornDown ? rootService(landscape) : undefined;
  const view = root && views.find((v) => v.name === root);
  if (!view) return { state: 'not-served', detail: 'Nothing is served at / yet' };
  switch (view.status) {
    case 'running':
    case 'internal':
      return { state: 'served', detail: `Served by ${view.name}` };
    case 'failure':
      return { state: 'failed', detail: `${view.name} failed to start${view.detail ? `: ${view.detail}` : ''}` };
    case 'stopped':
    case 'finished':
      return { state: 'stopped', detail: `${view.name}, which serves /, is ${view.status === 'stopped' ? 'stopped' : 'finished'}` };
    default:
      return { state: 'starting', detail: `${view.name} is starting` };
  }
}

/** The workspace's `dev_service` (spec 2.3): the service serving `/` on the dev URL. */
export interface DevService {
  name: string;
  /** Its status's API value (3.2). */
  state: string;
  wake_seconds: number;
  /** Every service it needs, directly or through others (they wake with it), needs first. */
  needs: string[];
  /** Those of `needs` whose status is `failure`. */
  failing_needs: string[];
}

/** The service that serves `/` on the dev URL with its needs; undefined when none does (or it is torn down). */
export function devService(landscape: NormalLandscape | undefined, tornDown: boolean, views: ServiceView[], wakeSeconds: number): DevService | undefined {
  const name = landscape && !tornDown ? rootService(landscape) : undefined;
  const view = name && views.find((v) => v.name === name);
  if (!landscape || !name || !view) return undefined;
  const needed = withNeeds(landscape, [name]);
  const needs = needsOrder(landscape).filter((other) => other !== name && needed.has(other));
  const failing = needs.filter((other) => views.find((v) => v.name === other)?.status === 'failure');
  return { name, state: view.status, wake_seconds: wakeSeconds, needs, failing_needs: failing };
}

/** The service whose route `/` takes the dev URL's root (the longest prefix of `/` is `/` itself). */
function rootService(landscape: NormalLandscape): string | undefined {
  for (const [name, service] of Object.entries(landscape.services)) {
    if (service.type === 'forward' && service.routes.some((r) => r.path === '/')) return name;
    if ((service.type === 'steps' || service.type === 'container') && service.ports.some((p) => p.routes.some((r) => r.path === '/'))) return name;
  }
  return undefined;
}

/**
 * On-demand services idle for their `idleTimeoutMinutes` (by their last request) that may go to sleep: none of
 * them while an awake service that stays awake needs it, directly or through others.
 */
export function servicesToSleep(
  landscape: NormalLandscape,
  input: { stopped: Set<string>; asleep: Set<string>; lastRequestMs: Map<string, number>; nowMs: number },
): string[] {
  const awake = Object.entries(landscape.services).filter(
    ([name, s]) => (s.type === 'steps' || s.type === 'container') && !input.stopped.has(name) && !input.asleep.has(name),
  );
  const sleeping = new Set(
    awake
      .filter(([name, s]) => {
        const last = input.lastRequestMs.get(name);
        return 'availability' in s && s.availability === 'on-demand' && last !== undefined && input.nowMs - last >= s.idleTimeoutMinutes * 60_000;
      })
      .map(([name]) => name),
  );
  for (let changed = true; changed; ) {
    changed = false;
    for (const candidate of sleeping) {
      const kept = awake.some(([name]) => name !== candidate && !sleeping.has(name) && withNeeds(landscape, [name]).has(candidate));
      if (kept) {
        sleeping.delete(candidate);
        changed = true;
      }
    }
  }
  return [...sleeping];
}
