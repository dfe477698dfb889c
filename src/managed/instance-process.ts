// The server process of a managed instance as the local runtime keeps it: started detached in its sandbox
// (pods.ts spawnDetached), recorded in <instance dir>/process.json so that a restarted svc server finds it again,
// and stopped by a signal to the server (its own clean shutdown) before whatever is left of the sandbox is killed.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { killPod, spawnDetached, type Started } from '../runtime/local/pods.ts';
import { isSameProcess, killProcess, pollUntil } from '../runtime/local/processes.ts';

export interface InstanceProcessRecord extends Started {
  netns?: string;
  address: string;
  port: number;
}

export const managedInstanceDir = (dataDir: string, id: number) => path.join(dataDir, 'managed', String(id));
const recordFile = (dir: string) => path.join(dir, 'process.json');

/** Spawns `command` (a sandbox whose PID 1 runs the server) with its output in `logFile`, and records it. */
export async function startInstanceProcess(
  dir: string,
  logFile: string,
  command: { file: string; args: string[] },
  place: Omit<InstanceProcessRecord, keyof Started>,
): Promise<InstanceProcessRecord> {
  const started = await spawnDetached(logFile, command);
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
export async function stopInstanceProcess(dir: string, id: number, signal: NodeJS.Signals, timeoutMs: number, repeatEveryMs = Infinity): Promise<boolean> {
  const record = await readInstanceProcess(dir);
  if (!record) return true;
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
  await rm(recordFile(dir), { force: true });
  return ended;
}
