// The server's Prometheus metrics (issue 40, docs/operators.md "Metrics"): one registry per server instance (tests
// run several servers in one process), never prom-client's global one. Counts of events are observed as they happen
// (requests, wakes, operations); states are read at each scrape (pods, instances, pool, streams, image store).
// Labels hold only bounded values of svc's own: route patterns, states, kinds; never a workspace's name or id.
import type pg from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PhaseTimeline } from '../core/phases.ts';
import type { ManagedServiceStatus } from '../store/managed-services.ts';
import { countManagedInstancesByStatus, countServicesByStatus, countWorkspacesByState, type CountBy } from '../store/metrics-counts.ts';
import { workspaceStates } from '../workspaces/lifecycle.ts';
import type { WakeKind } from '../workspaces/operations.ts';
import { wakePhaseSeconds } from './wake-phases.ts';

/** The Prometheus text format's content type (version 0.0.4). */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

const managedStatuses: ManagedServiceStatus[] = ['creating', 'updating', 'pausing', 'unpausing', 'deleting', 'synchronized', 'paused', 'deleted', 'unknown', 'invalid-provider'];

/** The statuses of a landscape's services with pods (spec 3.2; src/workspaces/deployment.ts). */
const serviceStatuses = ['pending', 'starting', 'running', 'internal', 'finished', 'failure', 'sleeping', 'stopped'];

/** API answers: from 1 ms to 30 s (event streams and shells end in the last bucket). */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Wakes and their phases: from 10 ms to 5 min (an image pull or a clone on the way). */
const WAKE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300];
/** Operations: from 10 ms to 30 min (an archive, a dump). */
const OPERATION_BUCKETS = [0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** What the scrape reads: each part absent when this server has none (no nginx, no image store). */
export interface MetricSources {
  pool: pg.Pool;
  /** Clients of GET /events on this server. */
  eventStreamClients?: () => number;
  /** The nginx data plane's reloads since the start. */
  dataPlaneReloads?: () => { succeeded: number; failed: number };
  /** The image store: bytes held and its limit (--images-max-size). */
  imageStore?: { usage(): Promise<number>; maxBytes: number };
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly wakes: Counter<'kind'>;
  private readonly wakeSeconds: Histogram<'kind'>;
  private readonly wakePhases: Histogram<'phase'>;
  private readonly operations: Counter<'kind' | 'outcome'>;
  private readonly operationSeconds: Histogram<'kind' | 'outcome'>;
  private sources?: MetricSources;
  /** The request histogram's series by `method status route` (bounded: routes x methods x statuses). */
  private readonly requestSeries = new Map<string, Histogram.Internal<'method' | 'route' | 'status'>>();

  constructor() {
    const registers = [this.registry];
    this.requests = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Console and API requests answered by svc, by method, route pattern and status; _count counts them',
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.wakes = new Counter({ name: 'svc_workspace_wakes_total', help: 'Workspaces brought up by this server: wake, start after a stop, editor restart', labelNames: ['kind'], registers });
    this.wakeSeconds = new Histogram({ name: 'svc_workspace_wake_duration_seconds', help: 'Wall time of a wake from its request (queued) to running', labelNames: ['kind'], buckets: WAKE_BUCKETS, registers });
    this.wakePhases = new Histogram({ name: 'svc_workspace_wake_phase_duration_seconds', help: "Time of each phase of a wake (other: a landscape's services)", labelNames: ['phase'], buckets: WAKE_BUCKETS, registers });
    this.operations = new Counter({ name: 'svc_operations_total', help: 'Operations this server ran to their end, by kind and outcome', labelNames: ['kind', 'outcome'], registers });
    this.operationSeconds = new Histogram({ name: 'svc_operation_duration_seconds', help: 'Run time of an operation on this server, by kind and outcome', labelNames: ['kind', 'outcome'], buckets: OPERATION_BUCKETS, registers });
    this.registerScrapedMetrics(registers);
  }

  /** What the scrape reads, once the server's parts run. */
  observe(sources: MetricSources): void {
    this.sources = sources;
  }

  /** One answered request: `route` is the route's pattern (`/api/v1/workspaces/:ws`), `unmatched` for none. */
  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    // One lookup by a plain key per request: cheaper than prom-client hashing the label object each time.
    const key = `${method} ${status} ${route}`;
    let series = this.requestSeries.get(key);
    if (!series) this.requestSeries.set(key, (series = this.requests.labels(method, route, String(status))));
    series.observe(seconds);
  }

  wakeEnded(timeline: PhaseTimeline, kind: WakeKind): void {
    this.wakes.inc({ kind });
    this.wakeSeconds.observe({ kind }, timeline.totalMs / 1000);
    for (const [phase, seconds] of wakePhaseSeconds(timeline.phases)) this.wakePhases.observe({ phase }, seconds);
  }

  operationEnded(kind: string, outcome: 'succeeded' | 'failed', seconds: number): void {
    this.operations.inc({ kind, outcome });
    this.operationSeconds.observe({ kind, outcome }, seconds);
  }

  /** The text Prometheus scrapes. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  private registerScrapedMetrics(registers: Registry[]): void {
    const metrics = this;
    new Gauge({
      name: 'svc_workspaces',
      help: 'Workspaces of the installation by state (a running one has its editor pod)',
      labelNames: ['state'],
      registers,
      async collect() {
        if (metrics.sources) setCounts(this, 'state', workspaceStates, await countWorkspacesByState(metrics.sources.pool));
      },
    });
    new Gauge({
      name: 'svc_services',
      help: "Services of running workspaces' landscapes by status (their replica pods)",
      labelNames: ['status'],
      registers,
      async collect() {
        if (metrics.sources) setCounts(this, 'status', serviceStatuses, await countServicesByStatus(metrics.sources.pool));
      },
    });
    new Gauge({
      name: 'svc_managed_instances',
      help: 'Managed-service instances of the installation by status',
      labelNames: ['status'],
      registers,
      async collect() {
        if (metrics.sources) setCounts(this, 'status', managedStatuses, await countManagedInstancesByStatus(metrics.sources.pool));
      },
    });
    new Counter({
      name: 'svc_data_plane_reloads_total',
      help: "Reloads of this server's nginx data plane since its start, by outcome",
      labelNames: ['outcome'],
      registers,
      collect() {
        const counts = metrics.sources?.dataPlaneReloads?.();
        this.reset();
        if (counts) for (const outcome of ['succeeded', 'failed'] as const) this.inc({ outcome }, counts[outcome]);
      },
    });
    new Gauge({
      name: 'svc_event_stream_clients',
      help: 'Clients of the event stream (GET /api/v1/events) on this server',
      registers,
      collect() {
        this.set(metrics.sources?.eventStreamClients?.() ?? 0);
      },
    });
    new Gauge({
      name: 'svc_database_pool_connections',
      help: "This server's PostgreSQL pool: connections open (total) and idle among them",
      labelNames: ['state'],
      registers,
      collect() {
        const pool = metrics.sources?.pool;
        this.set({ state: 'total' }, pool?.totalCount ?? 0);
        this.set({ state: 'idle' }, pool?.idleCount ?? 0);
      },
    });
    new Gauge({
      name: 'svc_database_pool_waiting_clients',
      help: "Queries waiting for a connection of this server's PostgreSQL pool",
      registers,
      collect() {
        this.set(metrics.sources?.pool.waitingCount ?? 0);
      },
    });
    new Gauge({
      name: 'svc_image_store_bytes',
      help: 'Bytes the image store holds (used) and may hold (limit, --images-max-size)',
      labelNames: ['kind'],
      registers,
      async collect() {
        this.reset();
        const store = metrics.sources?.imageStore;
        if (!store) return;
        const used = await store.usage().catch(() => undefined); // a store being made or removed: no number this time
        if (used !== undefined) this.set({ kind: 'used' }, used);
        this.set({ kind: 'limit' }, store.maxBytes);
      },
    });
  }
}

/** Every known key with its count (0 when absent), so that a state no longer held shows 0, not the last number. */
function setCounts(gauge: Gauge<string>, label: string, known: readonly string[], counts: CountBy[]): void {
  gauge.reset();
  for (const key of known) gauge.set({ [label]: key }, 0);
  for (const { key, count } of counts) if (known.includes(key)) gauge.set({ [label]: key }, count);
}
