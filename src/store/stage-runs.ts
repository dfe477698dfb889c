// Stage runs (spec 3.3): one row per run of prepare, test or run, its steps and their states in a JSON list.
import type { Queryable } from './database.ts';

export type StageName = 'prepare' | 'test' | 'run';
export type RunState = 'waiting' | 'running' | 'success' | 'failure' | 'aborted';
export type StepState = RunState | 'skipped';
/** Who started a run: someone by hand, or svc after a workspace's clone or at a Sync (automatic-prepare.ts). */
export type StageTrigger = 'manual' | 'clone' | 'sync';

export interface StageStepRecord {
  name: string;
  run: string;
  state: StepState;
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
}

export interface StageRunRow {
  id: number;
  workspace_id: number;
  stage: StageName;
  state: RunState;
  steps: StageStepRecord[];
  detail: string | null;
  started_by: number | null;
  trigger: StageTrigger;
  created_at: Date;
  finished_at: Date | null;
  /** The server executing the run (null: recorded before servers had ids). */
  server_id: string | null;
}

/** A new run waiting to start; undefined when the stage already has one waiting or running (3.3: refused). */
export async function insertStageRun(
  db: Queryable,
  run: { workspaceId: number; stage: StageName; steps: StageStepRecord[]; by: number | null; at: Date; serverId: string; trigger?: StageTrigger },
): Promise<StageRunRow | undefined> {
  const result = await db.query<StageRunRow>(
    `INSERT INTO stage_runs (workspace_id, stage, state, steps, started_by, created_at, server_id, trigger) VALUES ($1, $2, 'waiting', $3, $4, $5, $6, $7)
     ON CONFLICT (workspace_id, stage) WHERE state IN ('waiting', 'running') DO NOTHING RETURNING *`,
    [run.workspaceId, run.stage, JSON.stringify(run.steps), run.by, run.at, run.serverId, run.trigger ?? 'manual'],
  );
  return result.rows[0];
}

export async function updateStageRun(
  db: Queryable,
  id: number,
  change: { state: RunState; steps: StageStepRecord[]; detail?: string | null; finishedAt?: Date | null },
): Promise<StageRunRow | undefined> {
  const result = await db.query<StageRunRow>(
    `UPDATE stage_runs SET state = $2, steps = $3, detail = COALESCE($4, detail), finished_at = COALESCE($5, finished_at)
     WHERE id = $1 RETURNING *`,
    [id, change.state, JSON.stringify(change.steps), change.detail ?? null, change.finishedAt ?? null],
  );
  return result.rows[0];
}

export async function findStageRun(db: Queryable, workspaceId: number, stage: StageName, id: number): Promise<StageRunRow | undefined> {
  const result = await db.query<StageRunRow>('SELECT * FROM stage_runs WHERE workspace_id = $1 AND stage = $2 AND id = $3', [workspaceId, stage, id]);
  return result.rows[0];
}

export async function listStageRuns(db: Queryable, workspaceId: number, stage: StageName, limit: number): Promise<StageRunRow[]> {
  const result = await db.query<StageRunRow>(
    'SELECT * FROM stage_runs WHERE workspace_id = $1 AND stage = $2 ORDER BY id DESC LIMIT $3',
    [workspaceId, stage, limit],
  );
  return result.rows;
}

/** Runs waiting or running, of one workspace or (no id) of all. */
export async function activeStageRuns(db: Queryable, workspaceId?: number): Promise<StageRunRow[]> {
  const result = await db.query<StageRunRow>(
    `SELECT * FROM stage_runs WHERE state IN ('waiting', 'running') AND ($1::bigint IS NULL OR workspace_id = $1) ORDER BY id`,
    [workspaceId ?? null],
  );
  return result.rows;
}

/** The latest finished run of `stage` that succeeded, if any. */
export async function lastSuccessfulRun(db: Queryable, workspaceId: number, stage: StageName): Promise<StageRunRow | undefined> {
  const result = await db.query<StageRunRow>(
    `SELECT * FROM stage_runs WHERE workspace_id = $1 AND stage = $2 AND state = 'success' ORDER BY id DESC LIMIT 1`,
    [workspaceId, stage],
  );
  return result.rows[0];
}
