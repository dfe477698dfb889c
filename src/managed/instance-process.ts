// The server process of a managed instance as the local runtime keeps it: started detached in its sandbox
// (pods.ts spawnDetached), recorded in <instance dir>/process.json so that a restarted svc server finds it again,
// and stopped by a signal to the server (its own clean shutdown) before whatever is left of the sandbox is killed.
// As root it runs in a cgroup of its own with its plan's CPU and memory limits, as pods do (docs/capacity.md).
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cgroupNames, type Cgroups, type PodLimits } from '../runtime/local/cgroups.ts';
import { killPod, spawnDetached, type Started } from '../runtime/local/pods.ts';
import { isSameProcess, killProcess, pollUntil } from '../runtime/local/processes.ts';
import type { ManagedHost } from './engine.ts';
import type { ManagedPlanDefinition } from './providers.ts';

export interface InstanceProcessRecord extends Started {
  netns?: string;
  address: string;
  port: number;
}

export const managedInstanceDir = (dataDir: string, id: number) => path.join(dataDir, 'managed', String(id));
const recordFile = (dir: string) => path.join(dir, 'process.json');

/** The cgroup an instance's server runs in (the host's cgroups, its name) when the host has cgroups. */
export interface InstanceCgroup {
  cgroups: Cgroups;
  name: string;
}

export function instanceCgroup(host: ManagedHost, id: number): InstanceCgroup | undefined {
  return host.cgroups && { cgroups: host.cgroups, name: cgroupNames(host.dataDir).managed(String(id)) };
}

/** Each provider's plan values as the limits of its instance's cgroup; none without `cpu` and `memory` values. */
export function instanceLimits(plan: ManagedPlanDefinition | undefined, memoryFactor = 1): PodLimits | undefined {
  const [cpu, memory] = [plan?.resources.cpu?.value, plan?.resources.memory?.value];
  return cpu === undefined || memory === undefined ? undefined : { cpuMillis: cpu, memoryMiB: memory * memoryFactor };
}

/**
 * Spawns `command` (a sandbox whose PID 1 runs the server) with its output in `logFile`, and records it; with
 * `limits` on a host with cgroups, in the instance's cgroup (made afresh with them) from its first process on.
 */
export async function startInstanceProcess(
  dir: string,
  logFile: string,
  command: { file: string; args: string[] },
  place: Omit<InstanceProcessRecord, keyof Started>,
  limited?: { cgroup: InstanceCgroup | undefined; limits: PodLimits | undefined },
): Promise<InstanceProcessRecord> {
  const cgroup = limited?.limits && limited.cgroup;
  if (cgroup) {
    await cgroup.cgroups.create(cgroup.name, limited.limits!).catch((error: Error) => {
      throw new Error(`its cgroup could not be set up: ${error.message}`);
    });
  }
  const started = await spawnDetached(logFile, cgroup ? cgroup.cgroups.wrap(cgroup.name, command) : command).catch(async (error: Error) => {
    await cgroup?.cgroups.remove(cgroup.name).catch(() => undefined);
    throw error;
  });
  const record: InstanceProcessRecord = { ...started, ...place };
  const file = recordFile(dir);
  await writeFile(`${file}.partial`, JSON.stringify(record), { mode: 0o600 });
  await rename(`${file}.partial`, file);
  return record;
}

export async function readInstanceProcess(dir: string): Promise<InstanceProcessRecord | undefined> {
  const text = await readFile(recordFile(dir), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as InstanceProcessRecord);
}

/** Whether the recorded sandbox still runs (the one recorded, not a process that reused its pid). */
export async function isInstanceProcessRunning(record: InstanceProcessRecord | undefined): Promise<boolean> {
  return record !== undefined && (await isSameProcess(record.pid, record.startTime));
}

/**
 * Sends `signal` to the server (the one child of the sandbox's PID 1, bubblewrap's reaper; bash exec'd it), again
 * every `repeatEveryMs` while it runs (a server may turn a shutdown down for a moment), waits up to `timeoutMs` for
 * the sandbox to end, then kills what is left and forgets the record. Answers whether the server ended by itself.
 * Idempotent.
 */
export async function stopInstanceProcess(
  dir: string, id: number, signal: NodeJS.Signals, timeoutMs: number, repeatEveryMs = Infinity, cgroup?: InstanceCgroup,
): Promise<boolean> {
  const record = await readInstanceProcess(dir);
  if (!record) {
    await cgroup?.cgroups.remove(cgroup.name);
    return true;
  }
  let ended = true;
  if (await isSameProcess(record.pid, record.startTime)) {
    const signalServer = async () => {
      const children = await readFile(`/proc/${record.initPid}/task/${record.initPid}/children`, 'utf8').catch(() => '');
      children.split(/\s+/).filter(Boolean).forEach((pid) => killProcess(Number(pid), signal));
    };
    await signalServer();
    let signalled = performance.now();
    ended = await pollUntil(async () => {
      if (!(await isSameProcess(record.pid, record.startTime))) return true;
      if (performance.now() - signalled >= repeatEveryMs) {
        await signalServer();
        signalled = performance.now();
      }
      return false;
    }, timeoutMs, 50);
  }
  await killPod({ ...record, workspaceId: id });
  await cgroup?.cgroups.remove(cgroup.name);
  await rm(recordFile(dir), { force: true });
  return ended;
}

/**
 * Sets the limits of a running instance's cgroup (a live change of its plan's values); nothing on a host without
 * cgroups. An instance started without a cgroup (by a server before they existed) gets its limits at its next start.
 */
export async function applyInstanceLimits(host: ManagedHost, id: number, limits: PodLimits | undefined): Promise<void> {
  const cgroup = instanceCgroup(host, id);
  if (!cgroup || !limits) return;
  await cgroup.cgroups.setLimits(cgroup.name, limits).catch((error: Error) => host.log(`managed instance ${id}: its limits were not changed: ${error.message}`));
}
