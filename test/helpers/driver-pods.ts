// Tests of the local runtime driver's pods against real bubblewrap and processes, without a server: a data
// directory in a scratch directory, the driver with quick restarts, workspaces whose ids are random in a block of
// the test file's own (so that it never meets another file's pods or networks), and the waits and reads those
// tests share. Stop everything with `close`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ExecChannel, parseFrame, readExecStatus } from '../../src/core/channel-protocol.ts';
import type { LogLine, PodTarget, ReplicaObservation, ReplicaSpec, RuntimeDriver, WorkspaceRef } from '../../src/runtime/driver.ts';
import { RuntimeFailure } from '../../src/runtime/driver.ts';
import { createLocalDriver, type LocalDriverOptions } from '../../src/runtime/local/index.ts';
import { until } from './wait.ts';

export const run = promisify(execFile);
export const asRoot = process.getuid?.() === 0;
/** Restarts after 10 to 40 ms, giving up after 5 failures in 2 s; probes every 50 ms. */
export const FAST_REPLICAS = { backoffBaseMs: 10, backoffMaxMs: 40, giveUpWindowMs: 20_000, probeIntervalMs: 50 };

/** A replica of `service` (index 0) with nothing but `fields`. */
export function replicaSpec(service: string, fields: Partial<ReplicaSpec>): ReplicaSpec {
  return { service, index: 0, steps: [], env: {}, ports: [], mounts: [], needs: [], ...fields };
}

/** Runs `command` in the pod through the driver's exec stream (the agent); its output and exit code once it ends. */
export async function execInPod(driver: RuntimeDriver, ws: WorkspaceRef, target: PodTarget, command: string[]): Promise<{ exitCode?: number; stdout: string; stderr: string }> {
  const socket = await driver.openExec(ws, target, { command, tty: false, stdin: false, env: {} });
  const frames: Array<{ channel: number; data: Buffer }> = [];
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('message', (message: Buffer) => frames.push(parseFrame(message)!));
  socket.resume();
  await closed;
  const text = (channel: number) => Buffer.concat(frames.filter((f) => f.channel === channel).map((f) => f.data)).toString();
  const status = frames.find((f) => f.channel === ExecChannel.status);
  const read = status ? readExecStatus(status.data) : undefined;
  return { exitCode: read && 'exitCode' in read ? read.exitCode : undefined, stdout: text(ExecChannel.stdout), stderr: text(ExecChannel.stderr) };
}

export interface PodBenchOptions {
  /** Names the scratch directory (`svc-<name>-`). */
  name: string;
  /** The ids' block: id mod 16384 (which picks the editor /30) from `editorBlock` up to 1900 more; ids far apart per file. */
  editorBlock: number;
  /** A range of 20 000 multiples of 16384 of the file's own, from this one. */
  cycleFrom: number;
  /** Workspace UIDs are this plus id mod 1 000 000. */
  uidBase: number;
  count: number;
  /** More options of the driver (the egress settings, ...). */
  driverOptions?: Partial<LocalDriverOptions>;
}

export interface PodBench {
  driver: RuntimeDriver;
  /** Holds `data/` (the driver's data directory); free for images and the like. */
  scratch: string;
  dataDir: string;
  /** The test's n-th workspace, with `more` (a base image). */
  workspace(n: number, more?: Partial<WorkspaceRef>): WorkspaceRef;
  /** Replica 0 of `service` once it has `status` (and is ready, for `running`). */
  reaches(ws: WorkspaceRef, service: string, status: ReplicaObservation['status']): Promise<ReplicaObservation>;
  logTexts(ws: WorkspaceRef, service: string, stream?: LogLine['stream']): Promise<string[]>;
  /** The workspace's volume with `files` (directories made), owned by its UID. */
  volumeWith(ws: WorkspaceRef, files: Record<string, string>): Promise<string>;
  /** Asserts that the replica does not start: a RuntimeFailure whose reason matches. */
  refused(ws: WorkspaceRef, replica: ReplicaSpec, reason: RegExp): Promise<void>;
  /** Stops the workspaces' pods, removes their volumes and the scratch directory. */
  close(): Promise<void>;
}

export async function startPodBench(options: PodBenchOptions): Promise<PodBench> {
  const base = 16384 * (options.cycleFrom + Math.floor(Math.random() * 20_000)) + options.editorBlock + Math.floor(Math.random() * 1900);
  const ids = Array.from({ length: options.count }, (_, i) => base + i);
  const scratch = await mkdtemp(path.join(os.tmpdir(), `svc-${options.name}-`));
  await run('chmod', ['755', scratch]);
  const dataDir = path.join(scratch, 'data');
  await mkdir(dataDir);
  const driver = createLocalDriver({ dataDir, editorTimeoutMs: 30_000, replicaTimings: FAST_REPLICAS, ...options.driverOptions });
  const workspace = (n: number, more: Partial<WorkspaceRef> = {}): WorkspaceRef => ({ id: ids[n], uid: options.uidBase + (ids[n] % 1_000_000), storageGib: 1, ...more });
  const logTexts = async (ws: WorkspaceRef, service: string, stream?: LogLine['stream']) =>
    (await driver.replicaLogs(ws, service, 0)).lines.filter((line) => !stream || line.stream === stream).map((line) => line.text);
  return {
    driver,
    scratch,
    dataDir,
    workspace,
    logTexts,
    reaches: (ws, service, status) =>
      until(async () => {
        const state = (await driver.replicaStates(ws)).find((r) => r.service === service && r.index === 0);
        return state?.status === status && (status !== 'running' || state.ready) ? state : undefined;
      }, `${service} is ${status}`),
    async volumeWith(ws, files) {
      await driver.createVolume(ws);
      const dir = path.join(dataDir, 'volumes', String(ws.id), 'app');
      for (const [name, text] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
        await writeFile(path.join(dir, name), text);
        if (asRoot) await run('chown', ['-R', `${ws.uid}:0`, path.join(dir, name.split('/')[0])]);
      }
      return dir;
    },
    async refused(ws, replica, reason) {
      const error = await driver.startReplica(ws, replica).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof RuntimeFailure, `expected a RuntimeFailure, got ${String(error)}`);
      assert.match(error.reason, reason);
    },
    async close() {
      for (let n = 0; n < ids.length; n++) {
        await driver.stopWorkspace(workspace(n)).catch(() => undefined);
        await driver.deleteVolume(workspace(n)).catch(() => undefined);
      }
      await driver.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
