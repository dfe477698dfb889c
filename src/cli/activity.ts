// `svc ws activity WS` (what kept the workspace awake, what put it to sleep) and `svc ws keep-awake WS --for 2h`
// (background work: the idle timeout does not put it to sleep until then; --end ends it). docs/workspaces.md.
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { fields, table, when } from './output.ts';
import { label, resolveWorkspace, teamOptions } from './targets.ts';

/** The longest keep-awake the server takes (24 h); asked again, a new one replaces the last. */
const MAX_SECONDS = 24 * 3600;

/** `2h`, `90m`, `1h30m`, `45s` or a number of seconds, as seconds; undefined when it is none of them. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(trimmed);
  if (!match || trimmed === '') return undefined;
  const [, h, m, s] = match;
  return Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
}

function keepAwakeText(keep: { until: string; asked_by_email?: string } | undefined): string | undefined {
  return keep ? `until ${when(keep.until)}${keep.asked_by_email ? ` (asked by ${keep.asked_by_email})` : ''}` : undefined;
}

export const activityCommand: Command = {
  usage: `svc ws activity WS [--team T] [--json]
  What kept the workspace awake and what put it to sleep: its recent uses by kind (dev URL, service address,
  editor, terminal, ssh, exec, port-forward ...) and address, and its keep-awake.`,
  options: { ...teamOptions },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const workspace = await resolveWorkspace(cli, api, cli.args.positionals[0]);
    const activity = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/activity', { params: { path: { ws: workspace.id } } }));
    if (cli.json) return cli.print(activity);
    cli.say(fields([
      ['Workspace', label(workspace)],
      ['Activity', activity.text],
      ['Sleeps at', activity.sleeps_at ? when(activity.sleeps_at) : undefined],
      ['Kept awake', keepAwakeText(activity.keep_awake)],
      ['Idle timeout', `${activity.idle_timeout_minutes} min`],
    ]));
    if (activity.uses.length === 0) return cli.say('No use recorded yet.\n');
    cli.say(`\n${table(['KIND', 'ADDRESS', 'LAST USE', 'FIRST USE'], activity.uses.map((use) => [use.kind, use.address || '-', when(use.last_at), when(use.first_at)]))}`);
  },
};

export const keepAwakeCommand: Command = {
  usage: `svc ws keep-awake WS --for DURATION [--team T] [--json]
svc ws keep-awake WS --end [--team T]
  Keeps a running workspace awake for background work: its idle timeout does not put it to sleep for DURATION
  (2h, 90m, 1h30m; at most 24h), and then it ends by itself. Asked again, the new one replaces it; who asked is
  recorded and shown. --end ends it now.`,
  options: { ...teamOptions, for: { type: 'string' }, end: { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const forText = cli.args.string('for');
    const end = cli.args.flag('end');
    if ((forText === undefined) === !end) throw usageError('give --for DURATION (e.g. --for 2h) or --end');
    const api = await cli.api();
    const workspace = await resolveWorkspace(cli, api, cli.args.positionals[0]);
    const path = { ws: workspace.id };
    if (end) {
      await api.answer(api.client.DELETE('/api/v1/workspaces/{ws}/keep-awake', { params: { path } }));
      if (cli.json) return cli.print({ ended: true });
      return cli.say(`${label(workspace)}: no longer kept awake; it sleeps after ${workspace.idle_timeout_minutes} min unused.\n`);
    }
    const seconds = parseDuration(forText!);
    if (seconds === undefined || seconds < 60 || seconds > MAX_SECONDS) throw usageError(`--for takes a duration from 1m to 24h such as 2h, 90m or 1h30m, not "${forText}"`);
    const kept = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/keep-awake', { params: { path }, body: { for_seconds: seconds } }));
    if (cli.json) return cli.print(kept);
    cli.say(`${label(workspace)}: kept awake ${keepAwakeText(kept)}.\n`);
  },
};
