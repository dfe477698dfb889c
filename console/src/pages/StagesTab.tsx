// Stages prepare, test and run (3.3): start or stop a run, its steps with their states and durations, and a step's
// log (followed while the step runs; a failed step's log is open from the start). Each stage is read again on its
// `stage.updated` events.
import { useState } from 'react';
import { answer, svcApi } from '../api.ts';
import { useAction, useResource } from '../hooks.ts';
import { labelOf, runStates } from '../labels.ts';
import { LogView } from '../LogView.tsx';
import { duration } from '../operations.tsx';
import type { StageName, StageRun, Workspace } from '../types.ts';
import { Badge, Button, Empty, Loading, ProblemNotice, Section, Time } from '../ui.tsx';

const STAGES: [StageName, string][] = [
  ['prepare', 'Prepare: install and build, in the workspace'],
  ['test', 'Test: the test steps, in the workspace'],
  ['run', 'Run: start the deployed services, needs first'],
];

export function StagesTab({ ws }: { ws: Workspace }) {
  return (
    <>
      {STAGES.map(([stage, about]) => (
        <StageCard key={stage} ws={ws} stage={stage} about={about} />
      ))}
    </>
  );
}

const active = (run: StageRun | null | undefined) => run?.state === 'running' || run?.state === 'waiting';

function StageCard({ ws, stage, about }: { ws: Workspace; stage: StageName; about: string }) {
  const data = useResource(() => answer(svcApi.GET('/api/v1/workspaces/{ws}/stages/{stage}', { params: { path: { ws: ws.id, stage } } })), [ws.id, stage], (e) => e.type === 'stage.updated' && e.workspace_id === ws.id && e.stage === stage);
  const [runId, setRunId] = useState<number>();
  // undefined: the run's first failed step opens by itself; null: the person closed it.
  const [step, setStep] = useState<number | null>();
  const mayRun = ws.permissions?.includes('workspace.use') ?? false;
  const start = useAction(async () => {
    const run = await answer(svcApi.POST('/api/v1/workspaces/{ws}/stages/{stage}/start', { params: { path: { ws: ws.id, stage } }, body: {} }));
    setRunId(run.id);
    setStep(undefined);
    await data.reload();
  });
  const stop = useAction(async () => {
    await answer(svcApi.POST('/api/v1/workspaces/{ws}/stages/{stage}/stop', { params: { path: { ws: ws.id, stage } } }));
    await data.reload();
  });
  const runs = data.data?.runs ?? [];
  const run = runs.find((r) => r.id === runId) ?? data.data?.current ?? undefined;
  const open = step === undefined ? run?.steps.find((s) => s.state === 'failure')?.index : step ?? undefined;
  const title = stage.charAt(0).toUpperCase() + stage.slice(1);

  return (
    <Section
      id={`stage-${stage}`}
      title={
        <>
          {title} {run && <Badge label={labelOf(runStates, run.state)} />}
        </>
      }
      actions={
        mayRun &&
        (active(data.data?.current) ? (
          <Button onClick={() => void stop.run()} busy={stop.busy}>
            Stop {stage}
          </Button>
        ) : (
          <Button variant="primary" onClick={() => void start.run()} busy={start.busy}>
            Start {stage}
          </Button>
        ))
      }
    >
      <p className="muted">{about}</p>
      <ProblemNotice problem={start.problem ?? stop.problem ?? data.error} onDismiss={start.problem ? start.clear : stop.clear} />
      {data.loading && !data.data ? (
        <Loading what={`the ${stage} stage`} />
      ) : !run ? (
        <Empty>No run yet.</Empty>
      ) : (
        <>
          <div className="run-head">
            {runs.length > 1 && (
              <label className="inline">
                Run
                <select value={run.id} onChange={(e) => (setRunId(Number(e.target.value)), setStep(undefined))}>
                  {runs.map((r) => (
                    <option key={r.id} value={r.id}>
                      #{r.id} · {labelOf(runStates, r.state).text} · {new Date(r.created_at).toLocaleString()}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <span className="muted small">
              Run #{run.id}, started <Time at={run.created_at} />
              {run.trigger === 'clone' && ' by svc after the clone'}
              {run.trigger === 'sync' && ' by svc at a Sync (its steps changed)'}
              {run.finished_at && (
                <>
                  , ended <Time at={run.finished_at} />
                </>
              )}
            </span>
            {run.detail && <span className="status-text">{run.detail}</span>}
          </div>
          <ol className="steps" aria-label={`Steps of ${stage}`}>
            {run.steps.map((s) => (
              <li key={s.index} className={open === s.index ? 'selected' : undefined} data-step={s.name}>
                <button type="button" className="step" onClick={() => setStep(open === s.index ? null : s.index)} aria-expanded={open === s.index}>
                  <Badge label={labelOf(runStates, s.state)} />
                  <span className="step-name">{s.name}</span>
                  {s.exit_code !== null && s.exit_code !== 0 && <span className="exit">exit {s.exit_code}</span>}
                  <code className="muted small">{s.run.split('\n')[0]}</code>
                  <span className="duration small" data-testid="step-duration">
                    {s.started_at ? duration(s.started_at, s.finished_at) : s.state === 'skipped' ? 'skipped' : 'not started'}
                  </span>
                </button>
                {open === s.index && (
                  <LogView
                    key={`${run.id}/${s.index}/${s.state === 'running' || s.state === 'waiting'}`}
                    source={{ kind: 'step', ws: ws.id, stage, run: run.id, step: s.index }}
                    title={`Log of step ${s.index}: ${s.name}`}
                    followable={s.state === 'running' || s.state === 'waiting'}
                  />
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </Section>
  );
}
