// Where `svc login` keeps its key: $XDG_CONFIG_HOME/svc/config.json (default ~/.config/svc), the directory 0700
// and the file 0600, written whole through a temporary file so a crash never leaves half a key behind.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { notSignedIn } from './errors.ts';

export interface StoredLogin {
  /** The console's address the key belongs to. */
  url: string;
  token: string;
  key_id: string;
}

export function configDirectory(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'svc');
}

export const configFile = (env: NodeJS.ProcessEnv) => path.join(configDirectory(env), 'config.json');

export async function readLogin(env: NodeJS.ProcessEnv): Promise<StoredLogin | undefined> {
  let text: string;
  try {
    text = await readFile(configFile(env), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let stored: Partial<StoredLogin>;
  try {
    stored = JSON.parse(text) as Partial<StoredLogin>;
  } catch {
    throw notSignedIn(`the login file ${configFile(env)} is not JSON: run "svc login URL" again (or set SVC_URL and SVC_TOKEN)`);
  }
  if (stored === null || typeof stored !== 'object') return undefined;
  if (typeof stored.url !== 'string' || typeof stored.token !== 'string' || typeof stored.key_id !== 'string') return undefined;
  return { url: stored.url, token: stored.token, key_id: stored.key_id };
}

export async function writeLogin(env: NodeJS.ProcessEnv, login: StoredLogin): Promise<string> {
  const directory = configDirectory(env);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const file = configFile(env);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
  return file;
}

export async function removeLogin(env: NodeJS.ProcessEnv): Promise<void> {
  await rm(configFile(env), { force: true });
}
