// What every managed-service provider implements on a runtime (spec 3.4): an engine creates or resumes an instance
// from what the file asks, pauses it, deletes it with its data. The lifecycle (lifecycle.ts) calls engines by
// provider name (engines.ts) and knows nothing of PostgreSQL, Redis or NATS.
import type { NormalManagedService } from '../landscape/index.ts';
import type { Cgroups } from '../runtime/local/cgroups.ts';
import type { ManagedPlanDefinition } from './providers.ts';

/** Where instances keep their data and find their binaries; `log` goes to the server's log. */
export interface ManagedHost {
  dataDir: string;
  /** SVC_TOOLS_DIR: where the set-up scripts installed providers' binaries (e.g. <tools>/postgres/<major>). */
  toolsDir: string;
  log: (message: string) => void;
  /**
   * The host's cgroups (the local runtime as root): each instance's server runs in a cgroup of its own with its
   * plan's CPU and memory limits (instance-process.ts). None: instances run without limits.
   */
  cgroups?: Cgroups;
}

/** A start, stop or creation that did not succeed; `reason` is what the provider's server or the sandbox said. */
export class ManagedInstanceFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** One instance as the file and the catalog ask for it, placed on the workspace's service network. */
export interface InstanceRequest {
  /** The managed service's number: its directory is <data dir>/managed/<number>, its host ms-<number>. */
  id: number;
  /** Its name in svc.yml, also its host name on the service network. */
  name: string;
  /** The file's entry, templates and `secrets` filled in. */
  service: NormalManagedService;
  /** The version the instance was created with (or is created with now). */
  version: string;
  /** The plan's resources with the file's `resources` overrides applied. */
  plan: ManagedPlanDefinition | undefined;
  /** The workspace's UID: the instance runs as it, never as root. */
  uid: number;
  /** The network namespace and address the driver placed it at. */
  netns?: string;
  address: string;
}

/** How Sync asks an engine to bring a running instance to the request. */
export interface EnsureOptions {
  /**
   * Restart the server of an instance that was already running, since the plan says the change needs it
   * (a value whose update rule is `restart` changed). An engine also restarts when its server says a setting waits
   * for a restart.
   */
  restart?: boolean;
  /** Called once before a change reaches an instance that was running (its status becomes `updating`). */
  updating?: () => Promise<void>;
}

/** What the instance publishes (spec 2.8 `details`): shown by the API, never the password. */
export type InstanceDetails = Record<string, string | number | boolean>;

export interface ProviderEngine {
  /**
   * Creates the instance when it has no data yet, else starts it as it is (resume), then brings its settings to
   * the request's (restarting its server when that needs it). Answers once it serves. Idempotent: Sync calls it
   * every time. Throws ManagedInstanceFailure.
   */
  ensure(host: ManagedHost, request: InstanceRequest, options?: EnsureOptions): Promise<InstanceDetails>;
  /** Pauses: its processes end, its data stays. Idempotent. */
  stop(host: ManagedHost, id: number): Promise<void>;
  /** Deletes its processes and its data. Idempotent. */
  remove(host: ManagedHost, id: number): Promise<void>;
  /** Whether its server process runs. */
  isRunning(host: ManagedHost, id: number): Promise<boolean>;
  /**
   * Writes a consistent dump of the running instance to `file` (pg_dump custom format for postgres, an RDB
   * snapshot for redis). Providers without the `dump` capability have none. Throws ManagedInstanceFailure.
   */
  dump?(host: ManagedHost, request: InstanceRequest, file: string): Promise<DumpInfo>;
  /** Loads `file`, a dump of this provider, into the running instance (a fresh one in the tests). */
  restore?(host: ManagedHost, request: InstanceRequest, file: string): Promise<void>;
  /**
   * What this installation lacks to dump and restore (e.g. client tools a set-up script installs), in words for a
   * 501; undefined when it has all it needs. Absent: dump and restore need nothing beyond the engine.
   */
  missingDumpTools?(host: ManagedHost): Promise<string | undefined>;
  /** The port of the instance's HTTP endpoint served on its managed-service host ms-<number>, if it has one. */
  httpPort?(request: Pick<InstanceRequest, 'service' | 'version'>): number;
}

/** What a dump file is, for its download. */
export interface DumpInfo {
  /** e.g. `pg_dump custom format`, `redis RDB`. */
  format: string;
  /** The file name extension of a download: `.dump`, `.rdb`. */
  extension: string;
  mediaType: string;
}
