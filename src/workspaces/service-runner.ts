// Carries out a deployed landscape on the runtime driver: starts the replicas the landscape and the run switches
// want (needs first), stops and removes the others, and watches the services' statuses to send landscape.updated
// when one changes. Replicas only run while the workspace runs; waking it starts them again.
import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { wallClockMs, type PhaseTimeline } from '../core/phases.ts';
import type { SecretBox, SealedSecret } from '../core/secret-box.ts';
import { publishEvent } from '../events/publish.ts';
import type { NormalLandscape, NormalManagedService } from '../landscape/index.ts';
import { RuntimeFailure, type PreparedReplicas, type ReplicaObservation, type RuntimeDriver } from '../runtime/driver.ts';
import {
  findDeployedLandscape, markServiceAsleep, markServicesAwake, recordServiceStatuses, sealedEnvOf, serviceActivity, serviceRunStates, stoppedServices,
  type DeployedLandscapeRow,
} from '../store/landscapes.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { liveManagedServices } from '../store/managed-services.ts';
import { needsOrder, replicaSpecs, runsReplicas, servicesToSleep, serviceViews, withNeeds, type DeployedEnv, type ServiceView } from './deployment.ts';
import { workspaceRef } from './operations.ts';
import { beginReplicaStart, recordFirstAnswers } from './service-timings.ts';

export interface ServiceRunnerDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  secrets: SecretBox;
  clock: Clock;
  log: (message: string) => void;
}

export interface ApplyOptions {
  /** Services whose replicas start afresh even when they run (changed by a Sync). */
  restart?: Iterable<string>;
  /** Start replicas that failed or finished again, and wake them if asleep (Sync, Start, Run, a request). */
  retry?: Iterable<string>;
  /** The workspace is waking up: its replicas start together with its editor (a wake), not after it. */
  waking?: boolean;
  /** Receives the replicas' start phases (a Sync's log line). */
  timeline?: PhaseTimeline;
  /** The operation's timeline: each started replica's start and first healthy answer, beside its line. */
  record?: PhaseTimeline;
}

/** How often `settled` asks the replicas' agents (a request on the pod network each; a ready one answers at once). */
const SETTLED_POLL_MS = 20;

/** The first key of the advisory locks of workspaces' replica changes ('svcr'); the second is the workspace id. */
const REPLICA_LOCK_CLASS = 0x73766372;

async function withWorkspaceLock<T>(pool: pg.Pool, id: number, work: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [REPLICA_LOCK_CLASS, id]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [REPLICA_LOCK_CLASS, id]).catch((error: Error) => (broken = error));
    }
  } finally {
    client.release(broken);
  }
}

/** Where the deployed env is sealed: bound to the workspace, so a copied value does not open elsewhere. */
export const deployedEnvPlace = (workspaceId: number) => `landscape:${workspaceId}:env`;

/** What Sync filled in: each service's env, each forward service's target, each managed service (a resume by hand starts it so). */
export interface DeployedValues {
  env: DeployedEnv;
  targets: Record<string, string>;
  managed?: Record<string, NormalManagedService>;
}

export function sealDeployedEnv(secrets: SecretBox, workspaceId: number, values: DeployedValues): SealedSecret {
  return secrets.seal(JSON.stringify(values), deployedEnvPlace(workspaceId));
}

export function openDeployedValues(secrets: SecretBox, row: DeployedLandscapeRow): DeployedValues {
  const sealed = sealedEnvOf(row);
  if (!sealed) return { env: {}, targets: {} };
  const values = JSON.parse(secrets.open(sealed, deployedEnvPlace(row.workspace_id))) as DeployedValues;
  return { env: values.env ?? {}, targets: values.targets ?? {}, managed: values.managed ?? {} };
}

export function openDeployedEnv(secrets: SecretBox, row: DeployedLandscapeRow): DeployedEnv {
  return openDeployedValues(secrets, row).env;
}

/** The filled targets of the forward services of a landscape whose templates were filled. */
export function targetsOf(filled: NormalLandscape): Record<string, string> {
  const targets: Record<string, string> = {};
  for (const [name, service] of Object.entries(filled.services)) if (service.type === 'forward') targets[name] = service.target;
  return targets;
}

/** The filled env of every `steps` or `container` service of a landscape whose templates were filled. */
export class ServiceRunner {
  private readonly tails = new Map<number, Promise<unknown>>();
  /** Why a replica could not be started (its pod never ran), by `workspace/service`. */
  private readonly startFailures = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** Ends the timelines' waits for first healthy answers. */
  private readonly closing = new AbortController();

  constructor(private readonly deps: ServiceRunnerDeps) {}

  /** Brings the workspace's replicas in line with its deployed landscape, run switches and state. */
  apply(workspaceId: number, options: ApplyOptions = {}): Promise<void> {
    return this.serialized(workspaceId, async () => {
      try {
        await this.applyNow(workspaceId, options);
      } finally {
        this.changed(workspaceId);
      }
    });
  }

  private readonly listeners = new Set<(workspaceId: number) => void>();

  /** Calls `listener` whenever this server started or stopped replicas of a workspace (the router drops its routes). */
  onChange(listener: (workspaceId: number) => void): void {
    this.listeners.add(listener);
  }

  private changed(workspaceId: number): void {
    for (const listener of this.listeners) listener(workspaceId);
  }

  private async applyNow(workspaceId: number, options: ApplyOptions): Promise<void> {
    const row = await findWorkspace(this.deps.pool, workspaceId);
    if (!row) return;
    const ref = workspaceRef(row);
    const deployed = await findDeployedLandscape(this.deps.pool, workspaceId);
    const observed = await this.deps.driver.replicaStates(ref);
    const runs = row.state === 'running' || (options.waking === true && row.state === 'waking_up');
    if (!deployed || deployed.torn_down || !runs || row.deleted_at) {
      for (const replica of observed) {
        if (!deployed || !runsReplicas(deployed.normal.services[replica.service])) await this.deps.driver.removeReplica(ref, replica.service, replica.index);
        else if (replica.status !== 'stopped') await this.deps.driver.stopReplica(ref, replica.service, replica.index);
      }
      return;
    }
    const landscape = deployed.normal;
    const restart = new Set(options.restart ?? []);
    const retry = new Set(options.retry ?? []);
    if (retry.size > 0) await markServicesAwake(this.deps.pool, workspaceId, [...retry], this.deps.clock.now());
    const { stopped, asleep } = await serviceRunStates(this.deps.pool, workspaceId);
    for (const replica of observed) {
      const service = landscape.services[replica.service];
      if (!runsReplicas(service) || replica.index >= service.replicas) await this.deps.driver.removeReplica(ref, replica.service, replica.index);
      else if ((stopped.has(replica.service) || asleep.has(replica.service)) && replica.status !== 'stopped') {
        await this.deps.driver.stopReplica(ref, replica.service, replica.index);
      }
    }
    const env = openDeployedEnv(this.deps.secrets, deployed);
    const starts: Array<Parameters<RuntimeDriver['startReplica']>[1]> = [];
    for (const name of needsOrder(landscape)) {
      if (stopped.has(name) || asleep.has(name)) continue;
      for (const spec of replicaSpecs(landscape, name, env, deployed.images)) {
        const seen = observed.find((o) => o.service === name && o.index === spec.index);
        const again = seen && (seen.status === 'failure' || seen.status === 'finished') && retry.has(name);
        if (!seen || seen.status === 'stopped' || restart.has(name) || again) starts.push(spec);
      }
    }
    // Pods start together (needs first in the list); each replica waits for its needs itself.
    const started = await Promise.all(starts.map(async (spec) => {
      const service = landscape.services[spec.service];
      const replicas = service && 'replicas' in service ? service.replicas : 1;
      const step = options.record && beginReplicaStart(options.record, spec, replicas);
      const reason = await this.startReplica(row, spec, options.timeline);
      step?.end(reason === undefined ? { detail: `started ${spec.service} replica ${spec.index}` } : { failed: true, detail: reason });
      return reason === undefined ? [{ service: spec.service, index: spec.index, replicas, at: wallClockMs() }] : [];
    }));
    if (options.record) void recordFirstAnswers(this.deps.driver, ref, options.record, started.flat(), this.closing.signal);
  }

  /**
   * Resolves once no replica of the workspace is still starting (each is ready, or stopped, failed or finished), or
   * after `withinMs`; answers whether they settled. A wake for a request to a service keeps the editor in the
   * background until then (operations.ts). Each replica seen ready meanwhile is announced as a change (onChange: the
   * routers route the workspace afresh at once), so a held request goes on without waiting for its next look.
   */
  async settled(workspaceId: number, withinMs: number): Promise<boolean> {
    const row = await findWorkspace(this.deps.pool, workspaceId);
    if (!row) return true;
    const deadline = performance.now() + withinMs;
    const ready = new Set<string>();
    for (;;) {
      const observed = await this.deps.driver.replicaStates(workspaceRef(row));
      const readyNow = observed.filter((replica) => replica.status === 'running' && replica.ready).map((replica) => `${replica.service}/${replica.index}`);
      if (readyNow.some((key) => !ready.has(key))) this.changed(workspaceId);
      readyNow.forEach((key) => ready.add(key));
      if (observed.every((replica) => replica.status !== 'starting' && (replica.status !== 'running' || replica.ready))) return true;
      if (performance.now() >= deadline) return false;
      await delay(SETTLED_POLL_MS);
    }
  }

  /**
   * Makes ahead what the replicas of `landscape` need besides their image (the driver's `prepareReplicas`: their
   * network namespaces), while a Sync pulls its images. Only for a running workspace; nothing when the driver
   * prepares nothing or preparing failed (the start then does it, and says why it failed). Release it after the Sync.
   */
  async prepare(row: WorkspaceRow, landscape: NormalLandscape): Promise<PreparedReplicas | undefined> {
    if (row.state !== 'running' || !this.deps.driver.prepareReplicas) return undefined;
    const replicas = Object.entries(landscape.services).flatMap(([service, s]) => (runsReplicas(s) ? Array.from({ length: s.replicas }, (_, index) => ({ service, index })) : []));
    if (replicas.length === 0) return undefined;
    return this.deps.driver.prepareReplicas(workspaceRef(row), replicas).catch((error: Error) => {
      this.deps.log(`preparing the replicas of workspace ${row.id} failed: ${error.message}`);
      return undefined;
    });
  }

  /** A request for an asleep on-demand service: it wakes with everything it needs, in parallel. */
  async wake(workspaceId: number, service: string): Promise<void> {
    const deployed = await findDeployedLandscape(this.deps.pool, workspaceId);
    if (!deployed) return;
    await this.apply(workspaceId, { retry: withNeeds(deployed.normal, [service]) });
  }

  private readonly requests = new Map<string, number>();

  /** A request reached the service: it counts as activity (written at most every 30 s). */
  noteRequest(workspaceId: number, service: string): void {
    const key = `${workspaceId}/${service}`;
    const now = this.deps.clock.nowMs();
    if ((this.requests.get(key) ?? -Infinity) > now - 30_000) return;
    this.requests.set(key, now);
    void markServicesAwake(this.deps.pool, workspaceId, [service], new Date(now)).catch((error: Error) => this.deps.log(`activity of ${key}: ${error.message}`));
  }

  /** Puts idle on-demand services to sleep (a chore); answers `workspace/service` of those it put to sleep. */
  async sleepIdle(): Promise<string[]> {
    const slept: string[] = [];
    const rows = await this.deps.pool.query<{ id: number; team_id: number }>(
      `SELECT w.id, w.team_id FROM workspaces w JOIN landscapes l ON l.workspace_id = w.id WHERE w.state = 'running' AND w.deleted_at IS NULL AND NOT l.torn_down`,
    );
    for (const { id, team_id } of rows.rows) {
      const deployed = await findDeployedLandscape(this.deps.pool, id);
      if (!deployed) continue;
      const activity = await serviceActivity(this.deps.pool, id);
      const known = new Set(activity.map((a) => a.service));
      const fresh = Object.keys(deployed.normal.services).filter((name) => !known.has(name));
      if (fresh.length > 0) await markServicesAwake(this.deps.pool, id, fresh, this.deps.clock.now()); // idle from now on
      const names = servicesToSleep(deployed.normal, {
        stopped: await stoppedServices(this.deps.pool, id),
        asleep: new Set(activity.filter((a) => a.asleep).map((a) => a.service)),
        lastRequestMs: new Map(activity.map((a) => [a.service, a.last_request_at.getTime()])),
        nowMs: this.deps.clock.nowMs(),
      });
      for (const name of names) await markServiceAsleep(this.deps.pool, id, name);
      if (names.length > 0) {
        await this.apply(id);
        await publishEvent(this.deps.pool, { type: 'landscape.updated', at: this.deps.clock.now().toISOString(), team_id, workspace_id: id });
        slept.push(...names.map((name) => `${id}/${name}`));
      }
    }
    return slept;
  }

  /** Starts the replica; answers why it could not (nothing: it started). */
  private async startReplica(row: WorkspaceRow, spec: Parameters<RuntimeDriver['startReplica']>[1], timeline?: PhaseTimeline): Promise<string | undefined> {
    const key = `${row.id}/${spec.service}`;
    try {
      await this.deps.driver.startReplica(workspaceRef(row), spec, timeline);
      this.startFailures.delete(key);
      return undefined;
    } catch (error) {
      const reason = error instanceof RuntimeFailure ? error.reason : (error as Error).message;
      this.startFailures.set(key, `Could not start replica ${spec.index}: ${reason}`);
      this.deps.log(`workspace ${row.id}: ${spec.service} replica ${spec.index} did not start: ${reason}`);
      return reason;
    }
  }

  /** The deployed services with their statuses as observed now. */
  async views(row: WorkspaceRow, deployed: DeployedLandscapeRow | undefined): Promise<ServiceView[]> {
    if (!deployed) return [];
    const observed = row.state === 'running' ? await this.deps.driver.replicaStates(workspaceRef(row)) : [];
    return serviceViews({
      landscape: deployed.normal,
      tornDown: deployed.torn_down,
      workspaceState: row.state,
      ...(await serviceRunStates(this.deps.pool, row.id)),
      observed: [...observed, ...this.failedStarts(row.id, deployed.normal, observed)],
      managed: new Map((await liveManagedServices(this.deps.pool, row.id)).map((instance) => [instance.name, instance])),
      images: deployed.images,
    });
  }

  private failedStarts(workspaceId: number, landscape: NormalLandscape, observed: ReplicaObservation[]): ReplicaObservation[] {
    const failures: ReplicaObservation[] = [];
    for (const [key, detail] of this.startFailures) {
      const [id, service] = key.split('/');
      if (Number(id) !== workspaceId || !(service in landscape.services)) continue;
      if (observed.some((o) => o.service === service && o.status !== 'stopped' && o.status !== 'failure')) continue;
      failures.push({ service, index: 0, status: 'failure', detail, ready: false, restarts: 0 });
    }
    return failures;
  }

  /** Every second: the statuses of running landscapes; a change sends landscape.updated. */
  startWatching(intervalMs = 1000): void {
    const tick = async () => {
      try {
        await this.watchOnce();
      } catch (error) {
        this.deps.log(`service status watch: ${(error as Error).message}`);
      }
      this.timer = setTimeout(() => void tick(), intervalMs);
      this.timer.unref();
    };
    this.timer = setTimeout(() => void tick(), intervalMs);
    this.timer.unref();
  }

  async watchOnce(): Promise<void> {
    const rows = await this.deps.pool.query<{ id: number }>(
      `SELECT w.id FROM workspaces w JOIN landscapes l ON l.workspace_id = w.id
       WHERE w.state = 'running' AND w.deleted_at IS NULL AND NOT l.torn_down`,
    );
    for (const { id } of rows.rows) {
      const row = await findWorkspace(this.deps.pool, id);
      const deployed = await findDeployedLandscape(this.deps.pool, id);
      if (!row || !deployed) continue;
      const views = await this.views(row, deployed);
      const statuses = Object.fromEntries(views.map((v) => [v.name, v.detail ? `${v.status}: ${v.detail}` : v.status]));
      if (await recordServiceStatuses(this.deps.pool, id, statuses)) {
        await publishEvent(this.deps.pool, { type: 'landscape.updated', at: this.deps.clock.now().toISOString(), team_id: row.team_id, workspace_id: id });
      }
    }
  }

  close(): void {
    this.closing.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One apply per workspace at a time, in this server and (advisory lock) across the servers of the installation. */
  private serialized<T>(id: number, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(id) ?? Promise.resolve();
    const result = previous.catch(() => undefined).then(() => withWorkspaceLock(this.deps.pool, id, work));
    const tail = result.catch(() => undefined);
    this.tails.set(id, tail);
    void tail.then(() => {
      if (this.tails.get(id) === tail) this.tails.delete(id);
    });
    return result;
  }
}
