// Where code-server keeps its own files in the volume (settings, extensions, caches, state), shared by the driver
// that builds the editor command (runtime/local/editor-tools.ts) and the launcher that prepares them in the pod
// (code-server-launch.ts).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MANAGED_ENV_FILE } from './managed-env-file.ts';

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
 * The machine's settings, written at every start (a person's own settings win over them): terminals are bash as a
 * login shell, like the console's terminal and `svc ssh`, so the profile files and the prompt naming the workspace hold;
 * it starts with the managed services' values (a login bash reads no `$ENV`), as `svc exec` and the console's terminal do.
 */
export const CODE_SERVER_TERMINAL_ARGS = ['-c', `[ -r ${MANAGED_ENV_FILE} ] && . ${MANAGED_ENV_FILE}; exec bash -l`];
export const CODE_SERVER_MACHINE_SETTINGS = {
  'terminal.integrated.profiles.linux': { bash: { path: 'bash', args: CODE_SERVER_TERMINAL_ARGS } },
  'terminal.integrated.defaultProfile.linux': 'bash',
};

/**
 * Where scripts/bundle-code-server.mjs writes code-server's Node side as one file, in the tools directory beside its
 * node_modules (the script's BUNDLE_DIR).
 */
export const CODE_SERVER_BUNDLE_DIR = 'code-server-bundle';

/** code-server's directories under its data directory (svc's own /data/.svc on the volume, outside the code). */
export function codeServerLayout(dataDir: string) {
  const userData = path.posix.join(dataDir, 'user-data');
  const userDir = path.posix.join(userData, 'User');
  return {
    userData,
    userDir,
    settings: path.posix.join(userDir, 'settings.json'),
    machineSettings: path.posix.join(userData, 'Machine', 'settings.json'),
    extensions: path.posix.join(dataDir, 'extensions'),
    /** `*`: the hidden directory stays out of `git status`. */
    gitignore: path.posix.join(path.posix.dirname(dataDir), '.gitignore'),
    /** Node's compile cache of code-server's modules (the launcher's). */
    compileCache: path.posix.join(dataDir, 'cache', 'node-compile-cache'),
    /** Caches and state under the XDG directories, never as .cache or .local at the top of the person's tree. */
    xdg: {
      XDG_CACHE_HOME: path.posix.join(dataDir, 'cache'),
      XDG_CONFIG_HOME: path.posix.join(dataDir, 'config'),
      XDG_DATA_HOME: path.posix.join(dataDir, 'data'),
      XDG_STATE_HOME: path.posix.join(dataDir, 'state'),
    },
  };
}

/** The volume's part of code-server: its directories, settings written once (the person's changes win), its XDG homes. */
export function prepareCodeServerData(dataDir: string, env: NodeJS.ProcessEnv = process.env): ReturnType<typeof codeServerLayout> {
  const layout = codeServerLayout(dataDir);
  mkdirSync(layout.userDir, { recursive: true });
  if (!existsSync(layout.gitignore)) writeFileSync(layout.gitignore, '*\n');
  if (!existsSync(layout.settings)) writeFileSync(layout.settings, `${JSON.stringify(CODE_SERVER_DEFAULT_SETTINGS, null, 2)}\n`);
  mkdirSync(path.posix.dirname(layout.machineSettings), { recursive: true });
  writeFileSync(layout.machineSettings, `${JSON.stringify(CODE_SERVER_MACHINE_SETTINGS, null, 2)}\n`);
  Object.assign(env, layout.xdg);
  return layout;
}
