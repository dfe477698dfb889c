// What runs on the machine, for tests that check a pod left nothing behind.
import { readdir, readFile } from 'node:fs/promises';

/** Live (not zombie) processes running as `uid`. */
export async function processesOf(uid: number): Promise<number[]> {
  const found: number[] = [];
  for (const name of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const status = await readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status) && state !== 'Z' && state !== 'X') found.push(Number(name));
  }
  return found;
}
