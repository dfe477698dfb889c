// `svc events [--team T]`: follows GET /events (spec 6, docs/events.md), one line per event (--json: the event as
// one JSON line). When the stream breaks it opens it again after a growing pause; `ready` says it is live again,
// and events of the gap are lost (there is no replay).
import type { Operation, SvcEvent, Workspace } from '../../sdk/src/index.ts';
import type { Cli, Command } from './command.ts';
import { CliError, ExitCode, unreachable } from './errors.ts';
import { sleep } from './operations.ts';
import { serverSentEvents } from './streams.ts';
import { resolveTeam, teamOptions } from './targets.ts';

/** An event as a line needs only these of the workspace and the operation it carries. */
type StreamEvent = Omit<SvcEvent, 'workspace' | 'operation'> & {
  workspace?: Pick<Workspace, 'name' | 'state' | 'status_detail'>;
  operation?: Pick<Operation, 'kind' | 'state' | 'target' | 'detail'>;
};

/** `12:00:01  workspace.updated  team 3 ws 12  shop: running (Workspace is running)`. */
export function formatEvent(event: StreamEvent): string {
  const time = new Date(event.at).toTimeString().slice(0, 8);
  const ids = [
    event.org_id && `org ${event.org_id}`,
    event.team_id && `team ${event.team_id}`,
    event.workspace_id && `ws ${event.workspace_id}`,
    event.managed_service_id && `ms ${event.managed_service_id}`,
    event.domain_id && `domain ${event.domain_id}`,
  ].filter(Boolean);
  let what = '';
  if (event.type === 'ready') what = 'connected: events from now on';
  else if (event.workspace) what = `${event.workspace.name}: ${event.workspace.state} (${event.workspace.status_detail})`;
  else if (event.operation) {
    const { kind, state, target, detail } = event.operation;
    what = `${kind} ${state}${target ? ` (${target})` : ''}${detail ? `: ${detail}` : ''}`;
  }
  else if (event.stage) what = `${event.stage} run ${event.run_id ?? ''}`.trimEnd();
  return `${time}  ${event.type}${ids.length ? `  ${ids.join(' ')}` : ''}${what ? `  ${what}` : ''}\n`;
}

async function follow(cli: Cli, team: number | undefined): Promise<never> {
  const api = await cli.api();
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await api.stream(api.client.GET('/api/v1/events', { params: { query: { team } }, parseAs: 'stream', headers: { accept: 'text/event-stream' } }), 'text/event-stream');
      for await (const message of serverSentEvents(response)) {
        const event = JSON.parse(message.data) as SvcEvent;
        if (event.type === 'ready') attempt = 0;
        cli.terminal.stdout(cli.json ? `${JSON.stringify(event)}\n` : formatEvent(event));
      }
    } catch (error) {
      if (error instanceof CliError && error.exitCode !== ExitCode.unreachable) throw error;
      if (attempt >= 10) throw error instanceof CliError ? error : unreachable(`the event stream broke: ${(error as Error).message}`);
    }
    const pause = Math.min(30_000, 1000 * 2 ** attempt);
    cli.note(`svc: the event stream ended; opening it again in ${Math.round(pause / 1000)}s\n`);
    await sleep(pause);
  }
}

export const eventsCommand: Command = {
  usage: `svc events [--team T] [--json]
  Follows the live events you may see (of one team with --team), one line each, until interrupted.`,
  options: teamOptions,
  async run(cli) {
    const api = await cli.api();
    const team = cli.args.string('team') ? (await resolveTeam(cli, api)).id : undefined;
    return follow(cli, team);
  },
};
