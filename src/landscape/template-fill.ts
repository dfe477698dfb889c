// Filling in templates at Plan and Sync from a context: env values, forward targets, managed config strings and
// managed secrets. Secrets without a value are reported together in one missing-secrets problem; a workspace
// variable that is not set is an error of the file (never silently empty text).
import { problem, type Problem, type ProblemFieldError } from '../core/problems.ts';
import type { Segment } from './codes.ts';
import { hasTemplate, parseTemplate, referenceName, type TemplateReference } from './templates.ts';
import type { ConfigValue, Landscape, NormalLandscape } from './types.ts';
import { jsonPointer, mapValues, setOwn } from './yaml-tree.ts';

/** What a managed service offers to templates once Sync has created it. */
export interface ManagedServiceValues {
  host: string;
  port: number;
  /** Connection string with the password. */
  dsn: string;
  /** The password alone. */
  secret: string;
  details: Readonly<Record<string, string | number | boolean>>;
}

export interface TemplateContext {
  workspace: { id: string | number; devDomain: string };
  team: { id: string | number };
  /** Workspace environment variables; `${{ env.K }}` of one that is not set is a missing-variable error. */
  env: Readonly<Record<string, string>>;
  /** Values of the workspace's vault. */
  secrets: Readonly<Record<string, string>>;
  /** Managed services of the landscape by name. */
  services: Readonly<Record<string, ManagedServiceValues>>;
}

export interface FillResult<L> {
  /** The landscape with every template filled in: it holds secret values, so never store it. */
  landscape?: L;
  /**
   * missing-secrets (409) when secrets have no value; invalid-landscape (422) when a workspace variable is not
   * set, a service value is missing or a filled-in forward target is not an http(s) URL. Errors carry JSON
   * Pointers into the file; `placeErrors` adds their lines and columns.
   */
  problem?: Problem;
}

interface Filling {
  context: TemplateContext;
  missing: Map<string, ProblemFieldError[]>;
  unresolved: ProblemFieldError[];
}

/** Fills in the templates of a landscape (as written or in normal form). */
export function fillTemplates<L extends Landscape | NormalLandscape>(landscape: L, context: TemplateContext): FillResult<L> {
  const filling: Filling = { context, missing: new Map(), unresolved: [] };
  const services: Record<string, unknown> = {};
  for (const [name, service] of Object.entries(landscape.services ?? {})) {
    const at = ['services', name];
    if (service.type === 'steps' || service.type === 'container') {
      const env = service.env === undefined ? undefined : mapValues(service.env, (value, key) => fillText(String(value), [...at, 'env', key], filling));
      setOwn(services, name, env === undefined ? { ...service } : { ...service, env });
    } else if (service.type === 'forward') {
      setOwn(services, name, { ...service, target: fillTarget(service.target, [...at, 'target'], filling) });
    } else {
      const config = service.config === undefined ? undefined : (fillConfig(service.config, [...at, 'config'], filling) as Record<string, ConfigValue>);
      const secrets = service.secrets === undefined ? undefined : mapValues(service.secrets, (value, key) => fillText(value, [...at, 'secrets', key], filling));
      setOwn(services, name, { ...service, ...(config && { config }), ...(secrets && { secrets }) });
    }
  }
  if (filling.missing.size > 0) return { problem: missingSecretsProblem(filling.missing) };
  if (filling.unresolved.length > 0) {
    return { problem: problem('invalid-landscape', 422, 'Templates of the landscape cannot be filled in.', { errors: filling.unresolved }) };
  }
  return { landscape: landscape.services === undefined ? landscape : ({ ...landscape, services } as L) };
}

/** Names of the workspace secrets a landscape uses, sorted. */
export function referencedSecrets(landscape: Landscape | NormalLandscape): string[] {
  const names = new Set<string>();
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      if (!hasTemplate(value)) return;
      for (const part of parseTemplate(value).parts) if (typeof part !== 'string' && part.reference.root === 'secrets') names.add(part.reference.name);
    } else if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(collect);
  };
  for (const service of Object.values(landscape.services ?? {})) {
    if (service.type === 'steps' || service.type === 'container') collect(service.env);
    else if (service.type === 'forward') collect(service.target);
    else collect([service.config, service.secrets]);
  }
  return [...names].sort();
}

function fillText(text: string, path: Segment[], filling: Filling): string {
  if (!hasTemplate(text)) return text;
  const parsed = parseTemplate(text);
  if (parsed.error !== undefined) {
    filling.unresolved.push({ pointer: jsonPointer(path), code: parsed.error.code, message: parsed.error.message });
    return text;
  }
  let out = '';
  for (const part of parsed.parts) out += typeof part === 'string' ? part : valueOf(part.reference, path, filling);
  return out;
}

/** A forward target built from templates must still be an http(s) URL once filled in. */
function fillTarget(target: string, path: Segment[], filling: Filling): string {
  const unresolved = filling.unresolved.length;
  const filled = fillText(target, path, filling);
  if (filled === target || filling.missing.size > 0 || filling.unresolved.length > unresolved) return filled;
  let url: URL | undefined;
  try {
    url = new URL(filled);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    filling.unresolved.push({ pointer: jsonPointer(path), code: 'invalid-url', message: `the target filled in is not an http(s) URL: ${JSON.stringify(filled.slice(0, 200))}` });
  }
  return filled;
}

function valueOf(reference: TemplateReference, path: Segment[], filling: Filling): string {
  const { context } = filling;
  switch (reference.root) {
    case 'workspace':
      return String(context.workspace[reference.field]);
    case 'team':
      return String(context.team.id);
    case 'env': {
      if (Object.hasOwn(context.env, reference.name)) return context.env[reference.name];
      const message = `\${{ env.${reference.name} }} has no value: the workspace has no variable ${reference.name}; set it (it may be empty) and plan again`;
      filling.unresolved.push({ pointer: jsonPointer(path), code: 'missing-variable', subject: reference.name, message });
      return '';
    }
    case 'secrets': {
      if (Object.hasOwn(context.secrets, reference.name)) return context.secrets[reference.name];
      const uses = filling.missing.get(reference.name) ?? [];
      uses.push({ pointer: jsonPointer(path), code: 'missing-secret', subject: reference.name, message: `secret ${reference.name} has no value` });
      filling.missing.set(reference.name, uses);
      return '';
    }
    case 'services': {
      const service = Object.hasOwn(context.services, reference.service) ? context.services[reference.service] : undefined;
      const value = service === undefined ? undefined : reference.field === 'details' ? (Object.hasOwn(service.details, reference.detail) ? service.details[reference.detail] : undefined) : service[reference.field];
      if (value !== undefined) return String(value);
      const name = referenceName(reference);
      filling.unresolved.push({ pointer: jsonPointer(path), code: 'template-unknown', subject: reference.service, message: `\${{ ${name} }} has no value: managed service ${reference.service} ${service === undefined ? 'is not ready' : 'has no such detail'}` });
      return '';
    }
  }
}

function fillConfig(value: ConfigValue, path: Segment[], filling: Filling): ConfigValue {
  if (typeof value === 'string') return fillText(value, path, filling);
  if (Array.isArray(value)) return value.map((item, index) => fillConfig(item, [...path, index], filling));
  if (value !== null && typeof value === 'object') return mapValues(value, (inner, key) => fillConfig(inner, [...path, key], filling));
  return value;
}

function missingSecretsProblem(missing: Map<string, ProblemFieldError[]>): Problem {
  const names = [...missing.keys()].sort();
  const detail = `The landscape uses ${names.length === 1 ? 'a secret that has' : 'secrets that have'} no value: ${names.join(', ')}. Set ${names.length === 1 ? 'it' : 'them'} in the workspace's vault and Sync again.`;
  return problem('missing-secrets', 409, detail, { errors: names.flatMap((name) => missing.get(name)!), extra: { secrets: names } });
}

