// The runtime driver: everything the server asks of the machines that run workspaces. The server never touches
// processes or volumes itself. First driver: `local` (directories and bubblewrap pods on this machine); a
// `kubernetes` driver comes later behind the same interface.

/** What a driver needs to know of a workspace. */
export interface WorkspaceRef {
  id: number;
  /** The workspace's own UID; processes run as this UID with group 0. */
  uid: number;
  storageGib: number;
}

export interface GitSource {
  /** Clone URL (a local path or file:// URL of a bare repository in tests). */
  url: string;
  /** Branch, tag or commit; the remote's default branch when absent. */
  ref?: string;
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
}

export interface VolumeUsage {
  bytes: number;
}

export interface RuntimeDriver {
  readonly name: string;

  /** Creates the workspace's volume (idempotent). */
  createVolume(workspace: WorkspaceRef): Promise<void>;
  /** Removes the volume and everything in it (idempotent). */
  deleteVolume(workspace: WorkspaceRef): Promise<void>;
  volumeUsage(workspace: WorkspaceRef): Promise<VolumeUsage>;

  /** Clones into the empty volume's /data/app inside a sandbox as the workspace UID; RuntimeFailure('clone') on failure. */
  cloneRepository(workspace: WorkspaceRef, source: GitSource, progress: ProgressReporter): Promise<void>;
  /** Sets up the volume of an empty workspace; RuntimeFailure('prepare-volume') on failure. */
  prepareEmptyVolume(workspace: WorkspaceRef, progress: ProgressReporter): Promise<void>;

  /** Starts the editor pod (agent, then editor) and resolves once the editor answers; RuntimeFailure on failure. */
  startEditor(workspace: WorkspaceRef, progress: ProgressReporter): Promise<EditorAddress>;
  /** Stops every process of the workspace (editor pod and, later, service replicas); files stay (idempotent). */
  stopWorkspace(workspace: WorkspaceRef): Promise<void>;
  /** What the driver observes now, e.g. after a server restart (`absent`: no pod runs, whether stopped or died). */
  editorState(workspace: WorkspaceRef): Promise<EditorState>;

  /** Packs the volume into `archiveFile` (compressed tar) and frees the volume. */
  archiveVolume(workspace: WorkspaceRef, archiveFile: string): Promise<{ bytes: number; sha256: string }>;
  /** Refills an empty volume from `archiveFile`. */
  restoreVolume(workspace: WorkspaceRef, archiveFile: string): Promise<void>;

  /** Releases the driver's own resources at server shutdown. Pods keep running; the next start finds them again. */
  close(): Promise<void>;
}
