// `svc env set|list|rm` and `svc secret set|list|rm`: a workspace's variables and the secrets of its vault.
// A secret's value comes from standard input or a prompt without echo; on the command line only with --value
// (where shell history and `ps` would see it). It is never printed.
import type { Secret, Variable as PlainVariable } from '../../sdk/src/index.ts';
import type { Cli, Command } from './command.ts';
import { CliError, usageError } from './errors.ts';
import { detailRepeatsErrors, table, when } from './output.ts';
import { askSecret, readAll } from './prompt.ts';
import { label, selectedWorkspace, workspaceOptions } from './targets.ts';

/** A variable (with its value) or a secret (without). */
type Variable = PlainVariable | Secret;
type Kind = 'variables' | 'secrets';

async function target(cli: Cli, kind: Kind) {
  const api = await cli.api();
  const workspace = await selectedWorkspace(cli, api);
  return { api, workspace, path: { ws: workspace.id } };
}

/** A name refused by the schema said with the name as typed (`"1BAD" must be a variable name: ...`), not its pointer. */
async function naming<T>(name: string, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    const problem = error instanceof CliError ? error.problem : undefined;
    const refusal = problem?.errors?.find((e) => e.in === 'path' && e.pointer === '/name');
    if (!problem || !refusal || !detailRepeatsErrors(problem)) throw error;
    const rest = problem.errors!.filter((e) => e !== refusal);
    const worded = { ...problem, detail: `"${name}" ${refusal.message}`, errors: rest.length > 0 ? rest : undefined };
    throw new CliError(error instanceof CliError ? error.message : '', (error as CliError).exitCode, worded);
  }
}

async function secretValue(cli: Cli, name: string): Promise<string> {
  const given = cli.args.string('value');
  if (given !== undefined) return given;
  if (cli.terminal.stdinIsTty) return askSecret(cli.terminal, `Value of ${name} (not shown): `);
  return readAll(cli.terminal.stdin);
}

function listCommand(kind: Kind, usage: string): Command {
  return {
    usage,
    options: workspaceOptions,
    async run(cli) {
      const { api, workspace, path } = await target(cli, kind);
      const items: Variable[] = (await api.answer(api.client.GET(`/api/v1/workspaces/{ws}/${kind}`, { params: { path } }))).items;
      if (cli.json) return cli.print(items);
      if (items.length === 0) return cli.say(`No ${kind} in ${label(workspace)}.\n`);
      const rows = items.map((v) => (kind === 'variables' ? [v.name, 'value' in v ? v.value : '', when(v.updated_at)] : [v.name, when(v.updated_at)]));
      cli.say(table(kind === 'variables' ? ['NAME', 'VALUE', 'UPDATED'] : ['NAME', 'UPDATED'], rows));
    },
  };
}

function removeCommand(kind: Kind, usage: string): Command {
  return {
    usage,
    options: workspaceOptions,
    positionals: [1, 1],
    async run(cli) {
      const { api, workspace, path } = await target(cli, kind);
      const name = cli.args.positionals[0];
      await naming(name, api.answer(api.client.DELETE(`/api/v1/workspaces/{ws}/${kind}/{name}`, { params: { path: { ...path, name } } })));
      if (cli.json) cli.print({ name, deleted: true });
      else cli.say(`Removed ${name} from ${label(workspace)}.\n`);
    },
  };
}

const envSet: Command = {
  usage: 'svc env set NAME VALUE | NAME=VALUE [--ws WS] [--json]\n  Sets an environment variable of the workspace; svc sync applies it to the services.',
  options: workspaceOptions,
  positionals: [1, 2],
  async run(cli) {
    const [first, second] = cli.args.positionals;
    const split = second === undefined ? /^([^=]+)=([\s\S]*)$/.exec(first) : undefined;
    if (second === undefined && !split) throw usageError('give NAME VALUE or NAME=VALUE');
    const [name, value] = split ? [split[1], split[2]] : [first, second];
    const { api, workspace, path } = await target(cli, 'variables');
    const saved = await naming(name, api.answer(api.client.PUT('/api/v1/workspaces/{ws}/variables/{name}', { params: { path: { ...path, name } }, body: { value } })));
    if (cli.json) cli.print(saved);
    else cli.say(`Set ${name} in ${label(workspace)}.\n`);
  },
};

const secretSet: Command = {
  usage: `svc secret set NAME [--value VALUE] [--ws WS] [--json]
  Sets a secret in the workspace's vault. The value is read from standard input, or asked for without echo on a
  terminal; --value puts it on the command line instead (visible to shell history and ps).`,
  options: { ...workspaceOptions, value: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const name = cli.args.positionals[0];
    const { api, workspace, path } = await target(cli, 'secrets');
    const value = await secretValue(cli, name);
    const saved = await naming(name, api.answer(api.client.PUT('/api/v1/workspaces/{ws}/secrets/{name}', { params: { path: { ...path, name } }, body: { value } })));
    if (cli.json) cli.print(saved);
    else cli.say(`Set secret ${name} in ${label(workspace)}.\n`);
  },
};

export const envCommands: Record<string, Command> = {
  set: envSet,
  list: listCommand('variables', 'svc env list [--ws WS] [--json]\n  The environment variables of the workspace with their values.'),
  rm: removeCommand('variables', 'svc env rm NAME [--ws WS] [--json]'),
};

export const secretCommands: Record<string, Command> = {
  set: secretSet,
  list: listCommand('secrets', 'svc secret list [--ws WS] [--json]\n  The names of the secrets in the workspace\'s vault (never their values).'),
  rm: removeCommand('secrets', 'svc secret rm NAME [--ws WS] [--json]'),
};
