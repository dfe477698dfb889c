// `svc git-credentials add|list|rm` and `svc ssh-key show|rotate`: the caller's own git credentials. A token comes
// from standard input or a prompt without echo; on the command line only with --password (where shell history and
// `ps` see it). It is never printed; the SSH key is shown as its public half only.
import type { Cli, Command } from './command.ts';
import { CliError } from './errors.ts';
import { table, when } from './output.ts';
import { askSecret, readAll } from './prompt.ts';

async function secret(cli: Cli, host: string): Promise<string> {
  const given = cli.args.string('password');
  if (given !== undefined) return given;
  if (cli.terminal.stdinIsTty) return askSecret(cli.terminal, `Token or password for ${host} (not shown): `);
  return (await readAll(cli.terminal.stdin)).replace(/\r?\n$/, '');
}

const add: Command = {
  usage: `svc git-credentials add HOST [--username USER] [--password TOKEN] [--json]
  Stores your credential for a git host (host or host:port, as in https:// clone URLs): a token (github.com,
  GitLab, Gitea; the username defaults to x-access-token) or a username and password of a self-hosted server.
  Clones of your workspaces and git inside them (as you) use it. Replaces the one stored before. The token is
  read from standard input, or asked for without echo on a terminal.`,
  options: { username: { type: 'string' }, password: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const host = cli.args.positionals[0];
    const api = await cli.api();
    const username = cli.args.string('username');
    const body = { host, ...(username ? { username } : {}), password: await secret(cli, host) };
    const { data: saved, response } = await api.call(api.client.POST('/api/v1/me/git-credentials', { body }));
    if (cli.json) return cli.print(saved);
    cli.say(`${response.status === 201 ? 'Added' : 'Replaced'} your git credential for ${saved!.host} (user ${saved!.username}).\n`);
  },
};

const list: Command = {
  usage: 'svc git-credentials list [--json]\n  Your git credentials: host and username (never the token).',
  async run(cli) {
    const api = await cli.api();
    const items = (await api.answer(api.client.GET('/api/v1/me/git-credentials'))).items;
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say('You have no git credentials. Add one with `svc git-credentials add HOST`.\n');
    cli.say(table(['HOST', 'USERNAME', 'UPDATED'], items.map((c) => [c.host, c.username, when(c.updated_at)])));
  },
};

const rm: Command = {
  usage: 'svc git-credentials rm HOST [--json]\n  Removes your credential for the git host.',
  positionals: [1, 1],
  async run(cli) {
    const host = cli.args.positionals[0];
    const api = await cli.api();
    await api.answer(api.client.DELETE('/api/v1/me/git-credentials/{host}', { params: { path: { host } } }));
    if (cli.json) cli.print({ host, deleted: true });
    else cli.say(`Removed your git credential for ${host}.\n`);
  },
};

export const gitCredentialCommands: Record<string, Command> = { add, list, rm };

type SshKey = { public_key: string; fingerprint: string; created_at: string };

function showKey(cli: Cli, key: SshKey, heading: string): void {
  if (cli.json) return cli.print(key);
  cli.say(`${heading}\nPaste this public key at your git host (GitHub: Settings → SSH and GPG keys):\n\n${key.public_key}\n\nFingerprint ${key.fingerprint}\n`);
}

const show: Command = {
  usage: 'svc ssh-key show [--json]\n  The public half of your SSH key, made the first time it is asked for; the private half never leaves svc.',
  async run(cli) {
    const api = await cli.api();
    try {
      showKey(cli, (await api.answer(api.client.GET('/api/v1/me/ssh-key')))!, `Your SSH key:`);
    } catch (error) {
      if (!(error instanceof CliError && error.problem?.status === 404)) throw error;
      showKey(cli, (await api.answer(api.client.POST('/api/v1/me/ssh-key')))!, 'Made your SSH key.');
    }
  },
};

const rotate: Command = {
  usage: 'svc ssh-key rotate [--json]\n  Replaces your SSH key with a new one; paste the new public key at your git hosts (the old one stops working in svc).',
  async run(cli) {
    const api = await cli.api();
    showKey(cli, (await api.answer(api.client.POST('/api/v1/me/ssh-key')))!, 'Made a new SSH key; the old one is gone.');
  },
};

export const sshKeyCommands: Record<string, Command> = { show, rotate };
