// The editor as the agent starts it: first of all, before the rest of the agent is loaded (main.ts), so that the
// editor's own start (a process of its own: node for the built-in editor, code-server) runs while the agent loads
// its status server, streams and watchers, instead of after them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EditorSupervisor } from './editor-supervisor.ts';
import { shellQuote } from './shell.ts';
import { agentEnv, nodeCommand, type PodMemory } from './protocol.ts';
import { editorSupervisionPolicy, type SupervisionPolicy } from './supervision.ts';

export interface EditorStartOptions {
  editorHost: string;
  editorPort: number;
  /** Shell command of the editor, run with `bash -lc`; defaults to the built-in editor. */
  editorCommand?: string;
  workspaceDir: string;
  nowMs?: () => number;
  log: (line: string) => void;
  policy?: SupervisionPolicy;
  /** The pod's memory limit and cgroup memory events: an editor killed for memory is logged as such. */
  memory?: PodMemory;
  /** Added to the editor's environment: where git finds the credentials of the person who has it open. */
  editorEnv?: Record<string, string>;
}

/** Starts the editor now and keeps it running (restarts with backoff); the agent subscribes to its changes. */
export function startEditor(options: EditorStartOptions): EditorSupervisor {
  return new EditorSupervisor({
    command: options.editorCommand || builtInEditorCommand(),
    workspaceDir: options.workspaceDir,
    host: options.editorHost,
    port: options.editorPort,
    policy: options.policy ?? editorSupervisionPolicy,
    nowMs: options.nowMs ?? Date.now,
    log: options.log,
    memory: options.memory,
    env: options.editorEnv,
  });
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
