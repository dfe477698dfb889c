// `svc domains list|add|show|remove`: a team's custom domains (docs/domains.md). A domain is named by its name on
// the command line and looked up among the team's; `show` prints the TXT record to create and where verification
// and the certificate stand.
import { certificateLabels, verificationLabels, type Domain, type DomainRoute, type Team } from '../../sdk/src/index.ts';
import type { Api } from './api.ts';
import type { Cli, Command } from './command.ts';
import { usageError } from './errors.ts';
import { table, when } from './output.ts';
import { notFoundHere, resolveTeam, resolveWorkspace, teamOptions } from './targets.ts';

async function teamPath(cli: Cli) {
  const api = await cli.api();
  const team = await resolveTeam(cli, api);
  return { api, team, path: { team: team.id } };
}

const listDomains = (api: Api, path: { team: number }) => api.all((page) => api.client.GET('/api/v1/teams/{team}/domains', { params: { path, query: page } }));

/** The team's domain named NAME (as typed: any case, a trailing dot). */
async function domainNamed(api: Api, team: Team, path: { team: number }, name: string): Promise<Domain> {
  const wanted = name.toLowerCase().replace(/\.$/, '');
  const found = (await listDomains(api, path)).find((d) => d.name === wanted);
  if (!found) throw notFoundHere(`Team ${team.name} has no domain ${wanted}.`);
  return found;
}

/** `PATH=WS[:SERVICE[:PORT]]`: WS by id or by name in the team. */
async function parseRoute(cli: Cli, api: Api, text: string): Promise<DomainRoute> {
  const match = /^([^=]+)=([^:]+)(?::([^:]+)(?::(\d+))?)?$/.exec(text);
  if (!match) throw usageError(`--route takes PATH=WS[:SERVICE[:PORT]], such as /=site or /api=site:api:9000, got "${text}"`);
  const [, path, ws, service, port] = match;
  const workspace = await resolveWorkspace(cli, api, ws);
  return { path, workspace_id: workspace.id, ...(service && { service }), ...(port && { port: Number(port) }), strip: false };
}

const routeText = (r: DomainRoute) => `${r.path} -> workspace ${r.workspace_id}${r.service ? ` service ${r.service}${r.port ? ` port ${r.port}` : ''}` : ' (dev URL)'}${r.strip ? ', prefix removed' : ''}`;

function showDomain(cli: Cli, domain: Domain): void {
  const v = domain.verification;
  const lines = [
    `${domain.name} (${domain.id})${domain.restricted ? ', restricted' : ''}`,
    `Create this DNS record:`,
    `  ${domain.txt_record.name}  TXT  "${domain.txt_record.value}"`,
    `Verification: ${verificationLabels[v.status]}${v.detail ? ` (${v.detail})` : ''}`,
    ...(v.checked_at ? [`  last checked ${when(v.checked_at)}`] : []),
    ...(v.next_check_at ? [`  next check ${when(v.next_check_at)}`] : []),
    ...(v.lapses_at ? [`  record missing since ${when(v.missing_since)}: lapses ${when(v.lapses_at)}`] : []),
    ...(v.remove_at ? [`  removed ${when(v.remove_at)} unless verified`] : []),
    `Certificate: ${certificateLabels[domain.certificate.state]}${domain.certificate.detail ? ` (${domain.certificate.detail})` : ''}`,
    `Timeout ${domain.timeout_seconds} s, request bodies up to ${domain.body_limit_bytes} bytes`,
    domain.routes.length === 0 ? 'Routes: none (serves nothing yet)' : 'Routes:',
    ...domain.routes.map((r) => `  ${routeText(r)}`),
  ];
  cli.say(`${lines.join('\n')}\n`);
}

const list: Command = {
  usage: "svc domains list [--team T] [--json]\n  The team's custom domains with their verification status and certificate state.",
  options: teamOptions,
  async run(cli) {
    const { api, team, path } = await teamPath(cli);
    const items = await listDomains(api, path);
    if (cli.json) return cli.print(items);
    if (items.length === 0) return cli.say(`${team.name} has no custom domains.\n`);
    const rows = items.map((d) => [d.name, verificationLabels[d.verification.status], certificateLabels[d.certificate.state], d.routes.length, d.restricted ? 'yes' : 'no']);
    cli.say(table(['NAME', 'VERIFICATION', 'CERTIFICATE', 'ROUTES', 'RESTRICTED'], rows));
  },
};

const add: Command = {
  usage: `svc domains add NAME [--team T] [--route PATH=WS[:SERVICE[:PORT]]]... [--restricted] [--json]
  Adds the custom domain NAME (such as shop.example.com) to the team and prints the TXT record to create. Each
  --route sends a path prefix to a workspace's dev URL (WS by id or name), or to one of its services and port.
  --restricted: requests need an API key of the team (Svc-Authorization) or the team's sign-in.`,
  options: { ...teamOptions, route: { type: 'string', multiple: true }, restricted: { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const { api, path } = await teamPath(cli);
    const routes: DomainRoute[] = [];
    for (const text of cli.args.strings('route')) routes.push(await parseRoute(cli, api, text));
    const body = { name: cli.args.positionals[0], routes, ...(cli.args.flag('restricted') && { restricted: true }) };
    const domain = await api.answer(api.client.POST('/api/v1/teams/{team}/domains', { params: { path }, body }));
    if (cli.json) return cli.print(domain);
    cli.say(`Added ${domain.name}.\n`);
    showDomain(cli, domain);
  },
};

const show: Command = {
  usage: `svc domains show NAME [--team T] [--json]
  The TXT record to create (_svc.NAME and its token), the verification status, the certificate state and routes.`,
  options: teamOptions,
  positionals: [1, 1],
  async run(cli) {
    const { api, team, path } = await teamPath(cli);
    const domain = await domainNamed(api, team, path, cli.args.positionals[0]);
    if (cli.json) return cli.print(domain);
    showDomain(cli, domain);
  },
};

const remove: Command = {
  usage: "svc domains remove NAME [--team T] [--json]\n  Removes the custom domain: it stops serving at once and its name is free again.",
  options: teamOptions,
  positionals: [1, 1],
  async run(cli) {
    const { api, team, path } = await teamPath(cli);
    const domain = await domainNamed(api, team, path, cli.args.positionals[0]);
    const one = { ...path, domain: domain.id };
    const { etag } = await api.withEtag(api.client.GET('/api/v1/teams/{team}/domains/{domain}', { params: { path: one } }));
    await api.answer(api.client.DELETE('/api/v1/teams/{team}/domains/{domain}', { params: { path: one, header: { 'if-match': etag } } }));
    if (cli.json) cli.print({ name: domain.name, id: domain.id, deleted: true });
    else cli.say(`Removed ${domain.name} from ${team.name}.\n`);
  },
};

export const domainCommands: Record<string, Command> = { list, add, show, remove };
