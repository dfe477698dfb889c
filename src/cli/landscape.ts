// `svc sync`, `svc teardown`, `svc landscape` (docs/landscapes.md): the plan as a diff, a confirmed Sync that sends
// the reviewed plan's hash, and the landscape's banner (spec 3.7) with a table of its services.
import type { Landscape, Plan, Service as ServiceView } from '../../sdk/src/index.ts';
import type { Cli, Command } from './command.ts';

export type { Plan, ServiceView };
import { followOperation } from './operations.ts';
import { pointerPath, table, when } from './output.ts';
import { label, selectedWorkspace, workspaceOptions } from './targets.ts';

const fileOf = (profile: string | null | undefined) => (profile ? `svc.${profile}.yml` : 'svc.yml');
const profileOptions = { ...workspaceOptions, profile: { type: 'string' as const } };

/** The plan as a diff: `+` create, `~` change (with the changed fields and variables; `restarts` when Sync restarts it), `-` remove, `-/+` replace. */
export function formatPlan(plan: Plan): string {
  const lines: string[] = [];
  for (const service of plan.services) {
    const base = `/services/${service.name}`;
    const changed = service.changes.map((p) => pointerPath(p, base)).filter(Boolean).join(', ');
    if (service.action === 'create') lines.push(`+ ${service.name} (${service.type})`);
    else if (service.action === 'remove') lines.push(`- ${service.name} (${service.type})`);
    else if (service.action === 'replace') lines.push(`-/+ ${service.name} (${service.previousType} -> ${service.type}, replaced${changed ? `: ${changed}` : ''})`);
    else lines.push(`~ ${service.name} (${service.type})${service.restarts ? ', restarts' : ''}: ${changeText(service, base)}${service.reason ? ` (${service.reason})` : ''}`);
  }
  for (const stage of ['prepare', 'test'] as const) {
    if (!plan[stage].changed) continue;
    const changed = plan[stage].changes.map((p) => `steps${pointerPath(p, `/${stage}`)}`).join(', ');
    lines.push(`~ ${stage}: ${changed}`);
  }
  if (lines.length === 0) lines.push('  (no changes)');
  if (plan.unchanged.length > 0) lines.push(`  unchanged: ${plan.unchanged.join(', ')}`);
  for (const image of plan.images ?? []) lines.push(`  image of ${image.service}: ${imageText(image)}`);
  for (const secret of plan.missing_secrets ?? []) lines.push(`  secret ${secret.name} has no value (${secret.uses.map(placeText).join(', ')}): set it with "svc secret set ${secret.name}"; Sync refuses until then`);
  return `${lines.join('\n')}\n`;
}

const placeText = (use: { pointer: string; line?: number; column?: number }) => (use.line !== undefined ? `line ${use.line}, column ${use.column}` : use.pointer);

/** `name:tag → sha256:…` (what Sync will run), with what runs now when it differs, or why it cannot be resolved. */
function imageText(image: NonNullable<Plan['images']>[number]): string {
  if (image.digest === null) return `${image.image} → cannot be resolved: ${image.problem?.detail ?? image.problem?.title ?? 'unknown'}`;
  const now = image.deployed_digest && image.deployed_digest !== image.digest ? ` (runs ${image.deployed_digest} now)` : '';
  return `${image.image} → ${image.digest}${now}`;
}

/** The fields a change names, and the environment variables whose value changes (names only) as one phrase. */
function changeText(service: Plan['services'][number], base: string): string {
  const environment = service.environment ?? [];
  const fromEnvironment = new Set(environment.map((name) => `${base}/env/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  const fields = service.changes.filter((p) => !fromEnvironment.has(p)).map((p) => pointerPath(p, base)).filter(Boolean);
  if (environment.length > 0) fields.push(`environment ${environment.join(', ')} changed`);
  return fields.join(', ');
}

export function formatLandscape(landscape: Landscape, workspace: string): string {
  const { banner } = landscape;
  const file = fileOf(landscape.profile);
  const synced = landscape.synced_at ? `; ${file} synced ${when(landscape.synced_at)}` : '';
  const out = [`Landscape of ${workspace}: ${banner.state}${banner.detail ? ` (${banner.detail})` : ''}${synced}`];
  for (const error of banner.errors ?? []) out.push(`  ${file}:${error.line}:${error.column}: ${error.code ? `${error.code}: ` : ''}${error.message}`);
  out.push('');
  if (landscape.services.length > 0) {
    const rows = landscape.services.map((s) => [s.name, s.type, s.running ? s.status : `${s.status} (switched off)`, `${s.replicas.ready}/${s.replicas.desired}`, s.detail]);
    out.push(table(['SERVICE', 'TYPE', 'STATUS', 'READY', 'DETAIL'], rows).trimEnd());
    const pinned = landscape.services.filter((s) => s.image);
    if (pinned.length > 0) out.push('', ...pinned.map((s) => `Image of ${s.name}: ${s.image!.reference} @ ${s.image!.digest.slice(0, 19)}`));
  } else out.push('No services deployed.');
  out.push('', `Dev URL: ${landscape.dev_url.url} ${landscape.dev_url.state} (${landscape.dev_url.detail})`);
  return `${out.join('\n')}\n`;
}

const sync: Command = {
  usage: `svc sync [--ws WS] [--profile P] [--yes] [--dry-run] [--no-wait] [--json]
  Shows what a Sync would change, asks, then applies exactly that plan and waits for it.
  --yes       do not ask (needed without a terminal)    --dry-run   only show the plan`,
  options: { ...profileOptions, yes: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, 'no-wait': { type: 'boolean' } },
  async run(cli) {
    const api = await cli.api();
    const workspace = await selectedWorkspace(cli, api);
    const profile = cli.args.string('profile');
    const file = fileOf(profile);
    const path = { ws: workspace.id };
    const [plan, landscape] = await Promise.all([
      api.answer(api.client.GET('/api/v1/workspaces/{ws}/landscape/plan', { params: { path, query: { profile } } }), { file }),
      api.answer(api.client.GET('/api/v1/workspaces/{ws}/landscape', { params: { path, query: { profile } } })),
    ]);
    const tell = (text: string) => (cli.json ? cli.note(text) : cli.say(text));
    if (!cli.json || (!cli.args.flag('yes') && !cli.args.flag('dry-run'))) tell(`Plan for ${label(workspace)} from ${file}:\n${formatPlan(plan)}`);
    if (cli.args.flag('dry-run')) return cli.json ? cli.print({ plan, synced: false }) : undefined;
    if (!plan.changed) {
      if (['in-sync', 'formatting-only'].includes(landscape.banner.state)) {
        return cli.json ? cli.print({ plan, synced: false }) : cli.say('Nothing to sync: the landscape is in sync.\n');
      }
      tell(`The file is as last synced; a Sync applies: ${landscape.banner.detail ?? landscape.banner.state}.\n`);
    }
    // With secrets missing the server refuses the Sync (409 missing-secrets, with their places): nothing to ask.
    if ((plan.missing_secrets ?? []).length === 0) await cli.confirm('Apply this plan?', 'syncing');
    const started = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/landscape/sync', { params: { path }, body: { plan_hash: plan.hash, profile } }), { file });
    if (cli.args.flag('no-wait')) return cli.json ? cli.print({ plan, operation: started }) : cli.say(`Sync started (operation ${started.id}).\n`);
    const operation = await followOperation(cli, api, started, `Syncing ${label(workspace)}`, file);
    if (cli.json) return cli.print({ plan, operation });
    const now = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/landscape', { params: { path, query: { profile } } }));
    cli.say(`Synced.\n\n${formatLandscape(now, label(workspace))}`);
  },
};

const teardown: Command = {
  usage: 'svc teardown [--ws WS] [--no-wait] [--json]\n  Stops every service of the landscape; code, variables and secrets stay; svc sync starts them again.',
  options: { ...workspaceOptions, 'no-wait': { type: 'boolean' } },
  async run(cli) {
    const api = await cli.api();
    const workspace = await selectedWorkspace(cli, api);
    const started = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/landscape/teardown', { params: { path: { ws: workspace.id } } }));
    if (cli.args.flag('no-wait')) return cli.json ? cli.print(started) : cli.say(`Teardown started (operation ${started.id}).\n`);
    const operation = await followOperation(cli, api, started, `Tearing down ${label(workspace)}`);
    if (cli.json) cli.print(operation);
    else cli.say('Torn down: no service runs; svc sync starts them again.\n');
  },
};

const landscape: Command = {
  usage: 'svc landscape [--ws WS] [--profile P] [--json]\n  The banner state and each service with its status, ready/desired replicas and detail; the dev URL.',
  options: profileOptions,
  async run(cli) {
    const api = await cli.api();
    const workspace = await selectedWorkspace(cli, api);
    const profile = cli.args.string('profile');
    const answer = await api.answer(api.client.GET('/api/v1/workspaces/{ws}/landscape', { params: { path: { ws: workspace.id }, query: { profile } } }));
    if (cli.json) cli.print(answer);
    else cli.say(formatLandscape(answer, label(workspace)));
  },
};

export const landscapeCommands = { sync, teardown, landscape };
