// What /proc tells of a process: its resident memory, its CPU time so far, the scheduler's figures of its main thread
// and of the kernel's softirq threads, and this process's open-file limit.
import { readdir, readFile } from 'node:fs/promises';

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

/** What the scheduler tells of a thread (from /proc): ms on the CPU, ms waiting for it while runnable, times taken off it. */
export interface ThreadSched {
  runMs: number;
  waitMs: number;
  involuntarySwitches: number;
  /** Times it was put on a CPU. */
  runs: number;
}

/** The scheduler's figures of a process's main thread (the thread of its event loop). */
export async function mainThreadSched(pid: number): Promise<ThreadSched> {
  return threadSched(`/proc/${pid}/task/${pid}`);
}

async function threadSched(dir: string): Promise<ThreadSched> {
  const [schedstat, sched] = await Promise.all([readFile(`${dir}/schedstat`, 'utf8'), readFile(`${dir}/sched`, 'utf8')]);
  const [run, wait, runs] = schedstat.trim().split(' ').map(Number);
  const involuntary = /nr_involuntary_switches\s*:\s*(\d+)/.exec(sched);
  return { runMs: run / 1e6, waitMs: wait / 1e6, involuntarySwitches: involuntary ? Number(involuntary[1]) : 0, runs };
}

/** The kernel's softirq threads (ksoftirqd/N): network receive work the kernel could not finish inline runs there. */
export async function softirqThreadDirs(): Promise<string[]> {
  const dirs: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.startsWith('ksoftirqd/')) dirs.push(`/proc/${entry}`);
  }
  return dirs;
}

/** The scheduler's figures of the softirq threads, summed. */
export async function softirqSched(dirs: readonly string[]): Promise<ThreadSched> {
  return (await Promise.all(dirs.map((dir) => threadSched(dir)))).reduce(addSched, noSched);
}

export const noSched: ThreadSched = { runMs: 0, waitMs: 0, involuntarySwitches: 0, runs: 0 };

export function addSched(a: ThreadSched, b: ThreadSched, sign = 1): ThreadSched {
  return {
    runMs: a.runMs + sign * b.runMs,
    waitMs: a.waitMs + sign * b.waitMs,
    involuntarySwitches: a.involuntarySwitches + sign * b.involuntarySwitches,
    runs: a.runs + sign * b.runs,
  };
}

/** The processes descended from `pid` (svc's nginx: its master and workers). */
export async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const [child, of] of parents) if (of === parent) (found.push(child), visit(child));
  };
  visit(pid);
  return found;
}
