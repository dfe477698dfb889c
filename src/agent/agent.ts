// The agent: the main process of a pod. It runs the editor, watches the landscape files of the workspace, and
// answers the driver's `GET /status` with what it observes.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wallClockMs } from '../core/phases.ts';
import { EditorSupervisor } from './editor-supervisor.ts';
import { watchLandscapeFiles } from './landscape-watch.ts';
import { shellQuote } from './shell.ts';
import { agentEnv, AGENT_VERSION, nodeCommand, type AgentStatus, type PodMemory } from './protocol.ts';
import { serveStatus } from './status-server.ts';
import { commandEnv } from './stream-server.ts';
import { editorSupervisionPolicy, type SupervisionPolicy } from './supervision.ts';

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
  /** The pod's memory limit and cgroup memory events: an editor killed for memory is logged as such. */
  memory?: PodMemory;
}

export interface RunningAgent {
  /** The control server's port (the chosen one when `port` was 0). */
  port: number;
  status(): AgentStatus;
  close(): Promise<void>;
}

export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const log = options.log ?? ((line: string) => console.log(`agent: ${line}`));
  const streams = { token: options.token, workspaceDir: options.workspaceDir, baseEnv: commandEnv(process.env) };
  const listeners = new Set<() => void>();
  const onChange = (listener: () => void) => (listeners.add(listener), () => void listeners.delete(listener));
  const server = await serveStatus(options.host, options.port, () => status(), streams, onChange);
  const listeningAt = wallClockMs();
  const { port } = server;
  log(`agent ${AGENT_VERSION} listening on ${options.host}:${port}`);
  const editor = new EditorSupervisor({
    command: options.editorCommand || builtInEditorCommand(),
    workspaceDir: options.workspaceDir,
    host: options.editorHost,
    port: options.editorPort,
    policy: options.policy ?? editorSupervisionPolicy,
    nowMs: options.nowMs ?? Date.now,
    log,
    memory: options.memory,
    onChange: () => [...listeners].forEach((listener) => listener()),
  });
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
    },
  };
}

/** The built-in editor run by the same node binary and TypeScript loader as the agent itself. */
export function builtInEditorCommand(): string {
  const bundled = process.env[agentEnv.editorScript];
  if (bundled) return `exec ${[...nodeCommand(), bundled].map(shellQuote).join(' ')}`;
  const editorScript = fileURLToPath(new URL('./editor.ts', import.meta.url));
  const loaders = loaderArguments(process.execArgv, (specifier) => import.meta.resolve(specifier));
  return `exec ${[process.execPath, ...loaders, editorScript].map(shellQuote).join(' ')}`;
}

/** The `--import`/`--require`/`--loader` arguments of `execArgv`, bare specifiers resolved (the editor runs elsewhere). */
export function loaderArguments(execArgv: string[], resolve: (specifier: string) => string): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const argument = execArgv[i];
    const [flag, inline] = argument.split(/=(.*)/s, 2);
    if (!['--import', '--require', '-r', '--loader', '--experimental-loader'].includes(flag)) continue;
    const specifier = inline ?? execArgv[++i];
    if (specifier === undefined) break;
    if (specifier.startsWith('file:') || specifier.startsWith('/')) kept.push(flag, specifier);
    else if (specifier.startsWith('.')) kept.push(flag, path.resolve(specifier));
    else kept.push(flag, resolve(specifier));
  }
  return kept;
}
