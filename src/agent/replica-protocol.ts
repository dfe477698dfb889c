// What the driver tells the agent of a `steps` service replica and what the agent answers on `GET /status` in replica
// mode. The driver binds a directory of the replica's own at /run/svc (SVC_REPLICA_DIR): it holds the replica's
// settings (config.json, written by the driver: the service's env may hold secrets, so never on a command line) and
// the replica's log (log-file.ts), which the agent writes.

export const replicaEnv = {
  /** `replica` makes the agent run a service replica instead of the editor. */
  mode: 'SVC_AGENT_MODE',
  /** The replica's directory inside the pod. */
  dir: 'SVC_REPLICA_DIR',
  /**
   * The replica's index when the pod knows it better than config.json: a StatefulSet's pods share one config and
   * get their ordinal here (the `apps.kubernetes.io/pod-index` label); the Kubernetes driver's pods get it written in.
   */
  index: 'SVC_REPLICA_INDEX',
  /** `stdout`: the replica's log lines go to the agent's standard output (the container log Kubernetes keeps) instead of a file. */
  log: 'SVC_REPLICA_LOG',
} as const;

/** The config with the index of SVC_REPLICA_INDEX when that is set (a whole number); throws on anything else. */
export function replicaConfigWithIndex(config: ReplicaConfig, env: NodeJS.ProcessEnv): ReplicaConfig {
  const text = env[replicaEnv.index];
  if (text === undefined || text === '') return config;
  if (!/^\d{1,6}$/.test(text)) throw new Error(`${replicaEnv.index} must be a whole number, got "${text}"`);
  return { ...config, index: Number(text) };
}

export const REPLICA_POD_DIR = '/run/svc';
export const REPLICA_CONFIG_FILE = 'config.json';

export type HealthMode = 'any-http' | 'http-2xx';

export interface ReplicaHealth {
  port: number;
  /** Default `/`. */
  path?: string;
  /** Default `any-http`. */
  mode?: HealthMode;
}

/** A needed service as the agent reaches it. */
export interface NeedAddress {
  name: string;
  /** The service's name: every pod of the workspace resolves it (its /etc/hosts) once a replica of it started. */
  host: string;
  port: number;
  /** Checked over HTTP when set (the needed service's health check), else a TCP connect to `port`. */
  healthPath?: string;
  healthMode?: HealthMode;
  /** The needed replica's agent control port: when set, a needed service that reports `failure` ends the wait. */
  agentPort?: number;
}

export interface ReplicaTimings {
  backoffBaseMs: number;
  backoffMaxMs: number;
  giveUpFailures: number;
  giveUpWindowMs: number;
  /** How long a replica waits for its needs before its first step (5 minutes). */
  needsTimeoutMs: number;
  probeIntervalMs: number;
}

export const defaultReplicaTimings: ReplicaTimings = {
  backoffBaseMs: 1000,
  backoffMaxMs: 60_000,
  giveUpFailures: 5,
  giveUpWindowMs: 120_000,
  needsTimeoutMs: 300_000,
  probeIntervalMs: 500,
};

/** A `container` service replica's process, as the agent starts it (no shell: the image may have none). */
export interface ContainerProcess {
  /** The image as written and the digest pinned at Sync, for the log. */
  image: string;
  digest: string;
  /** ENTRYPOINT and CMD, or the service's `command` and `args` in their place; never empty. */
  argv: string[];
  /** The image's `Env` with the service's env laid over it; the whole environment of the process. */
  env: Record<string, string>;
  /** Absolute; the image's `WorkingDir`, else `/`. */
  workingDir: string;
  /** The UID the process runs as inside the pod (group 0). */
  uid: number;
  /** The image config's `User` (empty when it names none): what the note of rule 6 says it expects. */
  imageUser: string;
}

/** The image a steps replica's pod runs from, as its agent knows it. */
export interface StepsImage {
  image: string;
  digest: string;
  /** The image config's `Env` as a map. */
  env: Record<string, string>;
}

export interface ReplicaConfig {
  service: string;
  index: number;
  /** Empty for a container replica, which runs `container` instead. */
  steps: Array<{ name?: string; run: string }>;
  container?: ContainerProcess;
  /** The service's env, templates already filled, every value a string. */
  env: Record<string, string>;
  ports: number[];
  health?: ReplicaHealth;
  needs: NeedAddress[];
  /** A steps replica's image (its pod's root): named in the log; its `Env` under the service's env. */
  image?: StepsImage;
  timings: ReplicaTimings;
  /** The pod's token for the server's exec and port-forward streams (stream-protocol.ts). */
  agentToken?: string;
  /**
   * The pod's memory limit (its plan's) and where the pod sees its cgroup's memory events: a process killed with
   * SIGKILL while the `oom_kill` count grew was killed for memory, and the log says so. Absent without cgroups.
   */
  memory?: { plan: string; limitMiB: number; eventsFile: string };
}

/** The `oom_kill N` count of a cgroup's memory events (v1 memory.oom_control and v2 memory.events both have it). */
export function oomKillsOf(text: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}

export type ReplicaStatusValue = 'starting' | 'running' | 'finished' | 'failure';

export interface ReplicaReport {
  status: ReplicaStatusValue;
  /** E.g. `Step exited with code 3`, `Giving up: exited with 1; 5 failures in 2m0s`. */
  detail?: string;
  /** The health check passes (or, without one, the first port answers, or without ports the server runs). */
  ready: boolean;
  restarts: number;
  serverPid?: number;
}

export interface ReplicaAgentStatus {
  agentVersion: string;
  pid: number;
  replica: ReplicaReport;
}

export function parseReplicaStatus(body: unknown): ReplicaAgentStatus | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const status = body as Partial<ReplicaAgentStatus>;
  const replica = status.replica as Partial<ReplicaReport> | undefined;
  if (typeof status.agentVersion !== 'string' || typeof status.pid !== 'number' || !replica) return undefined;
  if (!['starting', 'running', 'finished', 'failure'].includes(replica.status as string) || typeof replica.ready !== 'boolean') return undefined;
  if (typeof replica.restarts !== 'number') return undefined;
  return status as ReplicaAgentStatus;
}
