// Opening an address in the person's browser: SVC_BROWSER (a command; `true` opens nothing, as tests and headless
// machines want), else BROWSER, else xdg-open (or `open` on macOS) when installed. The caller always prints the
// address too, so nothing depends on a browser being there.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function opener(env: NodeJS.ProcessEnv): string[] | undefined {
  const chosen = env.SVC_BROWSER || env.BROWSER;
  if (chosen) return chosen.split(/\s+/).filter(Boolean);
  const system = process.platform === 'darwin' ? 'open' : 'xdg-open';
  return onPath(system, env) ? [system] : undefined;
}

/** Starts the browser without waiting for it; false when there is none to start. */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  const command = opener(env);
  if (!command) return false;
  try {
    const child = spawn(command[0], [...command.slice(1), url], { detached: true, stdio: 'ignore', env });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
