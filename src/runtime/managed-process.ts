// A managed instance's server process as a runtime driver runs it, described without saying where (the seam between
// src/managed and the drivers): what to run, with which binaries, its persistent data directory, its secret files,
// its port and readiness. The managed engines write descriptions (pure); a driver that runs them (the Kubernetes
// driver: a StatefulSet of one replica with its claim and a Service) turns them into its own objects. Pure types.
import type { WorkspaceRef } from './driver.ts';

/** Environment variables every described process finds (their values are the driver's). */
export const managedProcessEnv = {
  /** The directory holding the binaries of the description's provider and version (`initdb`, `postgres`, `redis-server`). */
  bin: 'SVC_MANAGED_BIN',
  /** The persistent data directory (empty at the first start; kept across pauses; deleted with the instance). */
  data: 'SVC_MANAGED_DATA',
  /** The directory of the description's `secretFiles`, read-only, readable by the process's UID only. */
  secrets: 'SVC_MANAGED_SECRETS',
} as const;

export interface ManagedProcess {
  /** Which binaries: the provider and its version (`postgres` `16`, `redis` `7.2`). */
  provider: string;
  version: string;
  /**
   * A POSIX shell script run by `/bin/sh` as `uid` (group 0) in the data directory: prepares the data directory when
   * it is new, then `exec`s the server in the foreground. What it prints goes to the instance's log.
   */
  script: string;
  env: Record<string, string>;
  /** File name to content: passwords and settings the script reads from $SVC_MANAGED_SECRETS (never on a command line). */
  secretFiles: Record<string, string>;
  /** The UID it runs as (the workspace's); never root. */
  uid: number;
  /** The port clients use; reachable by the workspace's pods at the service's name. */
  port: number;
  /** Further ports on the same name (an HTTP endpoint). */
  extraPorts?: number[];
  /** The size of its data directory (MiB), as its plan says. */
  storageMiB: number;
  /** CPU and memory; none: the driver's defaults. */
  limits?: { cpuMillis: number; memoryMiB: number };
  /** The seconds the server gets to shut down cleanly when paused. */
  stopGraceSeconds: number;
  /** The signal of its clean shutdown when it is not SIGTERM (PostgreSQL's fast shutdown: SIGINT). */
  stopSignal?: 'SIGINT' | 'SIGQUIT';
}

/** Which instance: the workspace's managed service `name` (a managed service's name is unique in its landscape). */
export interface ManagedProcessRef {
  teamId: number;
  workspaceId: number;
  name: string;
}

export interface ManagedProcessHooks {
  /** Called before a running instance is changed (restarted to take another description). */
  changing?: () => Promise<void>;
}

export interface ManagedProcessRunner {
  /**
   * Creates the instance's process (and its data directory when it has none) or resumes it, or brings a running one to
   * `process` (restarting it when what it runs or reads changed); resolves once it is ready at the address answered,
   * where the svc server reaches it. Throws an Error whose message says why it did not start (its last output).
   */
  run(workspace: WorkspaceRef, name: string, process: ManagedProcess, hooks?: ManagedProcessHooks): Promise<{ address: string }>;
  /** Restarts a running instance (same data); resolves when it is ready again. */
  restart(ref: ManagedProcessRef): Promise<{ address: string }>;
  /** Pauses: the process ends, the data stays. Idempotent. */
  pause(ref: ManagedProcessRef): Promise<void>;
  /** Deletes the process and its data. Idempotent. */
  remove(ref: ManagedProcessRef): Promise<void>;
  /** Where the svc server reaches the running, ready instance; undefined when it does not run. */
  address(ref: ManagedProcessRef): Promise<string | undefined>;
}

/** The reference of `name` in `workspace` (the driver needs its team). */
export function managedProcessRef(workspace: Pick<WorkspaceRef, 'id' | 'teamId'>, name: string): ManagedProcessRef {
  if (workspace.teamId === undefined) throw new Error(`workspace ${workspace.id} came without its team`);
  return { teamId: workspace.teamId, workspaceId: workspace.id, name };
}
