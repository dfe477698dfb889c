// The agent: the main process of a pod. It runs the editor, watches the landscape files of the workspace, and
// answers the driver's `GET /status` with what it observes.
import { wallClockMs } from '../core/phases.ts';
import { editorGitEnv } from './editor-git-paths.ts';
import { startEditor } from './editor-start.ts';
import type { EditorSupervisor } from './editor-supervisor.ts';
import { watchLandscapeFiles } from './landscape-watch.ts';
import { AGENT_VERSION, type AgentStatus } from './protocol.ts';
import { serveStatus } from './status-server.ts';
import { commandEnv } from './command-env.ts';
import type { SupervisionPolicy } from './supervision.ts';

export interface AgentOptions {
  /** Where the control server listens (0.0.0.0:7070 in a pod with its own network). */
  host: string;
  port: number;
  editorHost: string;
  editorPort: number;
  /** Shell command of the editor, run with `bash -lc`; defaults to the built-in editor. */
  editorCommand?: string;
  workspaceDir: string;
  /** The pod's token for exec and port-forward streams; none without it. */
  token?: string;
  nowMs?: () => number;
  log?: (line: string) => void;
  policy?: SupervisionPolicy;
  /** Where the editor's git credentials are served (editor-git.ts); none without it. */
  editorGitDir?: string;
  /** The editor when the caller started it already (main.ts starts it before it loads the rest of the agent). */
  editor?: EditorSupervisor;
}

export interface RunningAgent {
  /** The control server's port (the chosen one when `port` was 0). */
  port: number;
  status(): AgentStatus;
  close(): Promise<void>;
}

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const log = options.log ?? ((line: string) => console.log(`agent: ${line}`));
  // the editor first: its start takes longest, and runs while the status server starts
  const editor = options.editor ?? startEditor({ ...options, editorEnv: options.editorGitDir ? editorGitEnv(options.editorGitDir) : undefined, log });
  // the editor's git credentials, served while the status server starts (streams wait for them)
  const editorGit = options.editorGitDir
    ? import('./editor-git.ts').then(({ serveEditorGit }) => serveEditorGit(options.editorGitDir!, log)).catch((error: Error) => {
      log(`editor git: the editor gets no git credentials: ${error.message}`);
      return undefined;
    })
    : undefined;
  const streams = { token: options.token, workspaceDir: options.workspaceDir, baseEnv: commandEnv(process.env), editorGit };
  const server = await serveStatus(options.host, options.port, () => status(), streams, (listener) => editor.onChange(listener));
  const listeningAt = wallClockMs();
  const { port } = server;
  log(`agent ${AGENT_VERSION} listening on ${options.host}:${port}`);
  const landscapeFiles = watchLandscapeFiles({ dir: options.workspaceDir });
  const status = (): AgentStatus => ({
    agentVersion: AGENT_VERSION,
    pid: process.pid,
    editor: editor.report(),
    landscapeFiles: landscapeFiles.fingerprint(),
    startedAt: performance.timeOrigin,
    listeningAt,
  });
  return {
    port,
    status,
    close: async () => {
      landscapeFiles.close();
      await editor.stop();
      await server.close();
      await (await editorGit)?.close();
    },
  };
}
