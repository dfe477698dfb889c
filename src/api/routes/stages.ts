// Stages (3.3): start a run of prepare, test or run, read the stage with its runs and step states, stop it, and
// read a step's log.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { notFound } from '../../core/problems.ts';
import { findStageRun, listStageRuns, type StageName, type StageRunRow } from '../../store/stage-runs.ts';
import { checkProfile } from '../../workspaces/landscape-service.ts';
import { workspaceRef } from '../../workspaces/operations.ts';
import { stageNames, stageStepLogKey } from '../../workspaces/stages.ts';
import type { ApiDeps } from '../context.ts';
import { guardStream } from '../stream-rights.ts';
import { answerLogs, LogQuery, LogResponses } from '../log-stream.ts';
import { DateTime, Id, StringEnum } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const Stage = StringEnum(stageNames, { description: 'prepare, test or run' });
const params = Type.Object({ ws: Id, stage: Stage });
const tags = ['stages'];
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const StepSchema = Type.Object({
  index: Type.Integer({ minimum: 1 }),
  name: Type.String(),
  run: Type.String({ description: 'the command; for the run stage, the service it starts' }),
  state: StringEnum(['waiting', 'running', 'success', 'failure', 'aborted', 'skipped'] as const),
  exit_code: Type.Union([Type.Integer(), Type.Null()]),
  started_at: Nullable(DateTime),
  finished_at: Nullable(DateTime),
});

const RunSchema = Type.Object({
  id: Id,
  stage: Stage,
  state: StringEnum(['waiting', 'running', 'success', 'failure', 'aborted'] as const),
  detail: Nullable(Type.String()),
  started_by: Type.Union([Id, Type.Null()]),
  trigger: StringEnum(['manual', 'clone', 'sync'] as const, {
    description: 'manual: started by hand (or a client); clone: by svc, once after the workspace\'s clone; sync: by svc at a Sync whose prepare steps changed since their last successful run',
  }),
  created_at: DateTime,
  finished_at: Nullable(DateTime),
  steps: Type.Array(StepSchema),
});

const StageSchema = Type.Object({
  workspace_id: Id,
  stage: Stage,
  current: Type.Union([RunSchema, Type.Null()], { description: 'the latest run' }),
  runs: Type.Array(RunSchema, { description: 'the latest runs, newest first (at most 20)' }),
});

const StartBody = Type.Object(
  { profile: Type.Optional(Type.String({ maxLength: 64, description: 'profile whose steps run; svc.yml when absent' })) },
  { additionalProperties: false },
);

export function runView(run: StageRunRow) {
  return {
    id: run.id,
    stage: run.stage,
    state: run.state,
    detail: run.detail,
    started_by: run.started_by,
    trigger: run.trigger,
    created_at: run.created_at.toISOString(),
    finished_at: run.finished_at?.toISOString() ?? null,
    steps: run.steps.map((step, index) => ({ index: index + 1, ...step })),
  };
}

export function registerStageRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/workspaces/:ws/stages/:stage', { config: { access: 'user' }, schema: { summary: 'The stage with its latest runs and their steps', tags, params, response: { 200: StageSchema } } }, async (request) => {
    const { row, access } = await workspaceAccess(deps, request);
    requirePermission(access.permissions, 'landscape.view');
    const { stage } = request.params;
    const runs = (await listStageRuns(deps.pool, row.id, stage, 20)).map(runView);
    return { workspace_id: row.id, stage, current: runs[0] ?? null, runs };
  });

  app.post(
    '/workspaces/:ws/stages/:stage/start',
    { config: { access: 'user', audit: 'stage.start' }, schema: { summary: 'Start a run of the stage; 409 stage-running while one runs', tags, params, body: StartBody, response: { 202: RunSchema } } },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'workspace.use');
      const { stage } = request.params;
      const profile = checkProfile(request.body?.profile);
      const run = await deps.stages.start(row, stage, profile, request.principal!.user.id);
      reply.header('location', `/api/v1/workspaces/${row.id}/stages/${stage}`);
      return reply.code(202).send(runView(run));
    },
  );

  app.post(
    '/workspaces/:ws/stages/:stage/stop',
    { config: { access: 'user', audit: 'stage.stop' }, schema: { summary: "Stop the stage's run (its steps become aborted); 409 when none runs", tags, params, response: { 200: RunSchema } } },
    async (request) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'workspace.use');
      const { stage } = request.params;
      const run = await deps.stages.stop(row, stage);
      return runView((await findStageRun(deps.pool, row.id, stage, run.id)) ?? run);
    },
  );

  app.get(
    '/workspaces/:ws/stages/:stage/runs/:run/steps/:step/logs',
    {
      config: { access: 'user' },
      schema: {
        summary: "A stage step's log; `follow` streams JSON lines until the step has ended",
        tags,
        params: Type.Object({ ws: Id, stage: Stage, run: Id, step: Type.Integer({ minimum: 1, maximum: 1000 }) }),
        querystring: LogQuery,
        produces: ['application/json', 'application/x-ndjson'],
        response: LogResponses,
      },
    },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'landscape.view');
      const { stage, run: runId, step } = request.params;
      const run = await findStageRun(deps.pool, row.id, stage, runId);
      if (!run || step > run.steps.length) throw notFound('step');
      const key = stageStepLogKey(stage, runId, step - 1);
      return answerLogs(request, reply, {
        read: (since) => deps.driver.stageStepLogs(workspaceRef(row), key, { since }),
        ended: async () => {
          const now = await findStageRun(deps.pool, row.id, stage, runId);
          const state = now?.steps[step - 1]?.state;
          return state !== 'running' && state !== 'waiting';
        },
      }, (end) => guardStream(deps, request, { workspaceId: row.id, teamId: row.team_id, permission: 'landscape.view' }, end));
    },
  );
}
