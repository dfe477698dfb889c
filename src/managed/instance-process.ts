// The detached server process of a managed instance, whatever its provider: started in its sandbox like a pod
// (pods.ts), recorded in <instance dir>/process.json (root's), so a restarted svc server finds it again; a stop asks
// the server to shut down cleanly, then ends whatever is left of its sandbox.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { killPod, spawnDetached, type Started } from '../runtime/local/pods.ts';
import { isSameProcess, killProcess, pollUntil } from '../runtime/local/processes.ts';

export const managedInstanceDir = (dataDir: string, id: number) => path.join(dataDir, 'managed', String(id));
const recordFile = (dir: string) => path.join(dir, 'process.json');

export type InstanceProcessRecord = Started & Record<string, unknown>;

export async function readInstanceRecord(dir: string): Promise<InstanceProcessRecord | undefined> {
  const text = await readFile(recordFile(dir), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as InstanceProcessRecord);
}

/** Whether the recorded server process runs (the one recorded, not a process that reused its pid). */
export async function isInstanceProcessRunning(dir: string): Promise<boolean> {
  const record = await readInstanceRecord(dir);
  return record !== undefined && (await isSameProcess(record.pid, record.startTime));
}

/** Starts the sandbox `command` detached, its output in `logFile`, and records it with `extra` (address, port). */
export async function startInstanceProcess(dir: string, logFile: string, command: { file: string; args: string[] }, extra: Record<string, unknown>): Promise<InstanceProcessRecord> {
  const started = await spawnDetached(logFile, command);
  const record = { ...extra, ...started };
  const file = recordFile(dir);
  await writeFile(`${file}.partial`, JSON.stringify(record), { mode: 0o600 });
  await rename(`${file}.partial`, file);
  return record;
}

/**
 * Sends `signal` to the server (the one child of the sandbox's PID 1, which bash exec'd), waits up to `timeoutMs`
 * for it to end, then kills what is left of the sandbox and forgets the record. Idempotent. Answers whether the
 * server ended by itself.
 */
export async function stopInstanceProcess(dir: string, id: number, signal: NodeJS.Signals, timeoutMs: number): Promise<boolean> {
  const record = await readInstanceRecord(dir);
  if (!record) return true;
  let clean = true;
  if (await isSameProcess(record.pid, record.startTime)) {
    const children = await readFile(`/proc/${record.initPid}/task/${record.initPid}/children`, 'utf8').catch(() => '');
    children.split(/\s+/).filter(Boolean).forEach((pid) => killProcess(Number(pid), signal));
    clean = await pollUntil(async () => !(await isSameProcess(record.pid, record.startTime)), timeoutMs, 50);
  }
  await killPod({ ...record, workspaceId: id });
  await rm(recordFile(dir), { force: true });
  return clean;
}
