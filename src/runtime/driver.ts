// The runtime driver: everything the server asks of the machines that run workspaces. The server never touches
// processes or volumes itself. Drivers: `local` (directories and bubblewrap pods on this machine) and `kubernetes`
// (a namespace per team, pods and Jobs on a cluster: src/runtime/kubernetes/).
import type { WebSocket } from 'ws';
import type { TerminalSize } from '../core/channel-protocol.ts';
import type { PhaseTimeline } from '../core/phases.ts';
import type { ImageConfig } from './image.ts';
import type { WorkspaceFiles } from './workspace-files.ts';
import type { CloneCredential } from '../git/credentials.ts';
import type { ExecGitIdentity } from '../agent/stream-protocol.ts';
import type { ManagedProcessRunner } from './managed-process.ts';

/** What a driver needs to know of a workspace. */
export interface WorkspaceRef {
  id: number;
  /** The workspace's team (the Kubernetes driver's namespace); the local driver does not need it. */
  teamId?: number;
  /** The workspace's `restricted` flag (spec 2.3), shown where its pods are; the router enforces it. */
  restricted?: boolean;
  /**
   * Whether its pods reach beyond the workspace (docs/runtime.md, "The pod network"): `on` (the installation's
   * egress policy; the default) or `off` (the team's or the workspace's setting: nothing outside its own pods).
   */
  egress?: 'on' | 'off';
  /** The workspace's own UID; processes run as this UID with group 0. */
  uid: number;
  storageGib: number;
  /** The workspace's plan (its editor pod's and stage steps' limits); the installation's default when absent. */
  plan?: string;
  /**
   * The workspace's `base_image` pinned at its first start (spec 2.3): the editor pod's and stage steps' root
   * filesystem. Absent: the installation's base image (the local driver: the machine's own system).
   */
  baseImage?: PinnedRoot;
  /** The workspace's name: its pods' host name (local driver). */
  name?: string;
  /** Who the workspace UID is in its pods (workspace-user.ts): its owner; `developer` when absent. */
  user?: WorkspaceUser;
  /** The owner's dotfiles repository: cloned into HOME and its install script run at the workspace's first start. */
  dotfiles?: string;
}

/** The person a workspace's UID is named after in its pods' passwd (docs/workspaces.md, "Who you are in a workspace"). */
export interface WorkspaceUser {
  /** The login name: lower-case letters, digits, `_` and `-`, starting with a letter, at most 32 characters. */
  login: string;
  /** Their name as the passwd's GECOS field shows it. */
  fullName: string;
}

/** An image pinned by the server (at Sync, or a workspace's first start) and unpacked on this machine. */
export interface PinnedRoot {
  /** The reference as written (for the log). */
  image: string;
  digest: string;
  /** The image's unpacked root filesystem on this machine; shared, never written. */
  rootfs: string;
  config: ImageConfig;
}

export interface GitSource {
  /** Clone URL (a local path or file:// URL of a bare repository in tests). */
  url: string;
  /** Branch, tag or commit; the remote's default branch when absent. */
  ref?: string;
  /**
   * The creating user's credential for the URL's host (none: they have none; absent: a repository on this
   * machine). Given to git for this one run only: never in a command line, the volume or a message.
   */
  credential?: CloneCredential;
}

/** Progress as the status texts of spec 3.1 ("Configuring storage", "Starting IDE", ...). */
export type ProgressReporter = (statusText: string) => void;

/** A failure the workspace shows as Error with this reason (3.1), e.g. "Cloning the repository failed: <reason>". */
export class RuntimeFailure extends Error {
  constructor(
    readonly stage: 'clone' | 'prepare-volume' | 'agent' | 'ide',
    readonly reason: string,
  ) {
    super(reason);
  }
}

export type EditorState =
  | { state: 'absent' }
  | { state: 'starting'; statusText: string }
  | { state: 'ready'; address: EditorAddress }
  | { state: 'failed'; failure: RuntimeFailure };

/** Where the router reaches the editor of a running workspace. */
export interface EditorAddress {
  host: string;
  port: number;
  /** The pod template the editor pod was made from (see `podTemplate`); absent when the driver does not know. */
  template?: string;
}

export interface VolumeOwnerResult {
  /** Entries that could not be changed, as the workspace sees them (`/data/app/...`), with the reason; the first few. */
  unchanged: Array<{ path: string; reason: string }>;
  /** How many more could not be changed. */
  moreUnchanged: number;
}

export interface VolumeUsage {
  bytes: number;
  /** Whether the volume's file system stops writes at its size (the local driver's loop backend), or it is only measured. */
  enforced?: boolean;
}

/** Which editor the driver's pods run, and why (shown on GET /workspaces/{ws}). */
export interface EditorDescription {
  kind: 'code-server' | 'built-in' | 'command';
  version?: string;
  reason: string;
}

export interface StopOptions {
  sleeping?: boolean;
}

/** How an editor pod starts. */
export interface EditorStartOptions {
  /**
   * The pod runs at a background CPU priority until this settles, then at its normal one (a wake for a request to a
   * service: the service's start comes first, the editor takes the CPU the rest leaves). A driver without CPU
   * priorities, or a pod found running already, ignores it.
   */
  backgroundUntil?: Promise<unknown>;
}

export interface RuntimeDriver extends ReplicaDriver, PodStreams {
  readonly name: string;
  /** The editor new editor pods run. */
  readonly editor?: EditorDescription;
  /**
   * The editor's web client files as this machine holds them (code-server from the tools directory): what the
   * editor serves under `urlPrefix` (a path naming its build) is in `dir`; the nginx data plane serves them itself.
   */
  readonly editorWebFiles?: { urlPrefix: string; dir: string };
  /** How the server reads a workspace's landscape files when the volume is not on its machine; the local reader when absent. */
  readonly files?: WorkspaceFiles;

  /** Creates the workspace's volume (idempotent). */
  createVolume(workspace: WorkspaceRef): Promise<void>;
  /** Removes the volume and everything in it (idempotent). */
  deleteVolume(workspace: WorkspaceRef): Promise<void>;
  volumeUsage(workspace: WorkspaceRef): Promise<VolumeUsage>;

  /** Clones into the empty volume's /data/app inside a sandbox as the workspace UID; RuntimeFailure('clone') on failure. */
  cloneRepository(workspace: WorkspaceRef, source: GitSource, progress: ProgressReporter): Promise<void>;
  /** Sets up the volume of an empty workspace; RuntimeFailure('prepare-volume') on failure. */
  prepareEmptyVolume(workspace: WorkspaceRef, progress: ProgressReporter): Promise<void>;

  /**
   * Starts the editor pod (agent, then editor) and resolves once the editor answers; RuntimeFailure on failure.
   * `timeline` gets a mark at the end of each phase of the start (pod network, sandbox, agent, editor, ...).
   */
  startEditor(workspace: WorkspaceRef, progress: ProgressReporter, timeline?: PhaseTimeline, options?: EditorStartOptions): Promise<EditorAddress>;
  /**
   * The pod template an editor pod of the workspace started now is made from (spec 2.3 `upgrade_pending`: a running
   * pod made from another one switches over at its next sleep, stop or restart). Absent: the driver does not tell.
   */
  podTemplate?(workspace: WorkspaceRef): string;
  /**
   * Stops every process of the workspace (editor pod and every service replica, which then read `stopped`); files
   * stay (idempotent). `sleeping`: the workspace goes to sleep and is woken on this machine again, so the driver
   * may keep what a wake reuses (the local driver keeps its network namespaces); a stop without it releases them.
   */
  stopWorkspace(workspace: WorkspaceRef, options?: StopOptions): Promise<void>;
  /** What the driver observes now, e.g. after a server restart (`absent`: no pod runs, whether stopped or died). */
  editorState(workspace: WorkspaceRef): Promise<EditorState>;
  /**
   * Calls `listener` as soon as an editor pod this process started ends without being stopped (its processes died),
   * with the workspace id and how it ended, and `node-drained` when the cluster took the pod away (a drain, an
   * eviction: the workspace sleeps then, spec 3.1); answers the unsubscribe. Absent: the driver cannot tell.
   */
  onEditorExit?(listener: (workspaceId: number, reason: string, loss?: 'node-drained') => void): () => void;
  /**
   * A fingerprint of the landscape files (svc.yml, svc.<profile>.yml) at the root of /data/app, as the editor pod's
   * agent watches them: it moves when one is written, created, renamed or removed. Undefined while no agent answers.
   */
  landscapeFilesFingerprint(workspace: WorkspaceRef): Promise<string | undefined>;

  /** Packs the volume into `archiveFile` (compressed tar) and frees the volume. */
  archiveVolume(workspace: WorkspaceRef, archiveFile: string): Promise<{ bytes: number; sha256: string }>;
  /** Refills an empty volume from `archiveFile`. */
  restoreVolume(workspace: WorkspaceRef, archiveFile: string): Promise<void>;

  /**
   * Hands the workspace's files (its volume, and its /nix on the local driver) to `uid` with group 0, group
   * permissions equal to the user's and setgid on directories (spec 4.7); its processes are stopped meanwhile.
   * Answers what could not be changed (empty: all done). Absent where the driver cannot (the API answers 501).
   */
  reownVolume?(workspace: WorkspaceRef, uid: number, signal?: AbortSignal): Promise<VolumeOwnerResult>;

  /** Releases the driver's own resources at server shutdown. Pods keep running; the next start finds them again. */
  close(): Promise<void>;
}

// ---- `steps` and `container` service replicas (spec 2.8, 3.2) and stage steps (3.3) ----

export type ReplicaHealthMode = 'any-http' | 'http-2xx';

/**
 * A service a replica needs. The replica reaches it by its name (every pod of the workspace resolves service names
 * to replica addresses) and waits for its health check (`healthPath` set), else for `port` to accept connections.
 */
export interface ReplicaNeed {
  name: string;
  port: number;
  healthPath?: string;
  healthMode?: ReplicaHealthMode;
}

/**
 * What a `container` service's replica runs instead of steps: the image pinned at Sync, its root filesystem read-only
 * as the pod's `/`, its ENTRYPOINT and CMD replaced by the service's `command` and `args` when given.
 */
export interface ContainerRun extends PinnedRoot {
  /** Replaces the image's Entrypoint (its Cmd is then dropped unless `args` is given, as in Kubernetes). */
  command?: string[];
  /** Replaces the image's Cmd. */
  args?: string[];
  /** The UID the process sees instead of the workspace's; only for teams an administrator allowed (the caller checks). */
  runAsUser?: number;
}

/**
 * One replica of a `steps` or `container` service as the driver runs it; the caller has filled the env's templates.
 * A container replica has no steps; its env is laid over the image's `Env`.
 */
export interface ReplicaSpec {
  service: string;
  /** 0-based. */
  index: number;
  steps: Array<{ name?: string; run: string }>;
  /** Set for a `container` service: what it runs instead of `steps`. */
  container?: ContainerRun;
  /** Every value a string (numbers and booleans already turned into strings). */
  env: Record<string, string>;
  ports: number[];
  health?: { port: number; path: string; mode: ReplicaHealthMode };
  /** `from` relative to /data/app (no `..`), `to` absolute in the pod. */
  mounts: Array<{ from: string; to: string }>;
  needs: ReplicaNeed[];
  /** A `steps` service's `image` pinned at Sync: the pod's root filesystem, the steps run by its shell. */
  root?: PinnedRoot;
  /** A `steps` service's `nixWritable`: its pod's /nix read-write instead of read-only. */
  nixWritable?: boolean;
  /** The service's plan (the pod's CPU and memory limits); the installation's default service plan when absent. */
  plan?: string;
}

/** Where the replica's pod is reached from the server (its ports listen on `host`). */
export interface ReplicaAddress {
  host: string;
}

/** Status values of spec 3.2 the driver observes; `internal` is the caller's to decide (it sees `running`). */
export type ReplicaStatus = 'starting' | 'running' | 'finished' | 'failure' | 'stopped';

export interface ReplicaObservation {
  service: string;
  index: number;
  status: ReplicaStatus;
  /** E.g. `Step exited with code 3`, `Giving up: exited with 1; 5 failures in 2m0s`. */
  detail?: string;
  /** The health check passes (without one: the first port answers; without ports: the server runs). */
  ready: boolean;
  address?: ReplicaAddress;
  restarts: number;
}

export interface LogLine {
  /** Increases by one per line of one replica run or step run; `since` in reads is the last seq seen. */
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  text: string;
}

export interface LogRead {
  lines: LogLine[];
  /** Lines dropped by the size bound before the first line returned (0 when none). */
  dropped: number;
}

/** A stage step (3.3) running in the workspace's editor pod. */
export interface StageStepRun {
  /** The exit code, or `null` when it was aborted. */
  exited: Promise<{ exitCode: number | null }>;
  /** Ends the step's processes (idempotent); `exited` then resolves with `null`. */
  abort(): Promise<void>;
}

export interface ReplicaRef {
  service: string;
  index: number;
}

export interface PreparedReplicas {
  release(): Promise<void>;
}

export interface ReplicaDriver {
  /**
   * Places managed service `name` on the workspace's service network: a network namespace of its own at an address
   * no replica gets, its name resolving there in every pod (idempotent). Absent on drivers that run none.
   */
  placeManagedService?(workspace: WorkspaceRef, name: string): Promise<{ netns: string; address: string }>;
  /** Removes its namespace (what runs in it ends) and its name; idempotent. */
  removeManagedService?(workspace: WorkspaceRef, name: string): Promise<void>;
  /** The address managed service `name` was placed at (the router reaches its HTTP endpoint there), if placed. */
  managedServiceAddress?(workspace: WorkspaceRef, name: string): Promise<string | undefined>;
  /**
   * A driver that runs managed instances from their description (managed-process.ts) rather than giving them a place
   * on this machine (the Kubernetes driver). The managed engines that describe their process run through it.
   */
  managedProcesses?: ManagedProcessRunner;
  /** Why this driver runs no managed services now (e.g. a setting it lacks), for the 501 of a Sync; absent when it can. */
  managedUnavailable?: string;
  /**
   * Makes ahead what starting these replicas needs that depends neither on their image nor on their spec (the local
   * driver as root: the workspace's service network and each replica's network namespace linked to it), so a Sync
   * does it while its images are pulled; nothing runs in it. Replicas that run are left alone. `release` removes
   * what no start of a replica used since (a failed Sync, a replica not started), and must be called. Optional.
   */
  prepareReplicas?(workspace: WorkspaceRef, replicas: ReplicaRef[]): Promise<PreparedReplicas>;
  /**
   * Starts (or restarts afresh) the replica's pod and resolves once its agent runs; its steps go on in the pod.
   * `timeline` receives the start's phases where the driver tells them apart (a Sync's log line, bench/images).
   */
  startReplica(workspace: WorkspaceRef, spec: ReplicaSpec, timeline?: PhaseTimeline): Promise<ReplicaAddress>;
  /** Ends every process of the replica's pod; it then reads as `stopped`, its log stays (idempotent). */
  stopReplica(workspace: WorkspaceRef, service: string, index: number): Promise<void>;
  /** Every replica of the workspace the driver knows of (running, ended or stopped), by service and index. */
  replicaStates(workspace: WorkspaceRef): Promise<ReplicaObservation[]>;
  /** Lines of the replica's log (its current or last run) after seq `since` (default: from the start), at most `limit`. */
  replicaLogs(workspace: WorkspaceRef, service: string, index: number, options?: { since?: number; limit?: number }): Promise<LogRead>;
  /** Forgets a removed replica: stops it and deletes its log. */
  removeReplica(workspace: WorkspaceRef, service: string, index: number): Promise<void>;

  /**
   * Runs a stage step with `bash -lc` in /data/app of the workspace's editor pod (its network, its volume), with
   * `env` (workspace variables, never secrets). Throws RuntimeFailure('agent') when the editor pod does not run.
   * `key` names the step's log (e.g. `prepare-12-1`).
   */
  runStageStep(workspace: WorkspaceRef, key: string, step: { run: string; env: Record<string, string> }): Promise<StageStepRun>;
  /**
   * Applies the workspace's `egress` to the pods it has now (the local driver as root: its links' group), so a
   * change of the setting takes effect at once; absent where pods take it at their next start.
   */
  applyEgress?(workspace: WorkspaceRef): Promise<void>;
  stageStepLogs(workspace: WorkspaceRef, key: string, options?: { since?: number; limit?: number }): Promise<LogRead>;
}


// ---- shells and forwarded ports (`svc ssh`, `svc exec`, `svc port-forward`) ----

/** Which pod a shell or a forwarded port goes to: the editor pod, or a replica of a `steps` service. */
export type PodTarget = { kind: 'editor' } | { kind: 'replica'; service: string; index: number };

export interface ExecSpec {
  /** argv, through a login shell; an interactive login shell when empty. */
  command: string[];
  /** A pseudo-terminal of `size` (stdout and stderr together on channel 1). */
  tty: boolean;
  /** Whether the caller sends stdin; otherwise the command reads an empty one. */
  stdin: boolean;
  size?: TerminalSize;
  /** Added to the pod's environment: the workspace's variables in the editor pod (never secrets). */
  env: Record<string, string>;
  /** The git identity of the person at the keyboard, served by the agent for this session only (git-sockets.ts). */
  git?: ExecGitIdentity;
}

/** Both resolve with the socket paused: frames that came with the handshake wait until the caller listens and resumes it. */
export interface PodStreams {
  /**
   * Runs a command or shell in /data/app of the pod as the workspace UID; resolves with an open WebSocket speaking
   * EXEC_PROTOCOL (src/core/channel-protocol.ts) to it. RuntimeFailure('agent') when the pod does not run.
   */
  openExec(workspace: WorkspaceRef, target: PodTarget, spec: ExecSpec): Promise<WebSocket>;
  /**
   * One TCP connection dialled from inside the pod to host:port (`127.0.0.1`, or a name on the workspace's network),
   * as an open WebSocket speaking PORT_FORWARD_PROTOCOL. RuntimeFailure('agent') when the pod does not run.
   */
  openPortForward(workspace: WorkspaceRef, target: PodTarget, to: { host: string; port: number }): Promise<WebSocket>;
  /**
   * The channel that tells the editor pod's agent who has the editor open through this server (AGENT_EDITOR_GIT_PATH
   * of src/agent/stream-protocol.ts), open and paused. RuntimeFailure('agent') when the pod does not run.
   */
  openEditorGit(workspace: WorkspaceRef): Promise<WebSocket>;
  /**
   * One SSH connection served by the editor pod's agent (issue 38, src/agent/ssh-server.ts) with `spec.hostKey`, as
   * an open WebSocket speaking SSH_PROTOCOL. RuntimeFailure('agent') when the pod does not run.
   */
  openSsh(workspace: WorkspaceRef, spec: SshSpec): Promise<WebSocket>;
}

export interface SshSpec {
  /** The workspace's host key, OpenSSH private key format. */
  hostKey: string;
  /** As ExecSpec's: the workspace's variables and managed values, and the caller's git identity. */
  env: Record<string, string>;
  git?: ExecGitIdentity;
}
