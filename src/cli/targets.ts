// Which team and workspace a command means: by id, or by name within a team (`--team`, SVC_TEAM, or the only team
// the person is in). Workspace commands of a landscape take `--ws ID|NAME` or SVC_WORKSPACE.
import type { Team, Workspace } from '../../sdk/src/index.ts';
import type { ProblemBody } from '../core/problems.ts';
import { didYouMean } from '../core/suggest.ts';
import type { Api } from './api.ts';
import type { Cli } from './command.ts';
import { CliError, ExitCode, usageError } from './errors.ts';

/** A "not found" the way the server words it, so it prints as `title: detail` and exits 1. */
export function notFoundHere(detail: string): CliError {
  const problem: ProblemBody = { type: 'urn:svc:problem:not-found', title: 'Not found', status: 404, detail };
  return new CliError(problem.title, ExitCode.problem, problem);
}

export const teamOptions = { team: { type: 'string' as const } };
export const workspaceOptions = { ws: { type: 'string' as const }, team: { type: 'string' as const } };

export async function resolveTeam(cli: Cli, api: Api): Promise<Team> {
  const given = cli.args.string('team') ?? cli.env.SVC_TEAM;
  const teams = await api.all((page) => api.client.GET('/api/v1/teams', { params: { query: page } }));
  if (given !== undefined) {
    const matches = /^\d+$/.test(given) ? teams.filter((t) => t.id === Number(given)) : teams.filter((t) => t.name.toLowerCase() === given.toLowerCase());
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) throw usageError(`several teams are named "${given}": pick one by id (${matches.map((t) => t.id).join(', ')})`);
    throw notFoundHere(`You are in no team "${given}".${didYouMean(given, teams.map((t) => t.name))}`);
  }
  if (teams.length === 1) return teams[0];
  if (teams.length === 0) throw notFoundHere('You are in no team yet; ask a team admin to add you.');
  const list = teams.slice(0, 10).map((t) => `${t.id} ${t.name}`).join(', ');
  throw usageError(`you see ${teams.length} teams: pick one with --team ID|NAME or SVC_TEAM (${list}${teams.length > 10 ? ', ...' : ''})`);
}

/** A workspace by id, or by name in the team; `deleted` looks among the recently deleted ones instead. */
export async function resolveWorkspace(cli: Cli, api: Api, reference: string, deleted = false): Promise<Workspace> {
  if (/^\d+$/.test(reference)) return api.answer(api.client.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: Number(reference) } } }));
  const team = await resolveTeam(cli, api);
  const workspaces = await api.all((page) => api.client.GET('/api/v1/workspaces', { params: { query: { team: team.id, deleted, ...page } } }));
  const matches = workspaces.filter((w) => w.name === reference);
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw usageError(`several deleted workspaces are named "${reference}": pick one by id (${matches.map((w) => w.id).join(', ')})`);
  const hint = didYouMean(reference, workspaces.map((w) => w.name));
  throw notFoundHere(`Team ${team.name} has no ${deleted ? 'deleted ' : ''}workspace named "${reference}".${hint}`);
}

/** The workspace of `--ws` or SVC_WORKSPACE, for the landscape, stage, log and variable commands. */
export async function selectedWorkspace(cli: Cli, api: Api): Promise<Workspace> {
  const reference = cli.args.string('ws') ?? cli.env.SVC_WORKSPACE;
  if (!reference) throw usageError('which workspace? pass --ws ID|NAME or set SVC_WORKSPACE');
  return resolveWorkspace(cli, api, reference);
}

export const label = (workspace: Pick<Workspace, 'id' | 'name'>) => `${workspace.name} (${workspace.id})`;
