// `svc dotfiles set URL|show|unset`: your dotfiles repository, cloned into HOME of each workspace you own at its
// first start, its install script run (docs/workspaces.md, "Dotfiles").
import type { Command } from './command.ts';

const set: Command = {
  usage: 'svc dotfiles set URL [--json]\n  Your dotfiles repository (a git URL without a password); applied at the first start of each workspace you own.',
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const answer = await api.answer(api.client.PUT('/api/v1/me/dotfiles', { body: { url: cli.args.positionals[0] } }));
    if (cli.json) return cli.print(answer);
    cli.say(`Your dotfiles: ${answer.url}. Workspaces you own get them at their first start.\n`);
  },
};

const show: Command = {
  usage: 'svc dotfiles show [--json]\n  Your dotfiles repository, if you set one.',
  async run(cli) {
    const api = await cli.api();
    const answer = await api.answer(api.client.GET('/api/v1/me/dotfiles'));
    if (cli.json) return cli.print(answer);
    cli.say(answer.url ? `${answer.url}\n` : 'No dotfiles repository (svc dotfiles set URL).\n');
  },
};

const unset: Command = {
  usage: 'svc dotfiles unset [--json]\n  Forgets your dotfiles repository; workspaces keep what was applied.',
  async run(cli) {
    const api = await cli.api();
    await api.answer(api.client.DELETE('/api/v1/me/dotfiles'));
    if (cli.json) return cli.print({ url: null });
    cli.say('No dotfiles repository any more.\n');
  },
};

export const dotfilesCommands: Record<string, Command> = { set, show, unset };
