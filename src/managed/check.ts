// The `managed` services of a landscape file checked against the catalog (spec 2.8 "managed service", 9 item 5):
// the provider, its version, the plan, resources within the plan's bounds, config against the provider's schema
// and, against the deployed landscape, the update constraints. Pure, so that it runs in the landscape-check
// worker; each error has its place in the file like the file's own errors.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { hasTemplate, listWords, placeErrors, quote, sizeInMiB, type ConfigValue, type Landscape, type LandscapeError, type LandscapeErrorCode, type ManagedService, type NormalLandscape, type NormalManagedService } from '../landscape/index.ts';
import { findProvider, type Catalog, type Provider } from './catalog.ts';
import type { ManagedPlanDefinition, ResourceDefinition } from './providers.ts';

interface Unplaced {
  pointer: string;
  message: string;
  code: LandscapeErrorCode;
  subject: string;
}

/**
 * The catalog errors of `landscape` (read from `text`), placed and in file order; [] when it has none. `previous`
 * is the landscape the instances were last synced to (paused ones too) and `versions` the versions the instances
 * run, by name: the update constraints hold against them.
 */
export function catalogErrors(
  text: string, landscape: Landscape, previous: NormalLandscape | null, catalog: Catalog, versions: Readonly<Record<string, string>> = {},
): LandscapeError[] {
  const found: Unplaced[] = [];
  for (const [name, service] of Object.entries(landscape.services ?? {})) {
    if (service.type !== 'managed') continue;
    const before = previous?.services[name];
    // Another provider replaces the instance (its data goes, plan.ts): the new one is checked as created afresh.
    const existing = before?.type === 'managed' && before.provider === service.provider ? before : undefined;
    const created = existing && { ...existing, providerVersion: Object.hasOwn(versions, name) ? versions[name] : existing.providerVersion };
    found.push(...checkManaged(name, service, created, catalog));
  }
  // Placing reads the file's YAML again: only a file with errors pays for it.
  if (found.length === 0) return [];
  const placed = placeErrors(text, found).map((at, i): LandscapeError => ({ ...found[i], line: at.line!, column: at.column! }));
  return placed.sort((a, b) => a.line - b.line || a.column - b.column);
}

function checkManaged(name: string, service: ManagedService, before: NormalManagedService | undefined, catalog: Catalog): Unplaced[] {
  const at = (key: string) => `/services/${name}/${key}`;
  const error = (pointer: string, code: LandscapeErrorCode, message: string): Unplaced => ({ pointer, code, message, subject: name });
  const provider = findProvider(catalog, service.provider);
  if (!provider) {
    const names = catalog.providers.map((p) => p.name);
    return [error(at('provider'), 'unknown-provider', `provider ${quote(service.provider)} of service ${name} is not in this installation's catalog; choose ${listWords(names)}`)];
  }
  const errors = [...versionErrors(name, service, before, provider, error)];
  const plan = provider.plans.find((p) => p.id === (service.plan ?? provider.defaultPlan));
  if (!plan) {
    const ids = provider.plans.map((p) => p.id);
    errors.push(error(at('plan'), 'unknown-plan', `plan ${quote(service.plan!)} of service ${name} is not a plan of provider ${provider.name}; choose ${listWords(ids)}`));
  } else {
    errors.push(...resourceErrors(name, service, before, provider, plan, error));
  }
  errors.push(...configErrors(name, service, before, provider, error));
  errors.push(...secretErrors(name, service, provider, error));
  return errors;
}

/** Secrets the provider does not declare (a provider's secret the file leaves out is generated: generated-secrets.ts). */
function secretErrors(name: string, service: ManagedService, provider: Provider, error: MakeError): Unplaced[] {
  const declared = provider.secrets.map((s) => s.name);
  return Object.keys(service.secrets ?? {})
    .filter((key) => !declared.includes(key))
    .map((key) => error(`/services/${name}/secrets/${key}`, 'unknown-secret', `secret ${key} of service ${name} is not one ${provider.name} takes; choose ${listWords(declared)}`));
}

type MakeError = (pointer: string, code: LandscapeErrorCode, message: string) => Unplaced;

function versionErrors(name: string, service: ManagedService, before: NormalManagedService | undefined, provider: Provider, error: MakeError): Unplaced[] {
  const pointer = `/services/${name}/providerVersion`;
  const version = service.providerVersion;
  const enabled = provider.versionStates.filter((v) => v.enabled).map((v) => v.version);
  if (version === undefined) {
    if (before || provider.defaultVersion) return [];
    return [error(`/services/${name}/provider`, 'unknown-version', `provider ${provider.name} of service ${name} has no enabled version on this installation`)];
  }
  if (!provider.versions.includes(version)) {
    return [error(pointer, 'unknown-version', `providerVersion ${quote(version)} of service ${name} is not a version of ${provider.name}; choose ${listWords(enabled)}`)];
  }
  // An instance keeps the version it was created with (spec 9 item 5): no upgrade by editing the file.
  if (before?.providerVersion !== undefined && before.providerVersion !== version) {
    return [error(pointer, 'update-forbidden', `service ${name} was created with ${provider.name} ${before.providerVersion}; an instance keeps its version, so providerVersion cannot become ${quote(version)}`)];
  }
  if (!before && !enabled.includes(version)) {
    return [error(pointer, 'unknown-version', `providerVersion ${quote(version)} of service ${name} is disabled on this installation; choose ${listWords(enabled)}`)];
  }
  return [];
}

function resourceErrors(name: string, service: ManagedService, before: NormalManagedService | undefined, provider: Provider, plan: ManagedPlanDefinition, error: MakeError): Unplaced[] {
  const errors: Unplaced[] = [];
  const resources = service.resources ?? {};
  for (const [key, raw] of Object.entries(resources)) {
    const pointer = `/services/${name}/resources/${key}`;
    const definition = provider.resources.find((r) => r.name === key);
    if (!definition) {
      errors.push(error(pointer, 'unknown-resource', `resource ${key} of service ${name} is not one ${provider.name} has; choose ${listWords(provider.resources.map((r) => r.name))}`));
      continue;
    }
    if (typeof raw === 'string' && definition.unit !== 'MiB') {
      errors.push(error(pointer, 'type', `resource ${key} of service ${name} is ${quote(raw)}, a size; ${key} is ${unitWords(definition)}, a plain number`));
      continue;
    }
    const value = sizeInMiB(raw)!;
    const { min, max } = plan.resources[key];
    if (value < min || value > max) {
      errors.push(error(pointer, 'out-of-range', `resource ${key} of service ${name} is ${amount(value, definition)}; plan ${plan.id} of ${provider.name} allows ${amount(min, definition)} to ${amount(max, definition)}`));
    }
  }
  if (!before) return errors;
  const previousPlan = provider.plans.find((p) => p.id === (before.plan ?? provider.defaultPlan));
  for (const definition of provider.resources.filter((r) => r.update === 'grow')) {
    const now = resources[definition.name] === undefined ? plan.resources[definition.name].value : sizeInMiB(resources[definition.name]);
    const then = before.resources[definition.name] ?? previousPlan?.resources[definition.name].value;
    if (now === undefined || then === undefined || now >= then) continue;
    // Without an override in the file the place is the nearest enclosing key (resources, or the service).
    const pointer = `/services/${name}/resources/${definition.name}`;
    errors.push(error(pointer, 'update-forbidden', `${definition.name} of service ${name} would shrink from ${amount(then, definition)} to ${amount(now, definition)}; it may only grow`));
  }
  return errors;
}

function unitWords(definition: ResourceDefinition): string {
  return definition.unit === 'millicpu' ? 'thousandths of a core' : 'a count';
}

function amount(value: number, definition: ResourceDefinition): string {
  return definition.unit === 'MiB' ? `${value} MiB` : String(value);
}

// verbose: a pattern error carries its schema, whose patternErrorMessage says the rule in words.
const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const validators = new Map<string, ValidateFunction>();

function configErrors(name: string, service: ManagedService, before: NormalManagedService | undefined, provider: Provider, error: MakeError): Unplaced[] {
  const base = `/services/${name}/config`;
  const config = service.config ?? {};
  let validate = validators.get(provider.name);
  if (!validate) validators.set(provider.name, (validate = ajv.compile(provider.config)));
  const errors: Unplaced[] = [];
  // Text with templates is filled in at Sync; its filled value is checked by the provider then.
  if (!validate(withoutTemplates(config))) {
    for (const problem of validate.errors ?? []) errors.push(error(...configError(base, name, provider, problem)));
  }
  if (!before) return errors;
  for (const [key, property] of Object.entries(provider.config.properties)) {
    if (property['x-update'] !== 'never' || JSON.stringify(config[key]) === JSON.stringify(before.config[key])) continue;
    errors.push(error(`${base}/${key}`, 'update-forbidden', `config ${key} of service ${name} is fixed when the instance is created; it cannot change from ${shown(before.config[key])} to ${shown(config[key])}`));
  }
  return errors;
}

function configError(base: string, name: string, provider: Provider, problem: ErrorObject): [string, LandscapeErrorCode, string] {
  if (problem.keyword === 'additionalProperties') {
    const key = String((problem.params as { additionalProperty: string }).additionalProperty);
    return [`${base}/${key}`, 'invalid-config', `config of service ${name} has no setting ${quote(key)}; ${provider.name} takes ${listWords(Object.keys(provider.config.properties))}`];
  }
  const key = problem.instancePath.slice(1).replace(/\//g, '.');
  const words = problem.keyword === 'pattern' ? (problem.parentSchema as { patternErrorMessage?: string } | undefined)?.patternErrorMessage : undefined;
  if (words) return [`${base}${problem.instancePath}`, 'invalid-config', `config ${key} of service ${name} ${words}, not ${quote(String(problem.data))}`];
  return [`${base}${problem.instancePath}`, 'invalid-config', `config ${key} of service ${name} ${problem.message}${problem.keyword === 'enum' ? `: ${listWords((problem.params as { allowedValues: string[] }).allowedValues)}` : ''}`];
}

function withoutTemplates(config: Record<string, ConfigValue>): Record<string, ConfigValue> {
  return Object.fromEntries(Object.entries(config).filter(([, value]) => !(typeof value === 'string' && hasTemplate(value))));
}

function shown(value: ConfigValue | undefined): string {
  return value === undefined ? 'its default' : JSON.stringify(value);
}

/** What of an instance's deployed settings the health check holds against the catalog of now. */
export interface StoredSettings {
  name: string;
  provider: string;
  /** The plan it was last synced with and the values it got then (the plan's with the file's overrides). */
  plan: string;
  resources: Record<string, number>;
  /** The `config` of the deployed file (templates are filled in at Sync and not checked here). */
  config: Record<string, ConfigValue>;
}

/**
 * Why the catalog of now no longer accepts an instance's deployed settings (an operator's plans file or a catalog
 * change since its last Sync): its plan is gone, a value is out of the plan's bounds, its config breaks the schema.
 * Undefined when they are accepted. Its version is judged apart (isVersionEnabled).
 */
export function storedSettingsRefusal(catalog: Catalog, stored: StoredSettings): string | undefined {
  const provider = findProvider(catalog, stored.provider);
  if (!provider) return `provider ${quote(stored.provider)} of service ${stored.name} is not in this installation's catalog any more`;
  const error: MakeError = (pointer, code, message) => ({ pointer, code, message, subject: stored.name });
  const plan = provider.plans.find((p) => p.id === stored.plan);
  const errors: Unplaced[] = [];
  if (!plan) {
    errors.push(error('', 'unknown-plan', `plan ${quote(stored.plan)} of service ${stored.name} is not a plan of provider ${provider.name} any more; choose ${listWords(provider.plans.map((p) => p.id))}`));
  } else {
    const service: ManagedService = { type: 'managed', provider: provider.name, plan: plan.id, resources: stored.resources };
    errors.push(...resourceErrors(stored.name, service, undefined, provider, plan, error));
  }
  errors.push(...configErrors(stored.name, { type: 'managed', provider: provider.name, config: stored.config }, undefined, provider, error));
  return errors.length === 0 ? undefined : errors.map((e) => e.message).join('; ');
}
