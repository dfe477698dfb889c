// What a change of a managed service does to its running instance, from its provider's update rules (spec 2.8,
// 9 item 5): the plan marks it `restarts` only when a value whose rule is `restart` changes, and says which in
// `reason`, or when a secret's value changed (its server takes a new password at a start); a change of live values
// (or of the version's spelling, the plan's name, backups) restarts nothing.
// Pure: the landscape-check worker applies it to the plan, and Sync restarts exactly what the plan says.
import { canonicalJson, type LandscapePlan, type NormalLandscape, type NormalManagedService, type ServiceChange } from '../landscape/index.ts';
import { findProvider, type Catalog, type Provider } from './catalog.ts';
import type { ResourceDefinition } from './providers.ts';

/** `plan` with each `change` of a managed service (same provider on both sides) marked as its provider's rules say. */
export function withManagedRestarts(plan: LandscapePlan, previous: NormalLandscape | null, next: NormalLandscape, catalog: Catalog): LandscapePlan {
  const services = plan.services.map((change): ServiceChange => {
    const old = previous?.services[change.name];
    const now = next.services[change.name];
    if (change.action !== 'change' || old?.type !== 'managed' || now?.type !== 'managed') return change;
    const provider = findProvider(catalog, now.provider);
    if (!provider) return change;
    const restartItems = [...restartingChanges(provider, old, now), ...change.environment.map((secret) => `the new ${secret}`)];
    const { reason: _unused, ...rest } = change;
    if (restartItems.length === 0) return { ...rest, restarts: false };
    return { ...rest, restarts: true, reason: `the server restarts to apply ${restartItems.join(', ')}` };
  });
  return { ...plan, services };
}

/** The values of `now` that differ from `old` and whose update rule is `restart`, in words ("connections 100 -> 150"). */
export function restartingChanges(provider: Provider, old: NormalManagedService, now: NormalManagedService): string[] {
  const items: string[] = [];
  const before = effectiveResources(provider, old);
  const after = effectiveResources(provider, now);
  for (const definition of provider.resources) {
    const [a, b] = [before[definition.name], after[definition.name]];
    if (definition.update === 'restart' && a !== b) items.push(`${definition.name} ${amount(a, definition)} -> ${amount(b, definition)}`);
  }
  for (const [key, property] of Object.entries(provider.config.properties)) {
    if (property['x-update'] !== 'restart' || canonicalJson(old.config[key] ?? null) === canonicalJson(now.config[key] ?? null)) continue;
    items.push(`config ${key} ${shown(old.config[key])} -> ${shown(now.config[key])}`);
  }
  return items;
}

/** Each resource's value: the file's override, else its plan's (the provider's default plan when it names none). */
function effectiveResources(provider: Provider, service: NormalManagedService): Record<string, number | undefined> {
  const plan = provider.plans.find((p) => p.id === (service.plan ?? provider.defaultPlan));
  return Object.fromEntries(provider.resources.map((r) => [r.name, service.resources[r.name] ?? plan?.resources[r.name]?.value]));
}

function amount(value: number | undefined, definition: ResourceDefinition): string {
  if (value === undefined) return 'none';
  return definition.unit === 'MiB' ? `${value} MiB` : String(value);
}

function shown(value: unknown): string {
  return value === undefined ? 'default' : JSON.stringify(value);
}
