// `svc init`'s core: reads what a repository already says about how it runs (devcontainer, compose, Procfile,
// .gitpod.yml, package.json) into one draft, and writes it as a commented svc.yml (render.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { composeFiles, readCompose } from './compose.ts';
import { devcontainerFiles, readDevcontainer, type Devcontainer } from './devcontainer.ts';
import { emptyDraft, type Draft, type DraftService } from './draft.ts';
import { readGitpod } from './gitpod.ts';
import { readNodePackage } from './node-package.ts';
import { readProcfile } from './procfile.ts';

export { renderDraft } from './render.ts';
export type { Draft } from './draft.ts';

/** Every file svc init reads, in the order it looks for them. */
export const initSources = [...devcontainerFiles, ...composeFiles, 'Procfile', '.gitpod.yml', 'package.json'];

async function readIfPresent(directory: string, file: string): Promise<string | undefined> {
  return readFile(path.join(directory, file), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'EISDIR') return undefined;
    throw error;
  });
}

const runsCode = (service: DraftService) => service.type === 'steps';
const managedPorts: Record<string, number> = { postgres: 5432, redis: 6379, nats: 4222 };

/** The devcontainer's forwarded ports and environment go to the services that run the repository's code. */
function applyDevcontainer(draft: Draft, devcontainer: Devcontainer): void {
  const entries = [...draft.services.entries()];
  const taken = new Set(entries.flatMap(([, { service }]) => (service.type === 'managed' ? [] : (service.ports ?? []).map((p) => p.port))));
  const app = entries.find(([, { service }]) => runsCode(service));
  for (const port of devcontainer.ports) {
    const managed = entries.find(([, { service }]) => service.type === 'managed' && managedPorts[service.provider] === port);
    if (managed) draft.assumptions.push(`forwarded port ${port} is "${managed[0]}": reach it with svc port-forward`);
    else if (taken.has(port)) continue;
    else if (app && app[1].service.type === 'steps') (app[1].service.ports ??= []).push({ port });
    else draft.unmapped.push(`forwarded port ${port}: no service of the file runs the repository's code to serve it`);
  }
  if (Object.keys(devcontainer.env).length === 0) return;
  const codeServices = entries.filter(([, { service }]) => runsCode(service));
  for (const [, { service }] of codeServices) if (service.type === 'steps') service.env = { ...devcontainer.env, ...service.env };
  if (codeServices.length === 0) draft.unmapped.push(`containerEnv ${Object.keys(devcontainer.env).join(', ')}: no service runs the repository's code (svc env set for prepare)`);
}

/** The dev URL (`/`) goes to the web-looking service with a port, else the first service with one. */
function routeDevUrl(draft: Draft): void {
  const withPorts = [...draft.services.entries()].filter(([, { service }]) => service.type !== 'managed' && service.ports?.length);
  const chosen = withPorts.find(([name]) => /^(web|app|frontend|ui|site|server)$/.test(name)) ?? withPorts[0];
  if (!chosen || chosen[1].service.type === 'managed') return;
  chosen[1].service.ports![0].routes = [{ path: '/' }];
}

/** Reads the repository in `directory`; a draft with no sources means none of `initSources` was there. */
export async function draftFromRepository(directory: string): Promise<Draft> {
  const draft = emptyDraft();
  const present = new Map<string, string>();
  for (const file of [...initSources, 'package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'server.js']) {
    const text = await readIfPresent(directory, file);
    if (text !== undefined) present.set(file, text);
  }
  let devcontainer: Devcontainer | undefined;
  const devcontainerFile = devcontainerFiles.find((file) => present.has(file));
  if (devcontainerFile) devcontainer = readDevcontainer(present.get(devcontainerFile)!, devcontainerFile, draft);
  const composeOfDevcontainer = devcontainer?.compose?.files ?? [];
  for (const file of composeOfDevcontainer) {
    const text = present.get(file) ?? (await readIfPresent(directory, file));
    if (text === undefined) draft.unmapped.push(`${devcontainerFile}: dockerComposeFile ${file} is not in the repository`);
    else readCompose(text, file, draft, devcontainer?.compose?.service);
  }
  const rootCompose = composeFiles.find((file) => present.has(file));
  if (rootCompose && !composeOfDevcontainer.includes(rootCompose)) readCompose(present.get(rootCompose)!, rootCompose, draft);
  if (present.has('Procfile')) readProcfile(present.get('Procfile')!, 'Procfile', draft);
  if (present.has('.gitpod.yml')) readGitpod(present.get('.gitpod.yml')!, '.gitpod.yml', draft);
  if (present.has('package.json')) {
    const hasCodeService = [...draft.services.values()].some(({ service }) => runsCode(service));
    readNodePackage(present.get('package.json')!, 'package.json', new Set(present.keys()), draft, !hasCodeService);
  }
  if (devcontainer) applyDevcontainer(draft, devcontainer);
  routeDevUrl(draft);
  return draft;
}
