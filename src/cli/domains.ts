// `svc domains list|add|show|set|remove|check|route-add|route-remove|cert-upload|cert-remove`: a team's custom
// domains (docs/domains.md). A domain is named by its name on the command line and looked up among the team's;
// `show` prints the TXT record to create and where verification and the certificate stand. Changes read the domain
// with its ETag and send it back in If-Match, so a change made meanwhile by someone else is refused (412), not lost.
import { readFile } from 'node:fs/promises';
import { certificateLabels, verificationLabels, type Domain, type DomainRoute, type paths, type Team } from '../../sdk/src/index.ts';
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

/** The domain NAME as read now, and its ETag for If-Match. */
async function readNamed(cli: Cli) {
  const { api, team, path } = await teamPath(cli);
  const found = await domainNamed(api, team, path, cli.args.positionals[0]);
  const one = { ...path, domain: found.id };
  const { body, etag } = await api.withEtag(api.client.GET('/api/v1/teams/{team}/domains/{domain}', { params: { path: one } }));
  return { api, team, one, domain: body, etag };
}

type DomainChange = NonNullable<paths['/api/v1/teams/{team}/domains/{domain}']['patch']['requestBody']>['content']['application/json'];

/** Sends a change of the domain with the If-Match of the read. */
function patchDomain(api: Api, one: { team: number; domain: string }, etag: string, body: DomainChange): Promise<Domain> {
  return api.answer(api.client.PATCH('/api/v1/teams/{team}/domains/{domain}', { params: { path: one, header: { 'if-match': etag } }, body }));
}

/** Sends a change of the domain with If-Match and prints the changed domain. */
async function change(cli: Cli, body: DomainChange, done: (d: Domain) => string): Promise<void> {
  const { api, one, etag } = await readNamed(cli);
  const changed = await patchDomain(api, one, etag, body);
  if (cli.json) return cli.print(changed);
  cli.say(`${done(changed)}\n`);
  showDomain(cli, changed);
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

const set: Command = {
  usage: `svc domains set NAME [--timeout SECONDS] [--body-limit BYTES] [--restricted true|false] [--team T] [--json]
  Changes how the domain serves: seconds a service may take before the 504 page, the largest request body before
  the 413 page, and whether requests need the team's credentials.`,
  options: { ...teamOptions, timeout: { type: 'string' }, 'body-limit': { type: 'string' }, restricted: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const restricted = cli.args.string('restricted');
    if (restricted !== undefined && restricted !== 'true' && restricted !== 'false') throw usageError('--restricted takes true or false');
    const body = {
      ...(cli.args.string('timeout') !== undefined && { timeout_seconds: cli.args.integer('timeout', 1, 3600) }),
      ...(cli.args.string('body-limit') !== undefined && { body_limit_bytes: cli.args.integer('body-limit', 1, 2 ** 40) }),
      ...(restricted !== undefined && { restricted: restricted === 'true' }),
    };
    if (Object.keys(body).length === 0) throw usageError('give --timeout, --body-limit or --restricted');
    await change(cli, body, (d) => `Changed ${d.name}.`);
  },
};

const routeAdd: Command = {
  usage: `svc domains route-add NAME PATH=WS[:SERVICE[:PORT]] [--strip] [--team T] [--json]
  Adds a route to the domain (or replaces the route of the same path): the path prefix goes to the workspace's dev
  URL, or to one of its services and port. --strip removes the prefix before the request goes on.`,
  options: { ...teamOptions, strip: { type: 'boolean' } },
  positionals: [2, 2],
  async run(cli) {
    const { api, one, domain, etag } = await readNamed(cli);
    const route = { ...(await parseRoute(cli, api, cli.args.positionals[1])), strip: cli.args.flag('strip') };
    const routes = [...domain.routes.filter((r) => r.path !== route.path), route];
    const changed = await patchDomain(api, one, etag, { routes });
    if (cli.json) return cli.print(changed);
    cli.say(`${domain.name}: ${routeText(route)}\n`);
    showDomain(cli, changed);
  },
};

const routeRemove: Command = {
  usage: "svc domains route-remove NAME PATH [--team T] [--json]\n  Removes the domain's route of the path prefix PATH.",
  options: teamOptions,
  positionals: [2, 2],
  async run(cli) {
    const { api, one, domain, etag } = await readNamed(cli);
    const wanted = cli.args.positionals[1];
    if (!domain.routes.some((r) => r.path === wanted)) {
      throw notFoundHere(`${domain.name} has no route ${wanted} (its routes: ${domain.routes.map((r) => r.path).join(', ') || 'none'}).`);
    }
    const changed = await patchDomain(api, one, etag, { routes: domain.routes.filter((r) => r.path !== wanted) });
    if (cli.json) return cli.print(changed);
    cli.say(`Removed the route ${wanted} of ${domain.name}.\n`);
    showDomain(cli, changed);
  },
};

const check: Command = {
  usage: `svc domains check NAME [--no-wait] [--team T] [--json]
  Checks the TXT record _svc.NAME again now and waits for the outcome (--no-wait: only asks for the check).`,
  options: { ...teamOptions, 'no-wait': { type: 'boolean' } },
  positionals: [1, 1],
  async run(cli) {
    const { api, one } = await readNamed(cli);
    let domain = await api.answer(api.client.POST('/api/v1/teams/{team}/domains/{domain}/check', { params: { path: one } }));
    // The check asked for is due at once (next_check_at); once done, the next one is scheduled later.
    const asked = domain.verification.next_check_at;
    const deadline = Date.now() + 60_000;
    while (!cli.args.flag('no-wait') && (domain.verification.status === 'checking' || domain.verification.next_check_at === asked)) {
      if (Date.now() > deadline) throw new Error(`${domain.name} is still being checked after a minute; see svc domains show ${domain.name}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      domain = await api.answer(api.client.GET('/api/v1/teams/{team}/domains/{domain}', { params: { path: one } }));
    }
    if (cli.json) return cli.print(domain);
    showDomain(cli, domain);
  },
};

const certUpload: Command = {
  usage: `svc domains cert-upload NAME --cert FILE --key FILE [--team T] [--json]
  Uploads the domain's own certificate (PEM, the leaf first, then its chain) and unencrypted private key: the
  installation serves it and no longer issues one. Refused (422) when the key does not match, the certificate does
  not name the domain, its chain is out of order, or it is not valid now.`,
  options: { ...teamOptions, cert: { type: 'string' }, key: { type: 'string' } },
  positionals: [1, 1],
  async run(cli) {
    const certFile = cli.args.string('cert');
    const keyFile = cli.args.string('key');
    if (!certFile || !keyFile) throw usageError('give --cert FILE and --key FILE');
    const read = (file: string) => readFile(file, 'utf8').catch((error: Error) => {
      throw usageError(`cannot read ${file}: ${error.message}`);
    });
    const body = { certificate: await read(certFile), private_key: await read(keyFile) };
    const { api, one } = await readNamed(cli);
    const domain = await api.answer(api.client.PUT('/api/v1/teams/{team}/domains/{domain}/certificate', { params: { path: one }, body }));
    if (cli.json) return cli.print(domain);
    cli.say(`Uploaded the certificate of ${domain.name}.\n`);
    showDomain(cli, domain);
  },
};

const certRemove: Command = {
  usage: "svc domains cert-remove NAME [--team T] [--json]\n  Removes the uploaded certificate: the installation manages the domain's certificate again.",
  options: teamOptions,
  positionals: [1, 1],
  async run(cli) {
    const { api, one } = await readNamed(cli);
    const domain = await api.answer(api.client.DELETE('/api/v1/teams/{team}/domains/{domain}/certificate', { params: { path: one } }));
    if (cli.json) return cli.print(domain);
    cli.say(`Removed the uploaded certificate of ${domain.name}.\n`);
    showDomain(cli, domain);
  },
};

export const domainCommands: Record<string, Command> = {
  list,
  add,
  show,
  set,
  remove,
  check,
  'route-add': routeAdd,
  'route-remove': routeRemove,
  'cert-upload': certUpload,
  'cert-remove': certRemove,
};
