// `svc keys list|rm`: your API keys. Minting needs the browser session (svc login, or the console); deleting
// works with any key, also the one this command line uses (which signs it out).
import type { Command } from './command.ts';
import { readLogin, removeLogin } from './config.ts';
import { usageError } from './errors.ts';
import { table, when } from './output.ts';
import { notFoundHere } from './targets.ts';

const list: Command = {
  usage: 'svc keys list [--json]\n  Your API keys; * marks the one this command line uses.',
  async run(cli) {
    const api = await cli.api();
    const [keys, stored] = await Promise.all([api.all((page) => api.client.GET('/api/v1/me/api-keys', { params: { query: page } })), readLogin(cli.env)]);
    if (cli.json) return cli.print(keys);
    const current = cli.env.SVC_TOKEN ?? stored?.token ?? '';
    const rows = keys.map((k) => [current.startsWith(k.prefix) ? '*' : '', k.id, k.name, k.source, when(k.created_at), when(k.last_used_at) || 'never', when(k.expires_at)]);
    cli.say(table(['', 'ID', 'NAME', 'SOURCE', 'CREATED', 'LAST USED', 'EXPIRES'], rows));
  },
};

const remove: Command = {
  usage: 'svc keys rm ID [--json]\n  Deletes an API key (ID: the id, or its first characters); it stops working at once.',
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const given = cli.args.positionals[0].replace(/^svc_/, '').replace(/_.*$/, '').toLowerCase();
    if (given.length < 4) throw usageError('give at least the first 4 characters of the key id');
    const matches = (await api.all((page) => api.client.GET('/api/v1/me/api-keys', { params: { query: page } }))).filter((k) => k.id.startsWith(given));
    if (matches.length > 1) throw usageError(`"${given}" fits ${matches.length} keys: give more of the id`);
    if (matches.length === 0) throw notFoundHere(`You have no API key ${given}.`);
    const key = matches[0];
    await api.answer(api.client.DELETE('/api/v1/me/api-keys/{key}', { params: { path: { key: key.id } } }));
    const stored = await readLogin(cli.env);
    const ownKey = stored?.key_id === key.id;
    if (ownKey) await removeLogin(cli.env);
    if (cli.json) return cli.print({ id: key.id, deleted: true, signed_out: ownKey });
    cli.say(`Deleted key ${key.name} (${key.id}).${ownKey ? ' It was the key of this command line: signed out.' : ''}\n`);
  },
};

export const keyCommands: Record<string, Command> = { list, rm: remove };
