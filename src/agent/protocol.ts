// What the runtime driver and the agent inside a pod say to each other: the agent's settings (environment
// variables set by the driver) and its answer to `GET /status`.

export const AGENT_VERSION = '1';
export const AGENT_STATUS_PATH = '/status';

/** Defaults inside a pod with its own network namespace. */
export const DEFAULT_AGENT_PORT = 7070;
export const DEFAULT_EDITOR_PORT = 8443;

/** Environment variables the driver sets for the agent. */
export const agentEnv = {
  agentHost: 'SVC_AGENT_HOST',
  agentPort: 'SVC_AGENT_PORT',
  editorHost: 'SVC_EDITOR_HOST',
  editorPort: 'SVC_EDITOR_PORT',
  /** Shell command of the editor, run with `<shell> -lc`; the agent's built-in editor when empty. */
  editorCommand: 'SVC_EDITOR_COMMAND',
  workspaceDir: 'SVC_WORKSPACE_DIR',
  /** The built-in editor's script when the agent runs from its bundle (it then has no TypeScript loader). */
  editorScript: 'SVC_EDITOR_SCRIPT',
  /** A file holding the pod's token, which the server's exec and port-forward streams must carry. */
  tokenFile: 'SVC_AGENT_TOKEN_FILE',
  /** The shell of steps, the editor command and terminals (`bash` when unset): an image's own in a pod from an image. */
  shell: 'SVC_AGENT_SHELL',
  /** JSON argv that starts node (the agent's own binary when unset): the host's through its loader in a pod from an image. */
  node: 'SVC_AGENT_NODE',
  /**
   * JSON `{ plan, limitMiB, eventsFile }`: the editor pod's memory limit and where it sees its cgroup's memory events,
   * so that an editor killed for memory is logged as such (absent without cgroups).
   */
  editorMemory: 'SVC_AGENT_EDITOR_MEMORY',
  /** A replica's steps get the pod's HOME, USER, LOGNAME and SHELL (the workspace user's) when set; else HOME is /data/app. */
  userHome: 'SVC_AGENT_USER_HOME',
} as const;

/** What the agent knows of its pod's memory limit (`editorMemory`). */
export interface PodMemory {
  plan: string;
  limitMiB: number;
  eventsFile: string;
}

/** The shell the agent runs commands with (run as `<shell> -lc <command>`; bash and POSIX shells take both flags). */
export function podShell(env: NodeJS.ProcessEnv = process.env): string {
  return env[agentEnv.shell] || 'bash';
}

/** How the agent starts node for the built-in editor. */
export function nodeCommand(env: NodeJS.ProcessEnv = process.env): string[] {
  const setting = env[agentEnv.node];
  if (!setting) return [process.execPath];
  const argv = JSON.parse(setting) as unknown;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((part) => typeof part === 'string')) throw new Error(`${agentEnv.node} is not a list of strings`);
  return argv as string[];
}

/** `starting` until the editor answers HTTP; `failed` when it keeps crashing (the agent still retries). */
export type EditorPhase = 'starting' | 'ready' | 'failed';

export interface EditorReport {
  state: EditorPhase;
  /** Why it failed or last exited: the editor's last error line, or its exit code. */
  reason?: string;
  /** How many times the agent restarted the editor. */
  restarts: number;
  pid?: number;
  port: number;
  /** When this run of the editor was spawned and when it first answered (ms since the epoch; wake timings). */
  startedAt?: number;
  answeredAt?: number;
}

export interface AgentStatus {
  agentVersion: string;
  pid: number;
  editor: EditorReport;
  /**
   * sha256 of svc.yml and the svc.<profile>.yml files at the root of the workspace directory, as the agent's watch
   * last read them; it moves when one is written, created, renamed or removed. Absent until first read.
   */
  landscapeFiles?: string;
  /** When the agent's process started and when it listened (ms since the epoch; wake timings). */
  startedAt?: number;
  listeningAt?: number;
}

/** Reads an agent's answer, refusing anything that is not one. */
export function parseAgentStatus(body: unknown): AgentStatus | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const status = body as Partial<AgentStatus>;
  const editor = status.editor as Partial<EditorReport> | undefined;
  if (typeof status.agentVersion !== 'string' || typeof status.pid !== 'number' || !editor) return undefined;
  if (!['starting', 'ready', 'failed'].includes(editor.state as string) || typeof editor.port !== 'number') return undefined;
  if (status.landscapeFiles !== undefined && typeof status.landscapeFiles !== 'string') return { ...(status as AgentStatus), landscapeFiles: undefined };
  return status as AgentStatus;
}
