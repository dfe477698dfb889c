// `svc egress [on|off] [--team T] [--ws WS]`: whether pods reach beyond their workspace (docs/runtime.md, "The pod
// network"). Without on/off it shows the team's setting (and the workspace's with --ws); with it, it sets the
// workspace's own (--ws) or the team's (team admins). Pods take a change at once.
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { fields } from './output.ts';
import { resolveTeam, resolveWorkspace, teamOptions } from './targets.ts';

function setting(cli: Cli): 'on' | 'off' | undefined {
  const [value] = cli.args.positionals;
  if (value === undefined || value === 'on' || value === 'off') return value;
  throw usageError(`egress is on or off, not "${value}"`);
}

export const egressCommand: Command = {
  usage: `svc egress [on|off] [--team T] [--ws WS] [--json]
  Shows or sets whether pods reach beyond their workspace: on (the internet, under the installation's egress
  policy) or off (nothing outside the workspace's own pods). With --ws the workspace's own setting (its pods go out
  only when it and its team's are on), else the team's (team admins). Pods take a change at once.`,
  options: { ...teamOptions, ws: { type: 'string' } },
  positionals: [0, 1],
  async run(cli) {
    const wanted = setting(cli);
    const api = await cli.api();
    const wsName = cli.args.string('ws');
    if (wsName !== undefined) {
      const workspace = await resolveWorkspace(cli, api, wsName);
      const path = { ws: workspace.id };
      let shown = workspace;
      if (wanted) {
        const { etag } = await api.withEtag(api.client.GET('/api/v1/workspaces/{ws}', { params: { path } }));
        shown = await api.answer(api.client.PATCH('/api/v1/workspaces/{ws}', { params: { path }, headers: { 'if-match': etag }, body: { egress: wanted } }));
      }
      if (cli.json) return cli.print({ egress: shown.egress, team_egress: shown.team_egress });
      return cli.say(fields([['Workspace egress', shown.egress], ['Team egress', shown.team_egress]]));
    }
    const team = await resolveTeam(cli, api);
    const path = { team: team.id };
    const answer = wanted
      ? await api.answer(api.client.PUT('/api/v1/teams/{team}/network-settings', { params: { path }, body: { egress: wanted } }))
      : await api.answer(api.client.GET('/api/v1/teams/{team}/network-settings', { params: { path } }));
    if (cli.json) return cli.print(answer);
    cli.say(fields([['Team', team.name], ['Egress', answer.egress]]));
  },
};
