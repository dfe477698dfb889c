// Where the time of the workspace's last create, start, wake or Sync went (issue 40), like Coder's build timings:
// each phase a bar on the operation's time axis, the services' starts and first healthy answers beside the line.
// Live while it runs: every change of the timeline is announced as operation.updated, and running bars grow.
import { useEffect, useState } from 'react';
import { answer, svcApi } from '../api.ts';
import { useResource } from '../hooks.ts';
import { operationKinds } from '../labels.ts';
import type { TimelinePhase, Workspace } from '../types.ts';

/** `812 ms`, `4.2 s`, `2 min 5 s` */
function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${Math.floor(ms / 60_000)} min${seconds ? ` ${seconds} s` : ''}`;
}

/** Now, every second while `running` (running bars grow between reads). */
function useTicking(running: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  return now;
}

export function WorkspaceTimings({ ws }: { ws: Workspace }) {
  const timeline = useResource(
    () => answer(svcApi.GET('/api/v1/workspaces/{ws}/timings', { params: { path: { ws: ws.id } } })).then(
      (data) => ({ data, readAt: Date.now() }),
      () => undefined, // none recorded yet (or kept no longer): nothing to show
    ),
    [ws.id],
    (event) => event.type === 'operation.updated' && 'operation' in event && event.operation?.target === `/workspaces/${ws.id}`,
  );
  const read = timeline.data;
  const running = read?.data.phases.some((phase) => phase.state === 'running') ?? false;
  const now = useTicking(running);
  // opens by itself while a start runs, and stays as its reader leaves it
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (running) setOpen(true);
  }, [running]);
  if (!read) return null;
  const grown = running ? Math.max(0, now - read.readAt) : 0; // the tick may predate the read
  const phases = read.data.phases.map((phase) => (phase.state === 'running' ? { ...phase, duration_ms: phase.duration_ms + grown } : phase));
  const wall = read.data.wall_ms + (read.data.operation_state === 'running' || read.data.operation_state === 'pending' ? grown : 0);
  const span = Math.max(wall, ...phases.map((p) => p.offset_ms + p.duration_ms), 1);
  return (
    <details className="timings" data-testid="timings" data-operation={read.data.operation_id} open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        Timings: {operationKinds[read.data.kind] ?? read.data.kind}, {duration(wall)}
        {running ? ' so far' : ''}
      </summary>
      <ol className="timings-phases" aria-label="Phases">
        {phases.map((phase, index) => (
          <PhaseBar key={`${phase.name}-${index}`} phase={phase} span={span} />
        ))}
      </ol>
      <p className="muted small">Indented bars ran beside the start: each service's start and its first healthy answer.</p>
    </details>
  );
}

function PhaseBar({ phase, span }: { phase: TimelinePhase; span: number }) {
  const left = (phase.offset_ms / span) * 100;
  const width = Math.max(0.4, Math.min(100 - left, (phase.duration_ms / span) * 100));
  const took = phase.state === 'running' ? `running ${duration(phase.duration_ms)}` : `${duration(phase.duration_ms)}${phase.state === 'failed' ? ', failed' : ''}`;
  return (
    <li className={`timing timing-${phase.state}${phase.beside ? ' timing-beside' : ''}`} data-phase={phase.name} data-state={phase.state} title={phase.detail ?? phase.name}>
      <span className="timing-name">{phase.name}</span>
      <span className="timing-track" aria-hidden="true">
        <span className="timing-bar" style={{ left: `${left}%`, width: `${width}%` }} />
      </span>
      <span className="timing-took">{took}</span>
      <span className="timing-detail small muted">{phase.detail ?? ''}</span>
    </li>
  );
}
