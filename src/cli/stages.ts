// `svc stage run|show|stop prepare|test|run` (spec 3.3): `run` starts a run and follows it step by step, streaming
// each step's log until the step ends; the exit status says whether the run succeeded.
import type { StageRun as Run, Step, Workspace } from '../../sdk/src/index.ts';
import type { Api } from './api.ts';
import type { Cli, Command } from './command.ts';
import { ExitCode, usageError } from './errors.ts';
import { sleep } from './operations.ts';
import { duration, table, when } from './output.ts';
import { formatLogLine, logLines } from './streams.ts';
import { label, selectedWorkspace, workspaceOptions } from './targets.ts';

type StageName = 'prepare' | 'test' | 'run';
const stages: string[] = ['prepare', 'test', 'run'] satisfies StageName[];
const runEnded = (run: Run) => !['waiting', 'running'].includes(run.state);
const stepMark: Record<Step['state'], string> = { waiting: ' ', running: '>', success: '✓', failure: '✗', aborted: '!', skipped: '-' };

/** The stage named on the command line (checked before any request), the API and the selected workspace. */
async function stageTarget(cli: Cli): Promise<{ stage: StageName; api: Api; workspace: Workspace }> {
  const stage = cli.args.positionals[0] as StageName;
  if (!stages.includes(stage)) throw usageError(`the stage is prepare, test or run, not "${stage}"`);
  const api = await cli.api();
  return { stage, api, workspace: await selectedWorkspace(cli, api) };
}

async function readRun(api: Api, workspace: Workspace, stage: StageName, id: number): Promise<Run> {
  const answer = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/stages/{stage}', { params: { path: { ws: workspace.id, stage } } }));
  return answer.runs.find((r) => r.id === id) ?? answer.current!;
}

function stepResult(step: Step): string {
  const took = duration(step.started_at, step.finished_at);
  const exit = step.state === 'failure' && step.exit_code !== null ? `: exit ${step.exit_code}` : '';
  return `${stepMark[step.state]} ${step.name} ${step.state}${exit}${took ? ` (${took})` : ''}\n`;
}

/** Streams each step's log in turn (the server ends a step's stream when the step ends), then waits for the run. */
async function followRun(cli: Cli, api: Api, workspace: Workspace, stage: StageName, started: Run): Promise<Run> {
  let run = started;
  const route = '/api/v1/workspaces/{ws}/stages/{stage}/runs/{run}/steps/{step}/logs';
  for (let index = 0; index < run.steps.length && !cli.json; index++) {
    let step = run.steps[index];
    if (step.state !== 'skipped' && step.state !== 'aborted') {
      cli.say(`▶ [${index + 1}/${run.steps.length}] ${step.name}\n`);
      const params = { path: { ws: workspace.id, stage, run: run.id, step: index + 1 }, query: { follow: true } };
      const response = await api.stream(api.client.GET(route, { params, parseAs: 'stream', headers: { accept: 'application/x-ndjson' } }), 'application/x-ndjson');
      for await (const line of logLines(response)) cli.say(formatLogLine(line, '  '));
      run = await readRun(api, workspace, stage, run.id);
      step = run.steps[index];
    }
    cli.say(stepResult(step));
  }
  for (let delay = 100; !runEnded(run); delay = Math.min(1000, delay * 1.5)) {
    await sleep(delay);
    run = await readRun(api, workspace, stage, run.id);
  }
  return run;
}

function runSummary(run: Run): string {
  const took = duration(run.created_at, run.finished_at);
  return `${run.stage} run ${run.id}: ${run.state}${run.detail ? ` (${run.detail})` : ''}${took ? `, ${took}` : ''}\n`;
}

const run: Command = {
  usage: `svc stage run prepare|test|run [--ws WS] [--profile P] [--json]
  Starts a run of the stage and follows it, printing each step's log; exits 1 unless the run succeeds.`,
  options: { ...workspaceOptions, profile: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const { stage, api, workspace } = await stageTarget(cli);
    const profile = cli.args.string('profile');
    const started = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/stages/{stage}/start', { params: { path: { ws: workspace.id, stage } }, body: profile ? { profile } : {} }));
    cli.say(`Started ${stage} run ${started.id} in ${label(workspace)}.\n`);
    const finished = await followRun(cli, api, workspace, stage, started);
    if (cli.json) cli.print(finished);
    else cli.say(runSummary(finished));
    return finished.state === 'success' ? ExitCode.ok : ExitCode.problem;
  },
};

const show: Command = {
  usage: 'svc stage show prepare|test|run [--ws WS] [--json]\n  The latest run of the stage with its steps, and the runs before it.',
  options: workspaceOptions,
  positionals: [1, 1],
  async run(cli) {
    const { stage, api, workspace } = await stageTarget(cli);
    const answer = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/stages/{stage}', { params: { path: { ws: workspace.id, stage } } }));
    if (cli.json) return cli.print(answer);
    if (!answer.current) return cli.say(`No ${stage} run in ${label(workspace)} yet: svc stage run ${stage}\n`);
    const current = answer.current;
    const by = current.trigger === 'clone' ? ' by svc after the clone' : current.trigger === 'sync' ? ' by svc at a Sync' : '';
    cli.say(`${runSummary(current).trimEnd()}, started ${when(current.created_at)}${by}\n`);
    const rows = current.steps.map((s) => [s.index, s.name, s.state, s.exit_code ?? '', duration(s.started_at, s.finished_at)]);
    cli.say(table(['#', 'STEP', 'STATE', 'EXIT', 'TIME'], rows));
    const earlier = answer.runs.slice(1, 6);
    if (earlier.length > 0) cli.say(`Earlier: ${earlier.map((r) => `run ${r.id} ${r.state} (${when(r.created_at)})`).join(', ')}\n`);
  },
};

const stop: Command = {
  usage: 'svc stage stop prepare|test|run [--ws WS] [--json]\n  Aborts the running run of the stage.',
  options: workspaceOptions,
  positionals: [1, 1],
  async run(cli) {
    const { stage, api, workspace } = await stageTarget(cli);
    const stopped = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/stages/{stage}/stop', { params: { path: { ws: workspace.id, stage } } }));
    if (cli.json) cli.print(stopped);
    else cli.say(`Stopped: ${runSummary(stopped)}`);
  },
};

export const stageCommands: Record<string, Command> = { run, show, stop };
