// The catalog of this installation (GET /providers, GET /plans): the providers of managed services with the
// versions the operator left enabled, and every plan, of kind `managed` (a provider's) and of kind `service`
// (steps and container services). Pure: the API and the landscape-check worker build it from the same settings.
import { ConfigError } from '../core/config.ts';
import { builtInPlans, type InstallationPlans } from '../capacity/plans.ts';
import type { Availability } from '../landscape/index.ts';
import { providerDefinitions, type ProviderDefinition, type ResourceBounds } from './providers.ts';

export interface ProviderVersion {
  version: string;
  enabled: boolean;
}

export interface Provider extends ProviderDefinition {
  /** Every version of the definition, each enabled unless the operator disabled it. */
  versionStates: ProviderVersion[];
  /** The newest enabled version; undefined when all are disabled. */
  defaultVersion?: string;
}

export type Plan =
  | { kind: 'managed'; id: string; provider: string; title: string; default: boolean; resources: Record<string, ResourceBounds> }
  | { kind: 'service'; id: string; provider: null; title: string; default: boolean; cpuMillis: number; memoryMiB: number; maxReplicas: number; availability: Availability }
  | { kind: 'workspace'; id: string; provider: null; title: string; default: boolean; cpuMillis: number; memoryMiB: number; storageGib: number };

export interface Catalog {
  providers: Provider[];
  plans: Plan[];
}

/** A `--managed-disable` entry names no provider version of the catalog. */
export class CatalogSettingError extends ConfigError {}

/**
 * The catalog with the versions in `disabled` (`provider:version`) turned off. Workspace and service plans are the
 * installation's (`plans`, src/capacity), so that what the file's checks accept and what the API lists agree.
 */
export function managedCatalog(disabled: readonly string[] = [], plans: InstallationPlans = builtInPlans): Catalog {
  for (const entry of disabled) {
    const [name, version] = entry.split(':');
    if (!providerDefinitions.some((p) => p.name === name && p.versions.includes(version))) {
      throw new CatalogSettingError(`--managed-disable: "${entry}" is not a provider version of the catalog (${allVersions().join(', ')})`);
    }
  }
  const unknown = unknownProviders(plans);
  if (unknown.length > 0) throw new CatalogSettingError(`plans file: managed.${unknown[0]} is not a provider of the catalog (${providerDefinitions.map((p) => p.name).join(', ')})`);
  const providers = providerDefinitions.map((defined): Provider => {
    const definition = withOperatorPlans(defined, plans.managed?.[defined.name]);
    const versionStates = definition.versions.map((version) => ({ version, enabled: !disabled.includes(`${definition.name}:${version}`) }));
    return { ...definition, versionStates, defaultVersion: versionStates.filter((v) => v.enabled).at(-1)?.version };
  });
  return { providers, plans: [...installationPlans(plans), ...providers.flatMap(managedPlans)] };
}

/**
 * The provider with the plans of the operator's plans file instead of its own, when the file has a section for it:
 * each plan must give a value and bounds for exactly the provider's resources (a CatalogSettingError otherwise).
 */
function withOperatorPlans(definition: ProviderDefinition, section: NonNullable<InstallationPlans['managed']>[string] | undefined): ProviderDefinition {
  if (!section) return definition;
  const names = definition.resources.map((r) => r.name);
  for (const plan of section.plans) {
    const keys = Object.keys(plan.resources);
    const missing = names.filter((name) => !keys.includes(name));
    const unknown = keys.filter((key) => !names.includes(key));
    if (missing.length + unknown.length > 0) {
      const what = [missing.length > 0 && `lacks ${missing.join(', ')}`, unknown.length > 0 && `has no resource ${unknown.join(', ')} of ${definition.name}`].filter(Boolean).join(' and ');
      throw new CatalogSettingError(`plans file: managed.${definition.name}.plans.${plan.id} ${what} (${definition.name} has ${names.join(', ')})`);
    }
  }
  return { ...definition, plans: section.plans, defaultPlan: section.default };
}

function unknownProviders(plans: InstallationPlans): string[] {
  return Object.keys(plans.managed ?? {}).filter((name) => !providerDefinitions.some((p) => p.name === name));
}

function allVersions(): string[] {
  return providerDefinitions.flatMap((p) => p.versions.map((v) => `${p.name}:${v}`));
}

function installationPlans(plans: InstallationPlans): Plan[] {
  return [
    ...plans.workspace.plans.map((plan): Plan => ({ ...plan, provider: null, default: plan.id === plans.workspace.default })),
    ...plans.service.plans.map((plan): Plan => ({ ...plan, provider: null, default: plan.id === plans.service.default })),
  ];
}

function managedPlans(provider: Provider): Plan[] {
  return provider.plans.map((plan) => ({ kind: 'managed', id: plan.id, provider: provider.name, title: plan.title, default: plan.id === provider.defaultPlan, resources: plan.resources }));
}

export function findProvider(catalog: Catalog, name: string): Provider | undefined {
  return catalog.providers.find((p) => p.name === name);
}

/** Whether `version` of `provider` is in the catalog and enabled (an instance of another one is invalid-provider). */
export function isVersionEnabled(catalog: Catalog, provider: string, version: string): boolean {
  return findProvider(catalog, provider)?.versionStates.some((v) => v.version === version && v.enabled) ?? false;
}
