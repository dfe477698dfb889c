// Watches the landscape files at the root of /data/app (svc.yml and every svc.<profile>.yml) from inside the pod.
// The agent reports a fingerprint of them in GET /status; the server sends landscape.updated when it moves, so a
// landscape page leaves "In sync" as soon as the file is saved. The directory is watched, not the files: editors
// save by writing a new file and renaming it over the old one, and a file may be created or removed.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { profileOfFileName } from '../landscape/profiles.ts';

/** Files beyond this are fingerprinted by size and time only (the server refuses them anyway). */
const READ_LIMIT = 4 * 1024 * 1024;

export interface LandscapeWatchOptions {
  dir: string;
  /** Quiet time after the last change before the files are read again; one save makes several events. */
  debounceMs?: number;
  /** How often to try again while the directory cannot be watched (it does not exist yet). */
  retryMs?: number;
  /** Called with each new fingerprint, the first one included. */
  onChange?: (fingerprint: string) => void;
}

export interface LandscapeWatch {
  /** sha256 (hex) of the landscape files' names and contents; undefined until first read. */
  fingerprint(): string | undefined;
  close(): void;
}

/** Whether a name of the directory is a landscape file (a null name: the system did not say which changed). */
export const isLandscapeFileName = (name: string | null): boolean => name === null || profileOfFileName(name) !== undefined;

/** The fingerprint of the landscape files in `dir` now; the same for no directory as for one without them. */
export async function landscapeFilesFingerprint(dir: string): Promise<string> {
  return (await readLandscapeFiles(dir)).fingerprint;
}

async function readLandscapeFiles(dir: string): Promise<{ fingerprint: string; found: boolean }> {
  const hash = createHash('sha256');
  let names: string[];
  try {
    names = (await readdir(dir)).filter(isLandscapeFileName).sort();
  } catch {
    return { fingerprint: hash.digest('hex'), found: false };
  }
  for (const name of names) {
    const file = path.join(dir, name);
    hash.update(`${name}\0`);
    try {
      const info = await lstat(file);
      if (info.isFile() && info.size <= READ_LIMIT) hash.update(await readFile(file));
      else if (info.isSymbolicLink()) hash.update(`link:${await readlink(file)}`);
      else hash.update(`other:${info.size}:${info.mtimeMs}`);
    } catch (error) {
      hash.update(`unreadable:${(error as NodeJS.ErrnoException).code ?? ''}`); // removed while read: the next event reads again
    }
    hash.update('\0');
  }
  return { fingerprint: hash.digest('hex'), found: true };
}

export function watchLandscapeFiles(options: LandscapeWatchOptions): LandscapeWatch {
  const debounceMs = options.debounceMs ?? 100;
  const retryMs = options.retryMs ?? 1000;
  let current: string | undefined;
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let reading = false;
  let readAgain = false;
  let closed = false;

  const read = async (): Promise<void> => {
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    try {
      do {
        readAgain = false;
        const { fingerprint: next, found } = await readLandscapeFiles(options.dir);
        if (closed) return;
        if (!found && watcher) restart(); // a removed directory's watch hears nothing more, even once it is back
        if (next !== current) {
          current = next;
          options.onChange?.(next);
        }
      } while (readAgain && !closed);
    } finally {
      reading = false;
    }
  };
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => void read(), debounceMs);
  };
  const start = (): void => {
    retry = undefined;
    if (closed) return;
    try {
      watcher = watch(options.dir, { persistent: false }, (_event, name) => {
        if (isLandscapeFileName(name === null ? null : String(name))) schedule();
      });
      // The directory went away (or the watch broke): read what is there and watch again once it exists.
      watcher.on('error', () => restart());
    } catch {
      restart();
    }
    schedule(); // files may have changed while nothing watched them
  };
  const restart = (): void => {
    watcher?.close();
    watcher = undefined;
    if (closed || retry) return;
    schedule();
    retry = setTimeout(start, retryMs);
    retry.unref();
  };
  start();

  return {
    fingerprint: () => current,
    close() {
      closed = true;
      watcher?.close();
      clearTimeout(debounce);
      clearTimeout(retry);
    },
  };
}
