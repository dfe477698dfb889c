// `svc ws timings WS [--op ID]`: where the time of the workspace's latest create, start, wake or Sync went, phase by
// phase, with a bar on the operation's time axis (docs/cli.md).
import type { OperationTimeline, TimelinePhase } from '../../sdk/src/index.ts';
import type { Command } from './command.ts';
import { formatDuration as duration } from '../operations/timeline-view.ts';
import { table } from './output.ts';
import { label, resolveWorkspace, teamOptions } from './targets.ts';

const BAR_WIDTH = 24;

/** The phase's place on the operation's time axis: spaces up to its start, then its length (at least one mark). */
export function bar(phase: Pick<TimelinePhase, 'offset_ms' | 'duration_ms' | 'state'>, spanMs: number): string {
  const scale = BAR_WIDTH / Math.max(spanMs, 1);
  const start = Math.min(BAR_WIDTH - 1, Math.floor(phase.offset_ms * scale));
  const length = Math.max(1, Math.min(BAR_WIDTH - start, Math.round(phase.duration_ms * scale)));
  return `${' '.repeat(start)}${(phase.state === 'running' ? '░' : '█').repeat(length)}`.padEnd(BAR_WIDTH);
}

/** The timeline as a table: phases on the operation's line, those beside it (services) indented under it. */
export function timingsText(timeline: OperationTimeline): string {
  const span = Math.max(timeline.wall_ms, ...timeline.phases.map((p) => p.offset_ms + p.duration_ms));
  const rows = timeline.phases.map((phase) => [
    `${phase.beside ? '  ' : ''}${phase.name}`,
    `+${duration(phase.offset_ms)}`,
    phase.state === 'running' ? `running ${duration(phase.duration_ms)}` : `${duration(phase.duration_ms)}${phase.state === 'failed' ? ' failed' : ''}`,
    `|${bar(phase, span)}|`,
    phase.detail ?? '',
  ]);
  const head = `${timeline.kind} ${timeline.operation_id} (${timeline.operation_state}): ${duration(timeline.wall_ms)} from queued to ${timeline.operation_state === 'running' || timeline.operation_state === 'pending' ? 'now' : 'done'}; the phases on its line add up to ${duration(timeline.phases_ms)}\n`;
  const beside = timeline.phases.some((p) => p.beside) ? 'Indented: beside the operation\'s line (each service\'s start and first healthy answer).\n' : '';
  return head + table(['PHASE', 'START', 'TOOK', 'TIME AXIS', 'WHAT IT DID'], rows) + beside;
}

export const timingsCommand: Command = {
  usage: 'svc ws timings WS [--op ID] [--team T] [--json]\n  Where the time of the latest create, start, wake or Sync (or of operation ID) went: each phase, its start, its duration, what it did.',
  options: { ...teamOptions, op: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const workspace = await resolveWorkspace(cli, api, cli.args.positionals[0]);
    const op = cli.args.string('op');
    const timeline = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/timings', { params: { path: { ws: workspace.id }, query: op ? { op } : {} } }));
    if (cli.json) return cli.print(timeline);
    cli.say(`${label(workspace)}: ${timingsText(timeline)}`);
  },
};
