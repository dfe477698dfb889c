// `svc managed list|show|pause|resume` (docs/cli.md): a team's managed services (or one workspace's), one with its
// details, and pause and resume by hand (operations, followed until they end). A service is named by its id, or by
// its name in the landscape of `--ws`.
import type { ManagedService } from '../../sdk/src/index.ts';
import { didYouMean, quotedList } from '../core/suggest.ts';
import type { Api } from './api.ts';
import type { Cli, Command } from './command.ts';
import { followOperation } from './operations.ts';
import { fields, table, when } from './output.ts';
import { notFoundHere, resolveTeam, resolveWorkspace, selectedWorkspace, workspaceOptions } from './targets.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The managed service of the positional argument: an id, or a name in the landscape of --ws (SVC_WORKSPACE). */
async function resolveManaged(cli: Cli, api: Api): Promise<ManagedService> {
  const reference = cli.args.positionals[0];
  if (UUID.test(reference)) return api.answer(api.client.GET('/api/v1/managed-services/{ms}', { params: { path: { ms: reference } } }));
  const workspace = await selectedWorkspace(cli, api);
  const services = await api.all((page) => api.client.GET('/api/v1/teams/{team}/managed-services', { params: { path: { team: workspace.team_id }, query: { workspace: workspace.id, ...page } } }));
  const found = services.find((m) => m.name === reference);
  if (found) return found;
  const names = services.map((m) => m.name).sort();
  const known = names.length === 0 ? ' It has none.' : `${didYouMean(reference, names)} Its managed services: ${quotedList(names)}.`;
  throw notFoundHere(`Workspace ${workspace.name} has no managed service named "${reference}".${known}`);
}

const detailsText = (details: ManagedService['details']) =>
  Object.entries(details)
    .filter(([key]) => key !== 'reason')
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');

const list: Command = {
  usage: `svc managed list [--ws WS] [--team T] [--status S] [--deleted] [--json]
  The managed services of the team (of one workspace with --ws); --deleted: the recently deleted (kept 7 days).`,
  options: { ...workspaceOptions, status: { type: 'string' }, deleted: { type: 'boolean' } },
  async run(cli) {
    const api = await cli.api();
    // Only an explicit --ws narrows the list: SVC_WORKSPACE names the workspace of the other commands.
    const wsGiven = cli.args.string('ws');
    const workspace = wsGiven ? await resolveWorkspace(cli, api, wsGiven) : undefined;
    const teamId = workspace?.team_id ?? (await resolveTeam(cli, api)).id;
    const deleted = cli.args.flag('deleted');
    const query = { workspace: workspace?.id, status: cli.args.string('status') as ManagedService['status'] | undefined, deleted };
    const items = await api.all((page) => api.client.GET('/api/v1/teams/{team}/managed-services', { params: { path: { team: teamId }, query: { ...query, ...page } } }));
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say(deleted ? 'No managed service was deleted in the last 7 days.\n' : 'No managed services.\n');
    const rows = items.map((m) => [m.name, m.workspace_id, `${m.provider} ${m.version}`, m.plan, m.status, deleted ? `deleted ${when(m.deleted_at)}` : (m.details.reason as string | undefined) ?? detailsText(m.details), m.id]);
    cli.say(table(['NAME', 'WORKSPACE', 'PROVIDER', 'PLAN', 'STATUS', deleted ? 'DELETED' : 'DETAILS', 'ID'], rows));
  },
};

const show: Command = {
  usage: `svc managed show ID|NAME [--ws WS] [--reveal] [--json]
  A managed service: its status and the details its provider publishes (last known when it does not answer).
  --reveal: its password and connection URL too (needs the right to manage the workspace's secrets; audited).`,
  options: { ...workspaceOptions, reveal: { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const found = await resolveManaged(cli, api);
    const revealed = cli.args.flag('reveal')
      ? await api.answer(api.client.POST('/api/v1/managed-services/{ms}/reveal', { params: { path: { ms: found.id } } }))
      : undefined;
    if (cli.json) return cli.print(revealed ? { ...found, credentials: revealed } : found);
    cli.say(
      fields([
        ['Name', found.name],
        ['Id', found.id],
        ['Workspace', found.workspace_id],
        ['Provider', `${found.provider} ${found.version}`],
        ['Plan', found.plan],
        ['Status', found.status],
        ['Reason', found.details.reason as string | undefined],
        ...Object.entries(found.details).filter(([key]) => key !== 'reason').map(([key, value]): [string, string | number | boolean] => [`  ${key}`, value]),
        ['Password', revealed?.password],
        ['URL', revealed?.url],
        ['Created', when(found.created_at)],
        ['Deleted', found.deleted_at && when(found.deleted_at)],
      ]),
    );
  },
};

const action = (verb: 'pause' | 'resume', doing: string, done: string): Command => ({
  usage: `svc managed ${verb} ID|NAME [--ws WS] [--no-wait] [--json]\n  ${verb === 'pause' ? 'Pauses a managed service: its server stops, its data stays.' : 'Resumes a paused (or unknown) managed service as the last Sync deployed it.'}`,
  options: { ...workspaceOptions, 'no-wait': { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const found = await resolveManaged(cli, api);
    const path = { ms: found.id };
    const started = await api.answer(api.client.POST(`/api/v1/managed-services/{ms}/${verb}`, { params: { path } }));
    if (cli.args.flag('no-wait')) return cli.json ? cli.print(started) : cli.say(`${doing} ${found.name} (operation ${started.id}).\n`);
    const operation = await followOperation(cli, api, started, `${doing} ${found.name}`);
    if (cli.json) return cli.print(operation);
    const now = await api.answer(api.client.GET('/api/v1/managed-services/{ms}', { params: { path } }));
    cli.say(`${done} ${found.name}: ${now.status}.\n`);
  },
});

export const managedCommands: Record<string, Command> = {
  list,
  show,
  pause: action('pause', 'Pausing', 'Paused'),
  resume: action('resume', 'Resuming', 'Resumed'),
};
