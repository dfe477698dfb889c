// Stage steps (spec 3.3) of the local driver: `bash -lc <run>` (the base image's shell in a workspace with one) in
// /data/app of a short-lived sandbox as the workspace UID, in the editor pod's network namespace (as root) and with the workspace's hosts file, so it reaches what the
// editor reaches; the sandbox dies with the server. Its output is kept as a log (log-file.ts) under
// <data dir>/pods/<id>/steps/<key>/, readable by the server only.
import { spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { createLogWriter, lineSplitter } from '../../agent/log-file.ts';
import { exitCodeOf, exitNotes } from '../../agent/service-run.ts';
import { RuntimeFailure, type LogRead, type StageStepRun, type WorkspaceRef } from '../driver.ts';
import { readLogLines, selectLogLines } from './log-read.ts';
import { isPodRunning, readPodRecord, type PodHost } from './pods.ts';
import { killProcess, minimalEnv } from './processes.ts';
import { hostsFileOf, stageStepDirOf } from './replica-files.ts';
import { sandboxCommand } from './sandbox.ts';
import { resolvConfBinds } from './image-pod-parts.ts';
import { ensureNixDir, exists } from './volumes.ts';
import { workspaceSandboxParts } from './workspace-identity.ts';
import { imageStageStepCommand } from './image-editor-pod.ts';
import { createPodCgroup, editorPlan, inPodCgroup, removePodCgroup } from './pod-limits.ts';
import { serviceLogTexts } from '../../agent/service-log-texts.ts';
import { podSeccompFile } from './seccomp.ts';

const STEP_KEY = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,127}$/;

export interface StageSteps {
  run(workspace: WorkspaceRef, key: string, step: { run: string; env: Record<string, string> }): Promise<StageStepRun>;
  logs(workspace: WorkspaceRef, key: string, options?: { since?: number; limit?: number }): Promise<LogRead>;
  /** Aborts every step of the workspace that still runs (the workspace stops), or of every workspace (the driver closes). */
  abortAll(workspace?: WorkspaceRef): Promise<void>;
}

export function createStageSteps(host: PodHost): StageSteps {
  const running = new Map<number, Set<StageStepRun>>();

  const track = (id: number, step: StageStepRun) => {
    const steps = running.get(id) ?? new Set<StageStepRun>();
    running.set(id, steps.add(step));
    void step.exited.then(() => {
      steps.delete(step);
      if (steps.size === 0 && running.get(id) === steps) running.delete(id);
    });
  };

  return {
    async run(workspace, key, step) {
      checkKey(key);
      const pod = await readPodRecord(host, workspace.id);
      if (!pod || !(await isPodRunning(pod))) throw new RuntimeFailure('agent', 'The workspace is not running');
      const dir = stageStepDirOf(host.dataDir, workspace.id, key);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const hostsFile = hostsFileOf(host.dataDir, workspace.id);
      const plan = editorPlan(host, workspace);
      const cgroup = host.cgroupNames.stageStep(workspace.id, key);
      await createPodCgroup(host, cgroup, plan);
      const command = workspace.baseImage
        ? await imageStageStepCommand(host, workspace, workspace.baseImage, { hostsFile, netns: pod.network?.netns, env: step.env, script: step.run })
        : await hostStageStepCommand(host, workspace, { netns: pod.network?.netns, hostsFile, env: step.env, script: step.run });
      const memoryNote = async (exitCode: number | null) => {
        const killed = exitCode === 137 && host.cgroups !== undefined && (await host.cgroups.memoryKills(cgroup)) > 0;
        await removePodCgroup(host, cgroup);
        return killed ? [serviceLogTexts.memoryKilled(plan.id, plan.memoryMiB)] : [];
      };
      const started = startStep(inPodCgroup(host, cgroup, command), createLogWriter(dir, { now: host.now }), memoryNote);
      track(workspace.id, started);
      return started;
    },

    async logs(workspace, key, options) {
      checkKey(key);
      return selectLogLines(await readLogLines(stageStepDirOf(host.dataDir, workspace.id, key)), options);
    },

    async abortAll(workspace) {
      const steps = workspace ? [...(running.get(workspace.id) ?? [])] : [...running.values()].flatMap((set) => [...set]);
      await Promise.all(steps.map((step) => step.abort()));
    },
  };
}

/** A stage step on the machine's system: like the editor pod, the volume at /data, /nix writable, its user named. */
async function hostStageStepCommand(host: PodHost, workspace: WorkspaceRef, step: { netns?: string; hostsFile: string; env: Record<string, string>; script: string }) {
  const parts = await workspaceSandboxParts(host, workspace);
  return sandboxCommand({
    seccomp: podSeccompFile(host.dataDir),
    uid: workspace.uid,
    switchUser: host.asRoot,
    netns: step.netns,
    isolateNetwork: false,
    hostname: parts.hostname,
    volumeDir: parts.volumeDir,
    volumeAt: parts.volumeAt,
    nix: { dir: await ensureNixDir(host, workspace.id, workspace.uid), writable: true },
    readOnlyBinds: [...((await exists(step.hostsFile)) ? [{ source: step.hostsFile, target: '/etc/hosts' }] : []), ...parts.identityBinds, ...(await resolvConfBinds(host.dataDir))],
    env: { ...parts.identityEnv, ...step.env },
    dieWithParent: true,
    script: step.script,
  });
}

/** Spawns the sandbox in a process group of its own (an abort kills the group) and logs its output line by line. */
function startStep(command: { file: string; args: string[] }, log: ReturnType<typeof createLogWriter>, notesAfterExit: (exitCode: number | null) => Promise<string[]>): StageStepRun {
  const child = spawn(command.file, command.args, { detached: true, env: minimalEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let aborted = false;
  let closed = false;
  const flushers = (['stdout', 'stderr'] as const).map((stream) => {
    const lines = lineSplitter((line) => log.write(stream, line));
    child[stream].setEncoding('utf8');
    child[stream].on('data', (chunk: string) => lines.push(chunk));
    return () => lines.flush();
  });
  const exited = new Promise<{ exitCode: number | null }>((resolve) => {
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    child.once('close', (code, signal) => {
      closed = true;
      flushers.forEach((flush) => flush());
      if (spawnError) log.write('system', `The step could not start: ${spawnError.message}`);
      const exitCode = aborted ? null : spawnError ? 127 : exitCodeOf(code, signal ? constants.signals[signal] : undefined);
      if (exitCode !== null) exitNotes(exitCode).forEach((note) => log.write('system', note));
      void notesAfterExit(exitCode).then((notes) => {
        notes.forEach((note) => log.write('system', note));
        log.close();
        resolve({ exitCode });
      });
    });
  });
  return {
    exited,
    async abort() {
      if (!closed && child.pid !== undefined) {
        aborted = true;
        killProcess(-child.pid); // bubblewrap's outer process; its PID 1 follows it (die-with-parent), and the whole sandbox with it
      }
      await exited;
    },
  };
}

function checkKey(key: string): void {
  if (!STEP_KEY.test(key)) throw new RuntimeFailure('agent', `"${key}" does not name a stage step's log`);
}
