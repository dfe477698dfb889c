// `svc ws list|create|show|rename|sleep|wake|retry|stop|start|delete|restore|purge|archive|open|activity|keep-awake|
// timings` (docs/workspaces.md).
import type { Operation, Workspace } from '../../sdk/src/index.ts';
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { activityCommand, keepAwakeCommand } from './activity.ts';
import { followOperation } from './operations.ts';
import { fields, table, when } from './output.ts';
import { label, resolveTeam, resolveWorkspace, teamOptions } from './targets.ts';
import { timingsCommand } from './timings.ts';

const waitOption = { 'no-wait': { type: 'boolean' as const } };

function showWorkspace(cli: Cli, workspace: Workspace, headline?: string): void {
  if (cli.json) return cli.print(workspace);
  if (headline) cli.say(`${headline}\n`);
}

/** After an operation: the workspace as it is now, or the operation itself with --no-wait. */
async function afterOperation(cli: Cli, started: Operation, workspace: Workspace, what: string): Promise<void> {
  const api = await cli.api();
  if (cli.args.flag('no-wait')) {
    if (cli.json) return cli.print(started);
    return cli.say(`${what} ${label(workspace)}: started (operation ${started.id}).\n`);
  }
  await followOperation(cli, api, started, `${what} ${label(workspace)}`);
  const now = await api.answer(api.client.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: workspace.id } } }));
  showWorkspace(cli, now, `${label(now)}: ${now.state.replace('_', ' ')}, ${now.status_detail}`);
}

/** `svc ws ACTION WS`: the workspace by id or name, then the action. */
function action(usage: string, run: (cli: Cli, workspace: Workspace) => Promise<void>, options: Command['options'] = {}, deleted = false): Command {
  return {
    usage,
    options: { ...teamOptions, ...options },
    positionals: [1, 1],
    async run(cli) {
      const workspace = await resolveWorkspace(cli, await cli.api(), cli.args.positionals[0], deleted);
      await run(cli, workspace);
    },
  };
}

/** Sleep and stop answer the workspace at once; the rest are operations. */
function quick(verb: 'sleep' | 'stop', usage: string): Command {
  return action(usage, async (cli, workspace) => {
    const api = await cli.api();
    const now = await api.answer(api.client.POST(`/api/v1/workspaces/{ws}/${verb}`, { params: { path: { ws: workspace.id } } }));
    showWorkspace(cli, now, `${label(now)}: ${now.state}, ${now.status_detail}`);
  });
}

function queued(verb: 'wake' | 'start' | 'restore' | 'archive' | 'restore-archive', what: string, usage: string, deleted = false): Command {
  return action(usage, async (cli, workspace) => {
    const api = await cli.api();
    const started = await api.answer(api.client.POST(`/api/v1/workspaces/{ws}/${verb}`, { params: { path: { ws: workspace.id } } }));
    await afterOperation(cli, started, workspace, what);
  }, waitOption, deleted);
}

/** github.com -> github, and so on; `git` for any other host or a local path. */
export function gitProvider(repo: string): string {
  const host = /^[a-z]+:\/\/(?:[^@/]+@)?([^/:]+)/i.exec(repo)?.[1] ?? /^[\w.-]+@([\w.-]+):/.exec(repo)?.[1] ?? '';
  for (const provider of ['github', 'gitlab', 'bitbucket']) if (host.toLowerCase().includes(provider)) return provider;
  return 'git';
}

const list: Command = {
  usage: 'svc ws list [--team T] [--deleted] [--json]\n  Workspaces you can see (of one team with --team); --deleted lists the recently deleted.',
  options: { ...teamOptions, deleted: { type: 'boolean' } },
  async run(cli) {
    const api = await cli.api();
    const team = (cli.args.string('team') ?? cli.env.SVC_TEAM) !== undefined ? await resolveTeam(cli, api) : undefined;
    const [workspaces, teams] = await Promise.all([
      api.all((page) => api.client.GET('/api/v1/workspaces', { params: { query: { team: team?.id, deleted: cli.args.flag('deleted'), ...page } } })),
      api.all((page) => api.client.GET('/api/v1/teams', { params: { query: page } })),
    ]);
    if (cli.json) return cli.print(workspaces);
    if (workspaces.length === 0) return cli.say(cli.args.flag('deleted') ? 'No recently deleted workspaces.\n' : 'No workspaces yet: svc ws create NAME [--git URL]\n');
    const teamName = new Map(teams.map((t) => [t.id, t.name]));
    const rows = workspaces.map((w) => [w.id, w.name, teamName.get(w.team_id) ?? w.team_id, w.state, w.deleted_at ? `purged after ${when(w.purge_after)}` : w.status_detail]);
    cli.say(table(['ID', 'NAME', 'TEAM', 'STATE', 'STATUS'], rows));
  },
};

const create: Command = {
  usage: `svc ws create NAME [--team T] [--git URL [--ref REF] [--provider P]] [--storage GIB] [--idle-timeout MIN]
               [--restricted] [--egress on|off] [--plan P] [--base-image I] [--no-wait] [--json]
  Creates a workspace from a git repository, or empty, and waits until it runs. --egress off: its pods reach
  nothing outside the workspace.`,
  options: {
    ...teamOptions,
    ...waitOption,
    git: { type: 'string' },
    ref: { type: 'string' },
    provider: { type: 'string' },
    storage: { type: 'string' },
    'idle-timeout': { type: 'string' },
    restricted: { type: 'boolean' },
    egress: { type: 'string' },
    plan: { type: 'string' },
    'base-image': { type: 'string' },
  },
  positionals: [1, 1],
  async run(cli) {
    const { args } = cli;
    const repo = args.string('git');
    if (!repo && (args.string('ref') || args.string('provider'))) throw usageError('--ref and --provider go with --git');
    const egressText = args.string('egress');
    if (egressText !== undefined && egressText !== 'on' && egressText !== 'off') throw usageError(`--egress is on or off, not "${egressText}"`);
    const egress = egressText as 'on' | 'off' | undefined;
    const body = {
      name: args.positionals[0],
      git: repo ? { provider: args.string('provider') ?? gitProvider(repo), repo, ref: args.string('ref') } : undefined,
      storage_gib: args.integer('storage', 1, 1024),
      idle_timeout_minutes: args.integer('idle-timeout', 1, 10080),
      restricted: args.flag('restricted') || undefined,
      egress,
      plan: args.string('plan'),
      base_image: args.string('base-image'),
    };
    const api = await cli.api();
    const team = await resolveTeam(cli, api);
    const started = await api.answer(api.client.POST('/api/v1/workspaces', { body: { team_id: team.id, ...body } }));
    const id = Number(started.target?.split('/')[2]);
    await afterOperation(cli, started, { id, name: body.name } as Workspace, 'Creating');
  },
};

const show = action('svc ws show WS [--team T] [--json]\n  A workspace: state, addresses, settings, what keeps it awake.', async (cli, listed) => {
  // a name is found in the list, whose items leave out what only GET /workspaces/{ws} shows (its activity)
  const api = await cli.api();
  const w = listed.activity ? listed : await api.answer(api.client.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: listed.id } } }));
  if (cli.json) return cli.print(w);
  cli.say(
    fields([
      ['Workspace', label(w)],
      ['State', `${w.state} (${w.status_detail})`],
      ['Editor', w.urls.ide],
      ['Dev URL', w.urls.dev],
      ['Git', w.git ? `${w.git.repo}${w.git.ref ? ` @ ${w.git.ref}` : ''}${w.git.cloned ? '' : ' (not cloned: svc ws retry clones it, --git/--ref correct it)'}` : 'none (empty workspace)'],
      ['Plan', `${w.plan}, ${w.storage_gib} GiB, image ${w.base_image}`],
      ['Sleeps after', `${w.idle_timeout_minutes} min unused`],
      ['Activity', w.activity?.text],
      ['Kept awake', w.keep_awake ? `until ${when(w.keep_awake.until)}${w.keep_awake.asked_by_email ? ` (asked by ${w.keep_awake.asked_by_email})` : ''}` : undefined],
      ['Restricted', w.restricted ? 'yes' : undefined],
      ['Egress', w.egress === 'off' || w.team_egress === 'off' ? `off (${w.egress === 'off' ? 'the workspace' : 'its team'})` : undefined],
      ['Created', when(w.created_at)],
      ['Archived', when(w.last_archived_at)],
      ['Deleted', w.deleted_at ? `${when(w.deleted_at)}, purged after ${when(w.purge_after)}` : undefined],
    ]),
  );
});

const rename: Command = {
  usage: 'svc ws rename WS NEW_NAME [--team T] [--json]',
  options: teamOptions,
  positionals: [2, 2],
  async run(cli) {
    const api = await cli.api();
    const workspace = await resolveWorkspace(cli, api, cli.args.positionals[0]);
    const path = { ws: workspace.id };
    const { etag } = await api.withEtag(api.client.GET('/api/v1/workspaces/{ws}', { params: { path } }));
    const renamed = await api.answer(api.client.PATCH('/api/v1/workspaces/{ws}', { params: { path }, headers: { 'if-match': etag }, body: { name: cli.args.positionals[1] } }));
    showWorkspace(cli, renamed, `Renamed ${label(workspace)} to ${renamed.name}.`);
  },
};

/**
 * `svc ws retry WS [--git URL] [--ref REF]`: a workspace in Error tries again; after a failed clone it clones again,
 * from the corrected address or ref when given (saved first with If-Match).
 */
const retry = action(
  `svc ws retry WS [--git URL] [--ref REF|--default-ref] [--team T] [--no-wait] [--json]
  Tries a workspace in Error again. After a failed clone it clones again; --git and --ref correct the repository first.`,
  async (cli, workspace) => {
    const api = await cli.api();
    const path = { ws: workspace.id };
    const repo = cli.args.string('git');
    const ref = cli.args.flag('default-ref') ? null : cli.args.string('ref');
    if (cli.args.flag('default-ref') && cli.args.string('ref')) throw usageError('--ref and --default-ref exclude each other');
    if (repo !== undefined || ref !== undefined) {
      const { etag } = await api.withEtag(api.client.GET('/api/v1/workspaces/{ws}', { params: { path } }));
      const git = { ...(repo !== undefined ? { repo, provider: gitProvider(repo) } : {}), ...(ref !== undefined ? { ref } : {}) };
      await api.answer(api.client.PATCH('/api/v1/workspaces/{ws}', { params: { path }, headers: { 'if-match': etag }, body: { git } }));
    }
    const started = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/wake', { params: { path } }));
    await afterOperation(cli, started, workspace, 'Retrying');
  },
  { ...waitOption, git: { type: 'string' }, ref: { type: 'string' }, 'default-ref': { type: 'boolean' } },
);

const remove = action('svc ws delete WS [--team T] [--no-wait] [--json]\n  Deletes a workspace; svc ws restore brings it back within 7 days.', async (cli, workspace) => {
  const api = await cli.api();
  const path = { ws: workspace.id };
  const { etag } = await api.withEtag(api.client.GET('/api/v1/workspaces/{ws}', { params: { path } }));
  const started = await api.answer(api.client.DELETE('/api/v1/workspaces/{ws}', { params: { path }, headers: { 'if-match': etag } }));
  await afterOperation(cli, started, workspace, 'Deleting');
}, waitOption);

const purge = action('svc ws purge WS [--team T] [--yes] [--no-wait] [--json]\n  Removes a deleted workspace and its files for good (asks first).', async (cli, workspace) => {
  await cli.confirm(`Purge ${label(workspace)} and its files for good?`, 'purging');
  const api = await cli.api();
  const started = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/purge', { params: { path: { ws: workspace.id } } }));
  if (cli.args.flag('no-wait')) return cli.json ? cli.print(started) : cli.say(`Purging ${label(workspace)}: started (operation ${started.id}).\n`);
  const finished = await followOperation(cli, api, started, `Purging ${label(workspace)}`);
  if (cli.json) cli.print(finished);
  else cli.say(`Purged ${label(workspace)}.\n`);
}, { ...waitOption, yes: { type: 'boolean' } }, true);

const open = action('svc ws open WS [--team T] [--dev] [--json]\n  Opens the editor (--dev: the dev URL) in the browser, signed in by a single-use link; prints both.', async (cli, workspace) => {
  const api = await cli.api();
  const url = cli.args.flag('dev') ? workspace.urls.dev : workspace.urls.ide;
  const link = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/sign-in-links', { params: { path: { ws: workspace.id } }, body: { host: new URL(url).hostname } }));
  if (cli.json) return cli.print({ url, sign_in_url: link.url, expires_at: link.expires_at });
  const { openInBrowser } = await import('./browser.ts'); // child_process loads for this command only
  const opened = openInBrowser(link.url, cli.env);
  cli.say(`${cli.args.flag('dev') ? 'Dev URL' : 'Editor'}: ${url}\n${opened ? 'Opened in your browser with' : 'Sign in there once with'} this link (single use, 2 minutes):\n  ${link.url}\n`);
}, { dev: { type: 'boolean' } });

export const workspaceCommands: Record<string, Command> = {
  list,
  create,
  show,
  rename,
  sleep: quick('sleep', 'svc ws sleep WS [--team T] [--json]\n  Puts the workspace to sleep: files stay, every process stops; a request wakes it.'),
  wake: queued('wake', 'Waking', 'svc ws wake WS [--team T] [--no-wait] [--json]'),
  retry,
  stop: quick('stop', 'svc ws stop WS [--team T] [--json]\n  Stops the workspace: it does not wake on requests until started.'),
  start: queued('start', 'Starting', 'svc ws start WS [--team T] [--no-wait] [--json]'),
  delete: remove,
  restore: queued('restore', 'Restoring', 'svc ws restore WS [--team T] [--no-wait] [--json]\n  Brings back a deleted workspace (WS: id, or name among the deleted).', true),
  purge,
  archive: queued('archive', 'Archiving', 'svc ws archive WS [--team T] [--no-wait] [--json]\n  Packs the volume into the archive store and frees it.'),
  'restore-archive': queued('restore-archive', 'Restoring the archive of', 'svc ws restore-archive WS [--team T] [--no-wait] [--json]\n  Refills the volume of an archived workspace from its archive.'),
  open,
  activity: activityCommand,
  'keep-awake': keepAwakeCommand,
  timings: timingsCommand,
};
