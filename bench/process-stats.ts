// What /proc tells of a process: its resident memory, its CPU time so far, and this process's open-file limit.
import { readFile } from 'node:fs/promises';

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** CPU time (user and system, ms) a process has used so far. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
}

export async function openFileLimit(): Promise<number> {
  const limits = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const match = /Max open files\s+(\d+|unlimited)/.exec(limits);
  return !match || match[1] === 'unlimited' ? Infinity : Number(match[1]);
}
