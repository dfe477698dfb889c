// `svc invite create|list|revoke|renew|accept` and `svc transfer offer|list|accept|decline|cancel`: invitations of an
// organization (by e-mail, optionally into teams with a role) and ownership transfers of workspaces.
import type { Invitation, NewInvitation, OwnerTransfer as Transfer, RequestOf } from '../../sdk/src/index.ts';

type NewInvitationBody = RequestOf<'/api/v1/orgs/{org}/invitations', 'post'>;
import type { Api } from './api.ts';
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { table, when } from './output.ts';
import { notFoundHere, resolveWorkspace, teamOptions } from './targets.ts';

const orgOptions = { org: { type: 'string' as const } };

/** The organization of `--org ID|NAME`, or your only one. */
async function resolveOrg(cli: Cli, api: Api): Promise<{ id: string; name: string }> {
  const orgs = await api.all((page) => api.client.GET('/api/v1/orgs', { params: { query: page } }));
  const given = cli.args.string('org') ?? cli.env.SVC_ORG;
  if (given !== undefined) {
    const found = orgs.find((o) => o.id === given || o.name.toLowerCase() === given.toLowerCase());
    if (!found) throw notFoundHere(`You are in no organization "${given}".`);
    return found;
  }
  if (orgs.length === 1) return orgs[0];
  if (orgs.length === 0) throw notFoundHere('You are in no organization.');
  throw usageError(`you are in ${orgs.length} organizations: pick one with --org ID|NAME (${orgs.slice(0, 10).map((o) => o.name).join(', ')})`);
}

/** `--teams NAME:ROLE,ID:ROLE` into team ids of the org. */
async function teamsOf(cli: Cli, api: Api, orgId: string): Promise<NewInvitationBody['teams']> {
  const text = cli.args.string('teams');
  if (!text) return [];
  const teams = await api.all((page) => api.client.GET('/api/v1/teams', { params: { query: { org: orgId, ...page } } }));
  return text.split(',').map((entry) => {
    const [name, role] = entry.split(':').map((s) => s.trim());
    if (!name || !role) throw usageError(`--teams takes TEAM:ROLE entries separated by commas, got "${entry}"`);
    const team = teams.find((t) => String(t.id) === name || t.name.toLowerCase() === name.toLowerCase());
    if (!team) throw notFoundHere(`The organization has no team "${name}" you can see.`);
    return { team_id: team.id, role: role as NonNullable<NewInvitationBody['teams']>[number]['role'] };
  });
}

function showInvitation(cli: Cli, invitation: Invitation | NewInvitation, verb: string): void {
  if (cli.json) return cli.print(invitation);
  cli.say(`${verb} ${invitation.email} (${invitation.id}), valid until ${when(invitation.expires_at)}.\nMail: ${invitation.mail.detail}\n`);
  if ('url' in invitation && invitation.url) cli.say(`Give them this link (shown once, it works once):\n  ${invitation.url}\n`);
}

const create: Command = {
  usage: `svc invite create EMAIL [--org ORG] [--teams TEAM:ROLE,...] [--owner] [--json]
  Invites EMAIL into the organization (--owner as an owner), and into teams with a role (admin, developer,
  viewer). The link goes by mail; without a mail server on the installation it is printed here, once.`,
  options: { ...orgOptions, teams: { type: 'string' }, owner: { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const org = await resolveOrg(cli, api);
    const body: NewInvitationBody = { email: cli.args.positionals[0], role: cli.args.flag('owner') ? 'owner' : 'member', teams: await teamsOf(cli, api, org.id) };
    showInvitation(cli, await api.answer(api.client.POST('/api/v1/orgs/{org}/invitations', { params: { path: { org: org.id } }, body })), `Invited to ${org.name}:`);
  },
};

const list: Command = {
  usage: `svc invite list [--org ORG] [--state pending|expired|accepted|revoked] [--json]
  Invitations of the organization (those into your teams, for a team admin), newest first, with their mail state.`,
  options: { ...orgOptions, state: { type: 'string' } },
  async run(cli) {
    const api = await cli.api();
    const org = await resolveOrg(cli, api);
    const state = cli.args.string('state') as Invitation['state'] | undefined;
    const items = await api.all((page) => api.client.GET('/api/v1/orgs/{org}/invitations', { params: { path: { org: org.id }, query: { state, ...page } } }));
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say(`${org.name} has no invitations${cli.args.string('state') ? ` ${cli.args.string('state')}` : ''}.\n`);
    cli.say(table(['ID', 'EMAIL', 'STATE', 'MAIL', 'EXPIRES'], items.map((i) => [i.id, i.email, i.state, i.mail.detail, when(i.expires_at)])));
  },
};

const invitationAction = (action: 'revoke' | 'renew', usage: string, verb: string): Command => ({
  usage,
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    showInvitation(cli, await api.answer(api.client.POST(`/api/v1/invitations/{id}/${action}`, { params: { path: { id: cli.args.positionals[0] } } })), verb);
  },
});

const accept: Command = {
  usage: `svc invite accept LINK [--json]
  Accepts an invitation for your own account, signed in as you are here (the link never signs anyone in: an
  invitation for an address that has an account is accepted only by that account). LINK is the invitation's
  address, or the token after #invitation=.`,
  positionals: [1, 1],
  async run(cli) {
    const given = cli.args.positionals[0];
    const token = given.includes('#invitation=') ? given.slice(given.indexOf('#invitation=') + '#invitation='.length) : given;
    const api = await cli.api();
    const accepted = await api.answer(api.client.POST('/api/v1/invitations/accept', { body: { token } }));
    if (cli.json) return cli.print(accepted);
    const teams = accepted.invitation.teams.map((t) => `team ${t.team_id} as ${t.role}`).join(', ');
    cli.say(`Accepted: ${accepted.user.email} joined the organization ${accepted.invitation.org_id}${accepted.invitation.role === 'owner' ? ' as an owner' : ''}${teams ? ` and ${teams}` : ''}.\n`);
  },
};

export const inviteCommands: Record<string, Command> = {
  create,
  list,
  accept,
  revoke: invitationAction('revoke', 'svc invite revoke ID [--json]\n  Revokes a pending invitation: its link stops working.', 'Revoked the invitation of'),
  renew: invitationAction('renew', 'svc invite renew ID [--json]\n  A new link and expiry, mailed again; the old link stops working.', 'Renewed the invitation of'),
};

/** A member of the workspace's team by user id or e-mail. */
async function memberId(api: Api, teamId: number, reference: string): Promise<number> {
  if (/^\d+$/.test(reference)) return Number(reference);
  const members = await api.all((page) => api.client.GET('/api/v1/teams/{team}/members', { params: { path: { team: teamId }, query: page } }));
  const found = members.find((m) => m.email.toLowerCase() === reference.toLowerCase());
  if (!found) throw notFoundHere(`The team has no member ${reference}.`);
  return found.user_id;
}

function showTransfer(cli: Cli, transfer: Transfer, text: string): void {
  if (cli.json) cli.print(transfer);
  else cli.say(`${text}\n`);
}

const offer: Command = {
  usage: `svc transfer offer WS USER [--team T] [--json]
  Offers the workspace (id or name) to a member of its team (user id or e-mail); they accept or decline.`,
  options: teamOptions,
  positionals: [2, 2],
  async run(cli) {
    const api = await cli.api();
    const workspace = await resolveWorkspace(cli, api, cli.args.positionals[0]);
    const to = await memberId(api, workspace.team_id, cli.args.positionals[1]);
    const transfer = await api.answer(api.client.POST('/api/v1/workspaces/{ws}/owner-transfers', { params: { path: { ws: workspace.id } }, body: { to_user_id: to } }));
    showTransfer(cli, transfer, `Offered ${workspace.name} (${workspace.id}) to user ${to}: transfer ${transfer.id}.`);
  },
};

const transferList: Command = {
  usage: `svc transfer list [--ws WS] [--team T] [--state open|accepted|declined|cancelled] [--json]
  Transfers offered to you or by you; with --ws those of the workspace.`,
  options: { ...teamOptions, ws: { type: 'string' }, state: { type: 'string' } },
  async run(cli) {
    const api = await cli.api();
    const reference = cli.args.string('ws');
    const state = cli.args.string('state') as Transfer['state'] | undefined;
    const ws = reference ? (await resolveWorkspace(cli, api, reference)).id : undefined;
    const items = await api.all((page) =>
      ws === undefined
        ? api.client.GET('/api/v1/me/owner-transfers', { params: { query: { state, ...page } } })
        : api.client.GET('/api/v1/workspaces/{ws}/owner-transfers', { params: { path: { ws }, query: { state, ...page } } }),
    );
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say('No ownership transfers.\n');
    cli.say(table(['ID', 'WORKSPACE', 'FROM', 'TO', 'STATE', 'OFFERED'], items.map((t) => [t.id, t.workspace_id, t.from_user_id, t.to_user_id, t.state, when(t.created_at)])));
  },
};

const transferAction = (action: 'accept' | 'decline' | 'cancel', usage: string, done: string): Command => ({
  usage,
  positionals: [1, 1],
  async run(cli) {
    const api = await cli.api();
    const transfer = await api.answer(api.client.POST(`/api/v1/owner-transfers/{id}/${action}`, { params: { path: { id: cli.args.positionals[0] } } }));
    showTransfer(cli, transfer, `${done} transfer ${transfer.id} of workspace ${transfer.workspace_id}.`);
  },
});

export const transferCommands: Record<string, Command> = {
  offer,
  list: transferList,
  accept: transferAction('accept', 'svc transfer accept ID [--json]\n  Accepts a transfer offered to you: you own the workspace.', 'Accepted'),
  decline: transferAction('decline', 'svc transfer decline ID [--json]\n  Declines a transfer offered to you.', 'Declined'),
  cancel: transferAction('cancel', 'svc transfer cancel ID [--json]\n  Cancels an open transfer (the offerer, the owner or a team admin).', 'Cancelled'),
};
