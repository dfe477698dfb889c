// Every pod of the local driver (editor pod, replica, stage step, managed-service instance) in a cgroup of its own
// with its plan's CPU and memory limits (docs/capacity.md). cgroup v2 where the host has it with the cpu and memory
// controllers, v1 otherwise (separate cpu, cpuacct and memory hierarchies under /sys/fs/cgroup). The pod's first
// process enters its cgroup before anything runs: the command is wrapped in a shell that writes its own pid to
// cgroup.procs and then execs the pod (the pid, and so the pod's record, stay the same). Only root can do this;
// without root there are no cgroups and the driver says so once.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { oomKillsOf } from '../../agent/replica-protocol.ts';
import { shellQuote } from '../../agent/shell.ts';
import { installationId } from './installation.ts';
import { pollUntil } from './processes.ts';

export interface PodLimits {
  /** Thousandths of a CPU. */
  cpuMillis: number;
  memoryMiB: number;
}

export interface Command {
  file: string;
  args: string[];
}

export interface Cgroups {
  readonly version: 1 | 2;
  /** Creates the pod's cgroup afresh with `limits`. */
  create(name: string, limits: PodLimits): Promise<void>;
  /** Sets the limits of the existing cgroup `name` while its processes run (a managed instance's live change). */
  setLimits(name: string, limits: PodLimits): Promise<void>;
  /**
   * The CPU share of the cgroup `name` against its siblings and the host's other processes: `background` takes the
   * least the kernel gives (it runs on CPU the others leave), `normal` the default. No limit changes.
   */
  setCpuShare(name: string, share: CpuShare): Promise<void>;
  /** The share set last (`normal` unless setCpuShare said otherwise); undefined once the cgroup is gone. */
  cpuShare(name: string): Promise<CpuShare | undefined>;
  /** `command` wrapped so that its first process joins the cgroup before it runs. */
  wrap(name: string, command: Command): Command;
  /** The file whose `oom_kill N` line counts the pod's processes killed for memory (v1 memory.oom_control, v2 memory.events). */
  memoryEventsFile(name: string): string;
  /** How many of the pod's processes the kernel killed for going over the memory limit (0 once the cgroup is gone). */
  memoryKills(name: string): Promise<number>;
  /** CPU time the pod used, in nanoseconds. */
  cpuUsageNanos(name: string): Promise<number>;
  /** Ends whatever still runs in the cgroup and removes it; idempotent. */
  remove(name: string): Promise<void>;
}

export type CpuShare = 'background' | 'normal';

const ROOT = '/sys/fs/cgroup';
const CPU_PERIOD_US = 100_000;

/** Cgroup names of the pods of one installation (installation.ts: two servers on one machine never share one). */
export function cgroupNames(dataDir: string) {
  const base = `svc-${installationId(dataDir)}`;
  return {
    base,
    editor: (workspaceId: number) => `${base}/w${workspaceId}-editor`,
    replica: (workspaceId: number, service: string, index: number) => `${base}/w${workspaceId}-${service}-${index}`,
    stageStep: (workspaceId: number, key: string) => `${base}/w${workspaceId}-stage-${key}`,
    managed: (instance: string) => `${base}/ms-${instance}`,
  };
}

/** The host's cgroups, or undefined when this process cannot make any (not root, or no cpu and memory controllers). */
export function hostCgroups(asRoot: boolean, root = ROOT): Cgroups | undefined {
  if (!asRoot) return undefined;
  const controllersFile = path.join(root, 'cgroup.controllers');
  const controllers = existsSync(controllersFile) ? readFileSync(controllersFile, 'utf8') : '';
  if (/\bcpu\b/.test(controllers) && /\bmemory\b/.test(controllers)) return new CgroupsV2(root);
  const v1 = ['memory/memory.limit_in_bytes', 'cpu/cpu.cfs_quota_us', 'cpuacct/cpuacct.usage'];
  return v1.every((file) => existsSync(path.join(root, file))) ? new CgroupsV1(root) : undefined;
}

/** `sh -c 'echo $$ > procs ...; exec "$@"'`: the pod's first process joins the cgroup, then becomes the pod. */
function wrapped(procsFiles: string[], command: Command): Command {
  const joins = procsFiles.map((file) => `echo $$ > ${shellQuote(file)}`).join(' && ');
  return { file: '/bin/sh', args: ['-c', `${joins} && exec "$@"`, 'svc-cgroup', command.file, ...command.args] };
}

/** cgroup v1 `cpu.shares` (least 2, default 1024) and v2 `cpu.weight` (least 1, default 100) of each share. */
const V1_SHARES: Record<CpuShare, number> = { background: 2, normal: 1024 };
const V2_WEIGHTS: Record<CpuShare, number> = { background: 1, normal: 100 };

/** The share a value of `cpu.shares` or `cpu.weight` stands for; undefined when the file could not be read. */
async function readShare(file: string, values: Record<CpuShare, number>): Promise<CpuShare | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return Number(text.trim()) === values.background ? 'background' : 'normal';
}

/** CPU time per period; the kernel's least is 1 ms. */
const quotaUs = (limits: PodLimits) => Math.max(1000, Math.round((limits.cpuMillis * CPU_PERIOD_US) / 1000));


class CgroupsV1 implements Cgroups {
  readonly version = 1;
  constructor(private readonly root: string) {}

  private dir(controller: 'memory' | 'cpu' | 'cpuacct', name: string): string {
    return path.join(this.root, controller, name);
  }

  private dirs(name: string): string[] {
    return (['memory', 'cpu', 'cpuacct'] as const).map((controller) => this.dir(controller, name));
  }

  wrap(name: string, command: Command): Command {
    return wrapped(this.dirs(name).map((dir) => path.join(dir, 'cgroup.procs')), command);
  }

  async create(name: string, limits: PodLimits): Promise<void> {
    await this.remove(name);
    for (const dir of this.dirs(name)) await mkdir(dir, { recursive: true });
    await this.setLimits(name, limits);
  }

  async setLimits(name: string, limits: PodLimits): Promise<void> {
    const bytes = String(limits.memoryMiB * 2 ** 20);
    const [limit, memsw] = ['memory.limit_in_bytes', 'memory.memsw.limit_in_bytes'].map((file) => path.join(this.dir('memory', name), file));
    // the memory limit may not pass the memory+swap one: a raise of a running pod's limit moves that one first
    await writeFile(limit, bytes).catch(async (error: Error) => {
      await writeFile(memsw, bytes).catch(() => Promise.reject(error));
      await writeFile(limit, bytes);
    });
    // without swap accounting the limit above is all; with it, swap must not become a way around the limit
    await writeFile(memsw, bytes).catch(() => undefined);
    await writeFile(path.join(this.dir('cpu', name), 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    await writeFile(path.join(this.dir('cpu', name), 'cpu.cfs_quota_us'), String(quotaUs(limits)));
  }

  async setCpuShare(name: string, share: CpuShare): Promise<void> {
    await writeFile(path.join(this.dir('cpu', name), 'cpu.shares'), String(V1_SHARES[share]));
  }

  cpuShare(name: string): Promise<CpuShare | undefined> {
    return readShare(path.join(this.dir('cpu', name), 'cpu.shares'), V1_SHARES);
  }

  memoryEventsFile(name: string): string {
    return path.join(this.dir('memory', name), 'memory.oom_control');
  }

  async memoryKills(name: string): Promise<number> {
    return oomKillsOf(await readFile(this.memoryEventsFile(name), 'utf8').catch(() => ''));
  }

  async cpuUsageNanos(name: string): Promise<number> {
    return Number((await readFile(path.join(this.dir('cpuacct', name), 'cpuacct.usage'), 'utf8').catch(() => '0')).trim());
  }

  async remove(name: string): Promise<void> {
    for (const controller of ['memory', 'cpu', 'cpuacct'] as const) await removeDir(this.dir(controller, name));
  }
}

class CgroupsV2 implements Cgroups {
  readonly version = 2;
  constructor(private readonly root: string) {}

  wrap(name: string, command: Command): Command {
    return wrapped([path.join(this.root, name, 'cgroup.procs')], command);
  }

  async create(name: string, limits: PodLimits): Promise<void> {
    await this.remove(name);
    // each level above the pod's hands the cpu and memory controllers down
    const parts = name.split('/');
    for (let i = 0; i < parts.length; i++) {
      const parent = path.join(this.root, ...parts.slice(0, i));
      await mkdir(path.join(parent, parts[i]), { recursive: true });
      await writeFile(path.join(parent, 'cgroup.subtree_control'), '+cpu +memory');
    }
    await this.setLimits(name, limits);
  }

  async setLimits(name: string, limits: PodLimits): Promise<void> {
    const dir = path.join(this.root, name);
    await writeFile(path.join(dir, 'memory.max'), String(limits.memoryMiB * 2 ** 20));
    await writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => undefined);
    await writeFile(path.join(dir, 'cpu.max'), `${quotaUs(limits)} ${CPU_PERIOD_US}`);
  }

  async setCpuShare(name: string, share: CpuShare): Promise<void> {
    await writeFile(path.join(this.root, name, 'cpu.weight'), String(V2_WEIGHTS[share]));
  }

  cpuShare(name: string): Promise<CpuShare | undefined> {
    return readShare(path.join(this.root, name, 'cpu.weight'), V2_WEIGHTS);
  }

  memoryEventsFile(name: string): string {
    return path.join(this.root, name, 'memory.events');
  }

  async memoryKills(name: string): Promise<number> {
    return oomKillsOf(await readFile(this.memoryEventsFile(name), 'utf8').catch(() => ''));
  }

  async cpuUsageNanos(name: string): Promise<number> {
    const stat = await readFile(path.join(this.root, name, 'cpu.stat'), 'utf8').catch(() => '');
    return Number(/^usage_usec (\d+)$/m.exec(stat)?.[1] ?? 0) * 1000;
  }

  async remove(name: string): Promise<void> {
    await writeFile(path.join(this.root, name, 'cgroup.kill'), '1').catch(() => undefined);
    await removeDir(path.join(this.root, name));
  }
}

/**
 * Kills what is left in a cgroup directory and removes it (a cgroup with processes cannot be removed). Tried every
 * 5 ms: a pod just killed leaves the cgroup within a few (a restart of a replica waits for it).
 */
async function removeDir(dir: string): Promise<void> {
  const gone = await pollUntil(async () => {
    const procs = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => undefined);
    if (procs === undefined) return true;
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    return rmdir(dir).then(() => true, (error: NodeJS.ErrnoException) => error.code === 'ENOENT');
  }, 10_000, 5);
  if (!gone) throw new Error(`the cgroup ${dir} could not be removed`);
  // the data directory's own level goes with its last pod (another pod still in it keeps it)
  await rmdir(path.dirname(dir)).catch(() => undefined);
}
