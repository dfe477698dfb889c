// `prepare` runs on its own (issue 34): once after a workspace's clone when its svc.yml declares steps, and at a Sync
// when the prepare steps differ from those of its last successful run (or none succeeded yet). Such a run is a stage
// run like one started by hand (Stages shows it, with its trigger). A failed prepare is named in the workspace's
// status text while it runs on (never Error); the next prepare that succeeds takes the words away. The rule is in
// docs/decisions.md, "prepare runs on its own".
import type { StageRunRow, StageStepRecord } from '../store/stage-runs.ts';
import { lastSuccessfulRun } from '../store/stage-runs.ts';
import { withTransaction } from '../store/database.ts';
import { findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { statusTexts } from './lifecycle.ts';
import { announceWorkspace, type WorkspaceDeps } from './service.ts';
import type { StageRunner } from './stages.ts';

const PREPARE_FAILED = `${statusTexts.running}; prepare failed: `;

/** The status text of a running workspace after prepare run `run` ended; undefined: leave it as it is. */
export function statusTextAfterPrepare(current: string, run: Pick<StageRunRow, 'state' | 'detail'>): string | undefined {
  if (run.state === 'failure') return `${PREPARE_FAILED}${run.detail ?? 'a step failed'} (see Stages)`;
  if (run.state === 'success' && current.startsWith(PREPARE_FAILED)) return statusTexts.running;
  return undefined;
}

/** Whether a Sync runs prepare: none succeeded yet, or the steps (their commands) changed since the last success. */
export function prepareWantedAtSync(lastSuccess: Pick<StageRunRow, 'steps'> | undefined, steps: readonly Pick<StageStepRecord, 'run'>[]): boolean {
  if (!lastSuccess) return true;
  const commands = (list: readonly Pick<StageStepRecord, 'run'>[]) => JSON.stringify(list.map((s) => s.run));
  return commands(lastSuccess.steps) !== commands(steps);
}

/** Names a failed prepare in the status text of a workspace that runs (and takes it away after a success). */
export async function notePrepareEnded(deps: WorkspaceDeps, row: Pick<WorkspaceRow, 'id'>, run: StageRunRow): Promise<void> {
  if (run.stage !== 'prepare') return;
  await withTransaction(deps.pool, async (db) => {
    const now = await findWorkspace(db, row.id, true);
    if (!now || now.state !== 'running') return;
    const text = statusTextAfterPrepare(now.status_detail, run);
    if (text === undefined || text === now.status_detail) return;
    const saved = await updateWorkspace(db, row.id, { status_detail: text }, deps.clock.now());
    if (saved) await announceWorkspace(db, 'workspace.updated', saved, deps.urls);
  });
}

type Log = (message: string) => void;

/**
 * After the clone of a new workspace: prepare, when its svc.yml declares steps; resolves with the run once it has
 * ended (undefined when none ran). Never fails the creation.
 */
export async function prepareAfterClone(stages: Pick<StageRunner, 'startPrepareIf' | 'ended'>, row: WorkspaceRow, log: Log): Promise<StageRunRow | undefined> {
  const run = await stages
    .startPrepareIf(row, null, row.created_by, 'clone', async () => true)
    .catch((error: Error) => void log(`prepare after the clone of workspace ${row.id} did not start: ${error.message}`));
  if (run) await stages.ended(run.id);
  return run ?? undefined;
}

/**
 * At a Sync, before its services start: prepare again when its steps changed since their last successful run, or
 * none succeeded yet; resolves with the run once it has ended (undefined when none ran). Never fails the Sync.
 */
export async function prepareAtSync(
  deps: { pool: WorkspaceDeps['pool']; stages: Pick<StageRunner, 'startPrepareIf' | 'ended'> },
  row: WorkspaceRow,
  profile: string | null,
  by: number | null,
  log: Log,
): Promise<StageRunRow | undefined> {
  return deps.stages
    .startPrepareIf(row, profile, by, 'sync', async (steps) => prepareWantedAtSync(await lastSuccessfulRun(deps.pool, row.id, 'prepare'), steps))
    .then(async (run) => {
      if (run) await deps.stages.ended(run.id);
      return run;
    })
    .catch((error: Error) => {
      log(`prepare at the Sync of workspace ${row.id} did not start: ${error.message}`);
      return undefined;
    });
}
