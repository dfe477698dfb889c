// docker-compose.yml (compose.yaml...) into services: images of known databases and brokers become `managed`
// services, other images `container` services, services built from the repository `steps` services; ports,
// environment, depends_on (-> needs) and bind mounts of the repository carry over. The rest is reported.
import { parse as parseYaml } from 'yaml';
import { addService, envNameOk, templateOf, type Draft, type DraftPort, type DraftService } from './draft.ts';
import { providerOfImage } from './providers.ts';

export const composeFiles = ['compose.yaml', 'compose.yml', 'docker-compose.yaml', 'docker-compose.yml'];

const handled = new Set(['image', 'build', 'command', 'entrypoint', 'ports', 'expose', 'environment', 'depends_on', 'volumes', 'env_file']);
/** Keys that only matter to Docker itself: left out without a word. */
const dockerOnly = new Set(['container_name', 'restart', 'networks', 'hostname', 'stdin_open', 'tty', 'labels', 'logging']);

/** The words of a shell-like command line (`sh -c "a b"` -> sh, -c, a b), as compose splits a string command. */
export function commandWords(command: unknown): string[] | undefined {
  if (Array.isArray(command)) return command.map(String);
  if (typeof command !== 'string') return undefined;
  const words: string[] = [];
  for (const match of command.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) words.push(match[1]?.replace(/\\(.)/g, '$1') ?? match[2] ?? match[3]);
  return words;
}

/** Container ports of compose `ports` and `expose` (`8080:80` -> 80, `127.0.0.1:5432:5432/tcp` -> 5432). */
function containerPorts(service: Record<string, any>, name: string, draft: Draft): number[] {
  const ports: number[] = [];
  for (const entry of [...(service.ports ?? []), ...(service.expose ?? [])]) {
    const text = typeof entry === 'object' && entry !== null ? String(entry.target ?? '') : String(entry);
    const target = text.split('/')[0].split(':').at(-1)!;
    if (/^\d+$/.test(target) && Number(target) >= 1 && Number(target) <= 65535) ports.push(Number(target));
    else draft.unmapped.push(`docker-compose service "${name}": port "${text}" (ranges and variables are not mapped)`);
  }
  return [...new Set(ports)];
}

function environmentOf(service: Record<string, any>, name: string, draft: Draft): Record<string, string> {
  const raw = service.environment ?? {};
  const entries: Array<[string, unknown]> = Array.isArray(raw)
    ? raw.map((item: string) => {
        const [key, ...rest] = String(item).split('=');
        return [key, rest.length ? rest.join('=') : undefined];
      })
    : Object.entries(raw);
  const env: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (!envNameOk(key)) draft.unmapped.push(`docker-compose service "${name}": environment variable ${key} (svc refuses the name)`);
    else if (value === undefined || value === null) draft.unmapped.push(`docker-compose service "${name}": ${key} takes its value from the host; set it with "svc env set ${key}=..." and add it as \${{ env.${key} }}`);
    else {
      const { value: filled, variables, defaults } = templateOf(String(value));
      if (defaults.length) draft.assumptions.push(`${key} of "${name}" is compose's default for ${defaults.join(', ')}; make it \${{ env.NAME }} to take a workspace variable`);
      if (variables.length) draft.assumptions.push(`${key} of "${name}" uses ${variables.join(', ')} from the workspace's variables (svc env set)`);
      env[key] = filled;
    }
  }
  if (service.env_file) draft.unmapped.push(`docker-compose service "${name}": env_file (set those variables with svc env set)`);
  return env;
}

/** Relative bind mounts (`./config/app.toml:/etc/app.toml`) become mounts of /data/app; the rest is reported. */
function mountsOf(service: Record<string, any>, name: string, draft: Draft): Array<{ from: string; to: string }> {
  const mounts: Array<{ from: string; to: string }> = [];
  for (const volume of service.volumes ?? []) {
    const [from, to] = typeof volume === 'string' ? volume.split(':') : [volume?.source, volume?.target];
    if (typeof from === 'string' && /^\.\.?\//.test(from) && typeof to === 'string' && to.startsWith('/')) {
      const relative = from.replace(/^\.\//, '');
      if (relative !== '' && relative !== '.' && !relative.startsWith('..')) mounts.push({ from: relative, to });
      else draft.unmapped.push(`docker-compose service "${name}": volume ${from}:${to} (the whole repository is /data/app already)`);
    } else draft.unmapped.push(`docker-compose service "${name}": volume ${typeof volume === 'string' ? volume : JSON.stringify(volume)} (named volumes: a managed service keeps its own data)`);
  }
  return mounts;
}

function managedService(service: Record<string, any>, name: string, match: NonNullable<ReturnType<typeof providerOfImage>>, draft: Draft): DraftService {
  const env = environmentOf(service, name, draft);
  const config: Record<string, string> = {};
  const pgName = /^[a-z_][a-z0-9_]{0,62}$/;
  if (match.provider === 'postgres') {
    if (env.POSTGRES_DB && pgName.test(env.POSTGRES_DB)) config.database = env.POSTGRES_DB;
    if (env.POSTGRES_USER && pgName.test(env.POSTGRES_USER)) config.user = env.POSTGRES_USER;
  }
  const password = Object.keys(env).find((key) => /PASSWORD/.test(key));
  if (password) draft.assumptions.push(`"${name}" gets a generated password instead of ${password}; other services read it from \${{ services.${name}.dsn }} or .secret`);
  if (service.ports) draft.assumptions.push(`"${name}" listens where svc says (\${{ services.${name}.host }} and .port), not on the compose ports`);
  if (service.volumes) draft.assumptions.push(`"${name}" keeps its data itself; the compose volumes are not used`);
  return { type: 'managed', provider: match.provider, ...(match.version ? { providerVersion: match.version } : {}), ...(Object.keys(config).length ? { config } : {}) };
}

/** Env values naming a managed service by host (`postgres://u:p@db:5432/app`) become its DSN template. */
function linkManaged(env: Record<string, string>, managed: Map<string, string>): Record<string, string> {
  const linked: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    const url = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^:/?#]+)/i.exec(value);
    const target = url ? managed.get(url[1]) : undefined;
    linked[key] = target ? `\${{ services.${target}.dsn }}` : value;
  }
  return linked;
}

/** Reads one compose file's text into the draft. `skip` is the devcontainer's own service (the editor). */
export function readCompose(text: string, file: string, draft: Draft, skip?: string): void {
  const document = parseYaml(text) as { services?: Record<string, Record<string, any>> } | null;
  const services = document?.services ?? {};
  draft.sources.push(file);
  const names = new Map<string, string>(); // compose name -> svc name
  const managed = new Map<string, string>();
  const pending: Array<{ composeName: string; service: Record<string, any> }> = [];
  for (const [composeName, service] of Object.entries(services)) {
    if (composeName === skip) {
      draft.unmapped.push(`${file} service "${composeName}": the devcontainer itself; its tools come from the workspace's base image`);
      continue;
    }
    const match = typeof service.image === 'string' ? providerOfImage(service.image) : undefined;
    if (match) {
      const name = addService(draft, composeName, managedService(service, composeName, match, draft), `${file} service "${composeName}" (image ${service.image})`);
      names.set(composeName, name);
      managed.set(composeName, name);
    } else pending.push({ composeName, service });
  }
  const needsOf: Array<[string, unknown]> = [];
  for (const { composeName, service } of pending) {
    const ports: DraftPort[] = containerPorts(service, composeName, draft).map((port) => ({ port }));
    const env = linkManaged(environmentOf(service, composeName, draft), managed);
    let mapped: DraftService;
    let origin: string;
    if (service.build !== undefined || typeof service.image !== 'string') {
      const words = commandWords(service.command);
      const run = words ? (typeof service.command === 'string' ? service.command : words.join(' ')) : undefined;
      if (!run) draft.unmapped.push(`${file} service "${composeName}": built from a Dockerfile without a command; say in its step how it starts`);
      else draft.assumptions.push(`"${composeName}" runs "${run}" in the repository (/data/app) instead of the image compose builds; prepare must install what the Dockerfile did`);
      mapped = { type: 'steps', steps: [{ run: run ?? `echo "svc init: say how ${composeName} starts (compose built it from a Dockerfile)" >&2; exit 1` }] };
      origin = `${file} service "${composeName}" (built from the repository)`;
    } else {
      const container: Extract<DraftService, { type: 'container' }> = { type: 'container', image: service.image };
      const entrypoint = commandWords(service.entrypoint);
      const command = commandWords(service.command);
      if (entrypoint) container.command = entrypoint;
      if (command) container.args = command;
      const mounts = mountsOf(service, composeName, draft);
      if (mounts.length) container.mounts = mounts;
      mapped = container;
      origin = `${file} service "${composeName}" (image ${service.image})`;
    }
    if (service.build !== undefined && service.volumes) draft.unmapped.push(`${file} service "${composeName}": volumes (the steps run in /data/app, the repository)`);
    if (Object.keys(env).length) mapped.env = env;
    if (ports.length) mapped.ports = ports;
    names.set(composeName, addService(draft, composeName, mapped, origin));
    needsOf.push([composeName, service.depends_on]);
    const ignored = Object.keys(service).filter((key) => !handled.has(key) && !dockerOnly.has(key) && !key.startsWith('x-'));
    if (ignored.length) draft.unmapped.push(`${file} service "${composeName}": ${ignored.join(', ')}`);
  }
  for (const [composeName, dependsOn] of needsOf) {
    const wanted = Array.isArray(dependsOn) ? dependsOn : dependsOn && typeof dependsOn === 'object' ? Object.keys(dependsOn) : [];
    const needs = wanted.map((n) => names.get(String(n))).filter((n): n is string => n !== undefined);
    const service = draft.services.get(names.get(composeName)!)!.service;
    if (needs.length && service.type !== 'managed') service.needs = needs;
  }
}
