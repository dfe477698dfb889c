// `svc registry add|list|remove`: a team's container registry credentials. The password comes from standard input
// or a prompt without echo; on the command line only with --password (where shell history and `ps` see it). It is
// never printed: lists show the registry and the username.
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { table, when } from './output.ts';
import { askSecret, readAll } from './prompt.ts';
import { resolveTeam, teamOptions } from './targets.ts';

async function teamPath(cli: Cli) {
  const api = await cli.api();
  const team = await resolveTeam(cli, api);
  return { api, team, path: { team: team.id } };
}

async function password(cli: Cli, registry: string): Promise<string> {
  const given = cli.args.string('password');
  if (given !== undefined) return given;
  if (cli.terminal.stdinIsTty) return askSecret(cli.terminal, `Password or token for ${registry} (not shown): `);
  return (await readAll(cli.terminal.stdin)).replace(/\r?\n$/, '');
}

const add: Command = {
  usage: `svc registry add REGISTRY --username USER [--password PASSWORD] [--team T] [--json]
  Stores the team's credentials for a container registry (host or host:port, as in image references; docker.io
  for Docker Hub); pulls of the team's images from it use them. Replaces credentials stored for it before. The
  password is read from standard input, or asked for without echo on a terminal.`,
  options: { ...teamOptions, username: { type: 'string' }, password: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const registry = cli.args.positionals[0];
    const username = cli.args.string('username');
    if (!username) throw usageError('--username is required');
    const { api, team, path } = await teamPath(cli);
    const body = { registry, username, password: await password(cli, registry) };
    const { data: saved, response } = await api.call(api.client.POST('/api/v1/teams/{team}/registry-credentials', { params: { path }, body }));
    if (cli.json) return cli.print(saved);
    cli.say(`${response.status === 201 ? 'Added' : 'Replaced'} the credentials of ${team.name} for ${saved!.registry} (user ${saved!.username}).\n`);
  },
};

const list: Command = {
  usage: "svc registry list [--team T] [--json]\n  The team's registry credentials: registry and username (never the password).",
  options: teamOptions,
  async run(cli) {
    const { api, team, path } = await teamPath(cli);
    const items = (await api.answer(api.client.GET('/api/v1/teams/{team}/registry-credentials', { params: { path } }))).items;
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say(`${team.name} has no registry credentials.\n`);
    cli.say(table(['REGISTRY', 'USERNAME', 'UPDATED'], items.map((c) => [c.registry, c.username, when(c.updated_at)])));
  },
};

const remove: Command = {
  usage: "svc registry remove REGISTRY [--team T] [--json]\n  Removes the team's credentials for the registry.",
  options: teamOptions,
  positionals: [1, 1],
  async run(cli) {
    const registry = cli.args.positionals[0];
    const { api, team, path } = await teamPath(cli);
    await api.answer(api.client.DELETE('/api/v1/teams/{team}/registry-credentials/{registry}', { params: { path: { ...path, registry } } }));
    if (cli.json) cli.print({ registry, deleted: true });
    else cli.say(`Removed the credentials of ${team.name} for ${registry}.\n`);
  },
};

export const registryCommands: Record<string, Command> = { add, list, remove };
