// Stage runs (spec 3.3): `prepare` and `test` run their steps with `bash -lc` in /data/app of the editor pod, with
// the workspace's variables and no secrets; `run` starts the deployed services, needs first. The first failing step
// fails the run and the steps after it are skipped; a stop or the workspace going to sleep aborts it. Every change
// sends stage.updated. Runs execute on the server that started them; one that restarts aborts what it left, and runs
// of a server that died are aborted by the others. Another server asks the executing one to stop a run (svc_stage_abort).
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { NotificationHub } from '../events/hub.ts';
import { problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import type { Step } from '../landscape/index.ts';
import { RuntimeFailure, type RuntimeDriver, type StageStepRun } from '../runtime/driver.ts';
import type { WorkspaceFiles } from '../runtime/workspace-files.ts';
import { findDeployedLandscape, setRunSwitch } from '../store/landscapes.ts';
import {
  activeStageRuns, insertStageRun, updateStageRun, type RunState, type StageName, type StageRunRow, type StageStepRecord, type StageTrigger,
} from '../store/stage-runs.ts';
import { listVariables } from '../store/variables.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { needsOrder, runsReplicas } from './deployment.ts';
import { refuseOverDiskQuota } from './disk-quota.ts';
import type { LandscapeChecker } from './landscape-checker.ts';
import { currentLandscapeProblem, readCurrentLandscape } from './landscape-service.ts';
import { workspaceRef } from './operations.ts';
import type { ServiceRunner } from './service-runner.ts';

export const stageNames: readonly StageName[] = ['prepare', 'test', 'run'];

export interface StageDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  files: WorkspaceFiles;
  landscapeChecker: LandscapeChecker;
  services: ServiceRunner;
  clock: Clock;
  log: (message: string) => void;
  /** This server's id; its runs carry it. */
  serverId: string;
  /** The ids of the servers alive, this one's included. */
  liveServerIds: () => Promise<string[]>;
  hub: NotificationHub;
  /** Told when a run has ended (automatic-prepare.ts names a failed prepare in the workspace's status text). */
  onRunEnded?: (row: WorkspaceRow, run: StageRunRow) => Promise<void>;
}

/** `<run id> <reason>`: the server executing the run aborts it. */
const ABORT_CHANNEL = 'svc_stage_abort';

/** The log of step `index` (0-based) of a run, as the driver names it. */
export const stageStepLogKey = (stage: StageName, runId: number, index: number) => `${stage}-${runId}-${index + 1}`;

interface Control {
  aborted?: string;
  step?: StageStepRun;
}

export class StageRunner {
  private readonly controls = new Map<number, Control>();
  private readonly executing = new Set<Promise<void>>();
  private readonly ends = new Map<number, Promise<void>>();

  constructor(private readonly deps: StageDeps) {
    deps.hub.subscribe(ABORT_CHANNEL, {
      notify: (message) => {
        const space = message.indexOf(' ');
        const control = this.controls.get(Number(message.slice(0, space)));
        if (!control) return;
        control.aborted ??= message.slice(space + 1);
        control.step?.abort().catch((error: Error) => this.deps.log(`stage abort: ${error.message}`));
      },
      reset: () => undefined,
    });
  }

  /** Starts a run of `stage`; 409 when one is waiting or running, the workspace does not run, or (prepare) its volume is over its size. */
  async start(row: WorkspaceRow, stage: StageName, profile: string | null, by: number | null, trigger: StageTrigger = 'manual'): Promise<StageRunRow> {
    if (row.state !== 'running') throw problem('workspace-not-running', 409, 'Stages run in the workspace: wake it first.');
    if (stage === 'prepare') await refuseOverDiskQuota((r) => this.deps.driver.volumeUsage(workspaceRef(r)), row, 'running prepare');
    return this.startSteps(row, stage, await this.stepsOf(row, stage, profile, by), by, trigger);
  }

  /**
   * Starts prepare by itself (automatic-prepare.ts) when the current file declares steps and `wanted` says yes to
   * them; undefined when it does not run (no file, no steps, not wanted). Refusals are the caller's to log.
   */
  async startPrepareIf(row: WorkspaceRow, profile: string | null, by: number | null, trigger: StageTrigger, wanted: (steps: StageStepRecord[]) => Promise<boolean>): Promise<StageRunRow | undefined> {
    if (row.state !== 'running') return undefined;
    const current = await readCurrentLandscape(this.deps, row, profile, { user: by });
    if (current.refused || current.read.state !== 'found' || !current.normal || current.normal.prepare.length === 0) return undefined;
    const steps = await this.stepsOf(row, 'prepare', profile, by);
    if (!(await wanted(steps))) return undefined;
    await refuseOverDiskQuota((r) => this.deps.driver.volumeUsage(workspaceRef(r)), row, 'running prepare');
    return this.startSteps(row, 'prepare', steps, by, trigger);
  }

  private async startSteps(row: WorkspaceRow, stage: StageName, steps: StageStepRecord[], by: number | null, trigger: StageTrigger): Promise<StageRunRow> {
    const run = await insertStageRun(this.deps.pool, { workspaceId: row.id, stage, steps, by, at: this.deps.clock.now(), serverId: this.deps.serverId, trigger });
    if (!run) {
      const active = (await activeStageRuns(this.deps.pool, row.id)).find((r) => r.stage === stage);
      throw problem('stage-running', 409, `The ${stage} stage is already running; stop it or wait for it to finish.`, { extra: { run_id: active?.id } });
    }
    await this.announce(row, run);
    const control: Control = {};
    this.controls.set(run.id, control);
    const done = this.execute(row, run, control)
      .catch((error: Error) => this.deps.log(`${stage} run ${run.id} of workspace ${row.id}: ${error.message}`))
      .finally(() => {
        this.controls.delete(run.id);
        this.executing.delete(done);
        this.ends.delete(run.id);
      });
    this.executing.add(done);
    this.ends.set(run.id, done);
    return run;
  }

  /** Resolves once run `id`, executed by this server, has ended and been recorded (at once for another's). */
  async ended(id: number): Promise<void> {
    await this.ends.get(id);
  }

  private async stepsOf(row: WorkspaceRow, stage: StageName, profile: string | null, by: number | null): Promise<StageStepRecord[]> {
    const record = (name: string, run: string): StageStepRecord => ({ name, run, state: 'waiting', exit_code: null, started_at: null, finished_at: null });
    if (stage === 'run') {
      const deployed = await findDeployedLandscape(this.deps.pool, row.id);
      if (!deployed || deployed.torn_down) throw problem('conflict', 409, 'No landscape is deployed: Sync first, then Run starts its services.');
      return needsOrder(deployed.normal)
        .filter((name) => runsReplicas(deployed.normal.services[name]))
        .map((name) => record(`Start ${name}`, name));
    }
    const current = await readCurrentLandscape(this.deps, row, profile, { user: by });
    if (current.refused) throw current.refused;
    if (current.read.state !== 'found') throw problem('conflict', 409, `There is no readable ${current.fileName} in /data/app to run ${stage} from.`);
    if (!current.normal) throw currentLandscapeProblem(current);
    const steps: Step[] = current.normal[stage];
    return steps.map((step, index) => record(step.name ?? `Step ${index + 1}`, step.run));
  }

  private async execute(row: WorkspaceRow, run: StageRunRow, control: Control): Promise<void> {
    const steps = run.steps.map((s) => ({ ...s }));
    let state: RunState = 'running';
    let detail: string | null = null;
    for (let index = 0; index < steps.length; index++) {
      if (control.aborted) break;
      steps[index] = { ...steps[index], state: 'running', started_at: this.deps.clock.now().toISOString() };
      await this.save(row, run.id, { state, steps });
      const exitCode = await this.runStep(row, run, index, steps[index], control);
      const finished_at = this.deps.clock.now().toISOString();
      if (control.aborted || exitCode === null) {
        steps[index] = { ...steps[index], state: 'aborted', finished_at };
        break;
      }
      steps[index] = { ...steps[index], state: exitCode === 0 ? 'success' : 'failure', exit_code: exitCode, finished_at };
      if (exitCode !== 0) {
        state = 'failure';
        detail = `${steps[index].name}: exit ${exitCode}`;
        break;
      }
    }
    if (control.aborted) {
      state = 'aborted';
      detail = control.aborted;
    } else if (state === 'running') {
      state = 'success';
    }
    const rest = state === 'failure' ? 'skipped' : 'aborted';
    const final = steps.map((s) => (s.state === 'waiting' ? { ...s, state: rest as StageStepRecord['state'] } : s));
    const ended = await this.save(row, run.id, { state, steps: final, detail, finishedAt: this.deps.clock.now() });
    if (ended) await this.deps.onRunEnded?.(row, ended).catch((error: Error) => this.deps.log(`after ${run.stage} run ${run.id}: ${error.message}`));
  }

  /** Runs one step; its exit code, or null when it was aborted. */
  private async runStep(row: WorkspaceRow, run: StageRunRow, index: number, step: StageStepRecord, control: Control): Promise<number | null> {
    if (run.stage === 'run') {
      await setRunSwitch(this.deps.pool, row.id, [step.run], true, this.deps.clock.now());
      await this.deps.services.apply(row.id, { retry: [step.run] });
      return 0;
    }
    const env = Object.fromEntries((await listVariables(this.deps.pool, row.id)).map((v) => [v.name, v.value]));
    try {
      control.step = await this.deps.driver.runStageStep(workspaceRef(row), stageStepLogKey(run.stage, run.id, index), { run: step.run, env });
    } catch (error) {
      if (!(error instanceof RuntimeFailure)) throw error;
      control.aborted = error.reason;
      return null;
    }
    if (control.aborted) await control.step.abort();
    const { exitCode } = await control.step.exited;
    control.step = undefined;
    const now = await findWorkspace(this.deps.pool, row.id);
    if (now?.state !== 'running') control.aborted ??= 'The workspace went to sleep';
    return exitCode;
  }

  private async save(row: WorkspaceRow, id: number, change: Parameters<typeof updateStageRun>[2]): Promise<StageRunRow | undefined> {
    const updated = await updateStageRun(this.deps.pool, id, change);
    if (updated) await this.announce(row, updated);
    return updated;
  }

  private announce(row: Pick<WorkspaceRow, 'id' | 'team_id'>, run: StageRunRow): Promise<unknown> {
    return publishEvent(this.deps.pool, {
      type: 'stage.updated',
      at: this.deps.clock.now().toISOString(),
      team_id: row.team_id,
      workspace_id: row.id,
      stage: run.stage,
      run_id: run.id,
    });
  }

  /** Stops the stage's run; 409 when none is waiting or running. */
  async stop(row: WorkspaceRow, stage: StageName, reason = 'Stopped by hand'): Promise<StageRunRow> {
    const run = (await activeStageRuns(this.deps.pool, row.id)).find((r) => r.stage === stage);
    if (!run) throw problem('conflict', 409, `The ${stage} stage is not running.`);
    await this.abort(row, run, reason);
    return run;
  }

  /** Aborts every run of the workspace (it goes to sleep, stops or is deleted). */
  async abortAll(row: Pick<WorkspaceRow, 'id' | 'team_id'>, reason: string): Promise<void> {
    for (const run of await activeStageRuns(this.deps.pool, row.id)) await this.abort(row, run, reason);
  }

  private async abort(row: Pick<WorkspaceRow, 'id' | 'team_id'>, run: StageRunRow, reason: string): Promise<void> {
    const control = this.controls.get(run.id);
    if (control) {
      control.aborted ??= reason;
      await control.step?.abort();
      return; // the run's own loop records the end
    }
    if (run.server_id && run.server_id !== this.deps.serverId && (await this.deps.liveServerIds()).includes(run.server_id)) {
      await this.deps.pool.query('SELECT pg_notify($1, $2)', [ABORT_CHANNEL, `${run.id} ${reason}`]);
      return; // the server executing it records the end
    }
    const steps = run.steps.map((s) => (s.state === 'waiting' || s.state === 'running' ? { ...s, state: 'aborted' as const } : s));
    await this.save(row as WorkspaceRow, run.id, { state: 'aborted', steps, detail: reason, finishedAt: this.deps.clock.now() });
  }

  /** At start: runs left waiting or running by a server that stopped are aborted (their processes died with it). */
  async recover(): Promise<void> {
    const live = await this.deps.liveServerIds();
    for (const run of await activeStageRuns(this.deps.pool)) {
      if (this.controls.has(run.id)) continue;
      const own = run.server_id === this.deps.serverId; // left by an earlier life of this server
      if (!own && run.server_id && live.includes(run.server_id)) continue;
      const row = await findWorkspace(this.deps.pool, run.workspace_id);
      if (!row) continue;
      const steps = run.steps.map((s) => (s.state === 'waiting' || s.state === 'running' ? { ...s, state: 'aborted' as const } : s));
      await this.save(row, run.id, { state: 'aborted', steps, detail: own ? 'The server restarted during the run' : 'The server running it stopped', finishedAt: this.deps.clock.now() });
    }
  }

  /** Aborts the runs this server executes and waits until they are recorded (at shutdown). */
  async close(): Promise<void> {
    for (const [, control] of this.controls) {
      control.aborted ??= 'The server stopped during the run';
      await control.step?.abort();
    }
    await Promise.all(this.executing);
  }
}
