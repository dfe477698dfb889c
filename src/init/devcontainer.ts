// .devcontainer/devcontainer.json (JSONC, read with jsonc-parser): create commands -> prepare, forwardPorts ->
// ports of the app's service, containerEnv/remoteEnv -> its env, database features -> managed services, a
// compose-based devcontainer -> its compose file without the devcontainer's own service.
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { addService, envNameOk, templateOf, type Draft, type DraftStep } from './draft.ts';
import { providerOfFeature } from './providers.ts';

export const devcontainerFiles = ['.devcontainer/devcontainer.json', '.devcontainer.json'];

export interface Devcontainer {
  /** Ports for the service that runs the app (mapped when the repository says how to start it). */
  ports: number[];
  env: Record<string, string>;
  /** The compose file (relative to the repository) and the devcontainer's own service in it. */
  compose?: { files: string[]; service?: string };
}

const handled = new Set(['name', 'image', 'features', 'forwardPorts', 'appPort', 'containerEnv', 'remoteEnv', 'onCreateCommand', 'updateContentCommand',
  'postCreateCommand', 'dockerComposeFile', 'service', 'workspaceFolder', '$schema']);

/** A lifecycle command as steps: a string, an array (one command), or an object of named commands. */
function stepsOf(command: unknown, key: string): DraftStep[] {
  if (typeof command === 'string') return [{ name: key, run: command }];
  if (Array.isArray(command)) return [{ name: key, run: command.map((word) => (/^[A-Za-z0-9_./:=-]+$/.test(String(word)) ? String(word) : `'${String(word).replace(/'/g, `'\\''`)}'`)).join(' ') }];
  if (command && typeof command === 'object') return Object.entries(command).flatMap(([name, value]) => stepsOf(value, name).map((step) => ({ ...step, name: name.slice(0, 100) })));
  return [];
}

export function readDevcontainer(text: string, file: string, draft: Draft): Devcontainer {
  const errors: ParseError[] = [];
  const config = (parseJsonc(text, errors, { allowTrailingComma: true }) ?? {}) as Record<string, any>;
  if (errors.length) throw new Error(`${file} is not valid JSONC: ${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}`);
  draft.sources.push(file);
  for (const key of ['onCreateCommand', 'updateContentCommand', 'postCreateCommand']) draft.prepare.push(...stepsOf(config[key], key));

  const ports: number[] = [];
  for (const port of [...(config.forwardPorts ?? []), ...[config.appPort ?? []].flat()]) {
    const number = typeof port === 'number' ? port : Number(String(port).split(':').at(-1));
    if (Number.isInteger(number) && number >= 1 && number <= 65535) ports.push(number);
    else draft.unmapped.push(`${file}: port "${port}" (only ports of this workspace are mapped)`);
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...(config.containerEnv ?? {}), ...(config.remoteEnv ?? {}) })) {
    if (!envNameOk(key)) draft.unmapped.push(`${file}: environment variable ${key} (svc refuses the name)`);
    else env[key] = templateOf(String(value)).value;
  }
  if (Object.keys(env).length) draft.assumptions.push(`containerEnv reaches the services; prepare sees only the workspace's variables (svc env set ${Object.keys(env)[0]}=...)`);

  if (typeof config.image === 'string') draft.unmapped.push(`${file}: image ${config.image} is the editor's environment: pick the workspace's base image when you create it (svc ws create --base-image IMAGE)`);
  if (config.build) draft.unmapped.push(`${file}: build (a Dockerfile for the editor): svc builds no images; pick the workspace's base image`);
  for (const [feature, options] of Object.entries((config.features ?? {}) as Record<string, unknown>)) {
    const match = providerOfFeature(feature);
    if (match) addService(draft, match.provider, { type: 'managed', provider: match.provider }, `${file} feature ${feature}`);
    else draft.unmapped.push(`${file}: feature ${feature}${options && typeof options === 'object' && Object.keys(options).length ? ` ${JSON.stringify(options)}` : ''} (tools come from the base image, or install them in prepare)`);
  }
  const ignored = Object.keys(config).filter((key) => !handled.has(key) && key !== 'build');
  if (ignored.length) draft.unmapped.push(`${file}: ${ignored.join(', ')}`);

  const composeFile = config.dockerComposeFile;
  const compose = composeFile
    ? { files: [composeFile].flat().map((f: string) => joinRelative(file, f)), service: typeof config.service === 'string' ? config.service : undefined }
    : undefined;
  return { ports, env, compose };
}

/** `.devcontainer/devcontainer.json` + `../docker-compose.yml` -> `docker-compose.yml`. */
function joinRelative(from: string, relative: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const part of relative.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
