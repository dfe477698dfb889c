// A person's dotfiles in HOME (issue 34 item 3, docs/workspaces.md "Dotfiles"), as Coder and Gitpod apply them: at
// the workspace's first start its owner's dotfiles repository is cloned into /data/home/.dotfiles and the first
// install script found there is run (install.sh, install, bootstrap.sh, bootstrap, script/bootstrap, setup.sh,
// setup, script/setup); a repository without one has its dotfiles linked into HOME. In a short-lived sandbox as the
// workspace UID, like the clone; its output goes to /data/.svc/dotfiles.log on the volume and its outcome to the
// server's log. A failure never stops the workspace from starting.
import { chmod, chown, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellQuote } from '../../agent/shell.ts';
import type { WorkspaceRef } from '../driver.ts';
import { localRepositoryPath, trustRepository } from './clone-plan.ts';
import { runCommand } from './processes.ts';
import { sandboxCommand } from './sandbox.ts';
import { setupSandbox } from './volume-setup.ts';
import { exists, volumeDir, type VolumeHost } from './volumes.ts';

export const DOTFILES_SCRIPTS = ['install.sh', 'install', 'bootstrap.sh', 'bootstrap', 'script/bootstrap', 'setup.sh', 'setup', 'script/setup'];
/** Written once the dotfiles were applied (whatever the outcome): later starts leave HOME alone. */
const APPLIED = path.join('.svc', 'dotfiles');
const LOG = path.join('.svc', 'dotfiles.log');
const TIMEOUT_MS = 10 * 60_000;

/** The shell text that clones `url` into ~/.dotfiles and runs its install script, or links its dotfiles. */
export function dotfilesScript(url: string): string {
  const local = localRepositoryPath(url);
  return [
    'exec 2>&1',
    ...(local ? [`${trustRepository(local)}true`] : []),
    'dir="$HOME/.dotfiles"',
    `echo "Cloning your dotfiles from "${shellQuote(url)}`,
    `if [ ! -d "$dir/.git" ]; then git clone --quiet -- ${shellQuote(url)} "$dir" || exit $?; fi`,
    'cd "$dir" || exit 1',
    `for f in ${DOTFILES_SCRIPTS.join(' ')}; do`,
    '  if [ -f "$f" ]; then echo "Running $f"; if [ -x "$f" ]; then "./$f"; else bash "$f"; fi; code=$?; echo "$f exited with code $code"; exit $code; fi',
    'done',
    'echo "No install script: linking the dotfiles into $HOME"',
    'for f in .[!.]* ..?*; do [ -e "$f" ] || continue; [ "$f" = .git ] && continue; ln -sfn "$dir/$f" "$HOME/$f" && echo "linked $f"; done',
  ].join('\n');
}

/** Applies the owner's dotfiles once, at the workspace's first start with some set; answers what the log should say. */
export async function applyDotfiles(host: VolumeHost, workspace: WorkspaceRef): Promise<string | undefined> {
  if (!workspace.dotfiles) return undefined;
  const volume = volumeDir(host, workspace.id);
  if (await exists(path.join(volume, APPLIED))) return undefined;
  const local = localRepositoryPath(workspace.dotfiles);
  const binds = local && (await exists(local)) ? [{ source: local, target: local }] : [];
  const command = sandboxCommand(await setupSandbox(host, workspace, dotfilesScript(workspace.dotfiles), binds, local === undefined));
  const result = await runCommand(command.file, command.args, { timeoutMs: TIMEOUT_MS });
  const outcome = result.code === 0 ? 'applied' : result.code === null ? `stopped after ${TIMEOUT_MS / 60_000} minutes` : `failed with exit code ${result.code}`;
  await ownedFile(host, workspace, path.join(volume, LOG), `${result.stdout}${result.stderr}Dotfiles ${outcome}.\n`);
  await ownedFile(host, workspace, path.join(volume, APPLIED), `${workspace.dotfiles}\n`);
  return `dotfiles of workspace ${workspace.id} ${outcome} (its /data/.svc/dotfiles.log says how)`;
}

async function ownedFile(host: VolumeHost, workspace: WorkspaceRef, file: string, text: string): Promise<void> {
  await writeFile(file, text);
  if (host.asRoot) await chown(file, workspace.uid, 0);
  await chmod(file, 0o660);
}
