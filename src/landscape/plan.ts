// The plan of a Sync: what changes between the landscape last applied and the file now, per service, plus the
// prepare and test steps, with a hash that Sync compares to refuse with plan-changed when the file moved on.
// Sync restarts exactly the services the plan marks `restarts`, so the plan and the Sync cannot disagree: that
// includes services whose file entry is the same but whose filled-in environment changed (a variable, a secret).
import { canonicalJson, sha256 } from './normal-form.ts';
import type { NormalLandscape, NormalService, ServiceType, Step } from './types.ts';
import { jsonPointer } from './yaml-tree.ts';
import type { PlanImage } from './plan-images.ts';

/** `replace`: the type (or a managed service's provider) changes, so the old one goes (with its data). */
export type ServiceAction = 'create' | 'change' | 'replace' | 'remove';

export interface ServiceChange {
  name: string;
  action: ServiceAction;
  /** Type in the new file; for `remove`, the type it had. */
  type: ServiceType;
  /** The type it had, for `replace`. */
  previousType?: ServiceType;
  /** JSON Pointers (into the normal form, which keeps the file's list order) of what changes. */
  changes: string[];
  /**
   * Names of the service's environment variables whose value at Sync differs from the one its replicas run with,
   * whether the file or a workspace variable or secret changed it; for a managed service, the names of its
   * `secrets` whose value changed (a new password in the vault). Names only: values never leave the server.
   */
  environment: string[];
  /**
   * Whether Sync starts the service's replicas afresh (a change of scaling alone does not); for a managed service,
   * whether Sync restarts its server (src/managed/plan-restarts.ts: only a value whose update rule is `restart`).
   */
  restarts: boolean;
  /** Why a changed managed service restarts: the values whose update rule is `restart`. */
  reason?: string;
}

/** Each service's environment with its templates filled in, by service name: as last synced, or as it would be now. */
export type ServiceEnvironments = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** The filled-in environments on both sides of the plan; without them the plan compares the files only. */
export interface EnvironmentComparison {
  before: ServiceEnvironments;
  after: ServiceEnvironments;
}

export interface StageChange {
  changed: boolean;
  changes: string[];
}

export interface LandscapePlan {
  /** Services that change, by name. */
  services: ServiceChange[];
  /** Services that stay as they are, by name. */
  unchanged: string[];
  prepare: StageChange;
  test: StageChange;
  /** Whether anything changes at all. */
  changed: boolean;
  /** sha256 (hex) of the canonical JSON of both normal forms (and the images' digests): a later Sync compares it. */
  hash: string;
  /** Each container service's image with the digest it names now (src/landscape/plan-images.ts), once resolved. */
  images?: PlanImage[];
}

/** Plans going from `previous` (null when nothing was applied yet) to `next`. */
export function planLandscape(previous: NormalLandscape | null, next: NormalLandscape, environments?: EnvironmentComparison): LandscapePlan {
  const before = previous?.services ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(next.services)])].sort();
  const services: ServiceChange[] = [];
  const unchanged: string[] = [];
  for (const name of names) {
    const old = Object.hasOwn(before, name) ? before[name] : undefined;
    const now = Object.hasOwn(next.services, name) ? next.services[name] : undefined;
    const environment = old !== undefined && environments ? environmentChanges(environments.before[name], environments.after[name]) : [];
    const change = serviceChange(name, old, now, environment);
    if (change === undefined) unchanged.push(name);
    else services.push(change);
  }
  const prepare = stageChange(previous?.prepare ?? [], next.prepare, '/prepare');
  const test = stageChange(previous?.test ?? [], next.test, '/test');
  // Names (never values) of changed environments join the hash: a variable changed after the plan was made
  // makes Sync answer plan-changed instead of restarting services the plan did not show.
  const environment = Object.fromEntries(services.filter((s) => s.environment.length > 0).map((s) => [s.name, s.environment]));
  return {
    services,
    unchanged,
    prepare,
    test,
    changed: services.length > 0 || prepare.changed || test.changed,
    hash: sha256(canonicalJson(Object.keys(environment).length === 0 ? { previous, next } : { previous, next, environment })),
  };
}

/** Keys whose change alone only scales a service: Sync leaves its running replicas alone. */
const scalingPointer = /^\/services\/[^/]+\/(replicas|maxReplicas|availability|idleTimeoutMinutes)$/;

function serviceChange(name: string, old: NormalService | undefined, now: NormalService | undefined, environment: string[]): ServiceChange | undefined {
  const base = jsonPointer(['services', name]);
  if (old === undefined && now !== undefined) return { name, action: 'create', type: now.type, changes: [base], environment: [], restarts: true };
  if (now === undefined) return old === undefined ? undefined : { name, action: 'remove', type: old.type, changes: [base], environment: [], restarts: false };
  const fileChanges = diffPointers(old, now, base);
  const filled = now.type === 'managed' ? 'secrets' : 'env';
  const changes = [...new Set([...fileChanges, ...environment.map((key) => jsonPointer(['services', name, filled, key]))])];
  if (changes.length === 0) return undefined;
  const replaced = old!.type !== now.type || (old!.type === 'managed' && now.type === 'managed' && old!.provider !== now.provider);
  if (replaced) return { name, action: 'replace', type: now.type, previousType: old!.type, changes, environment, restarts: true };
  const restarts = environment.length > 0 || !fileChanges.every((pointer) => scalingPointer.test(pointer));
  return { name, action: 'change', type: now.type, changes, environment, restarts };
}

/** Names of the variables that differ between two filled-in environments: added, removed or with another value. */
export function environmentChanges(before: Readonly<Record<string, string>> | undefined, after: Readonly<Record<string, string>> | undefined): string[] {
  const old = before ?? {};
  const now = after ?? {};
  const names = new Set([...Object.keys(old), ...Object.keys(now)]);
  return [...names].filter((name) => Object.hasOwn(old, name) !== Object.hasOwn(now, name) || old[name] !== now[name]).sort();
}

/** The services a Sync of this plan starts afresh. */
export const servicesToRestart = (plan: LandscapePlan): Set<string> => new Set(plan.services.filter((s) => s.restarts).map((s) => s.name));

function stageChange(old: Step[], now: Step[], base: string): StageChange {
  const changes = diffPointers(old, now, base);
  return { changed: changes.length > 0, changes };
}

/** Pointers of the values that differ: keys added, removed or changed; a whole list when its length changes. */
export function diffPointers(a: unknown, b: unknown, base: string): string[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [base];
    return a.flatMap((item, index) => diffPointers(item, b[index], `${base}/${index}`));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => diffPointers(a[key], b[key], `${base}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  }
  return canonicalJson(a) === canonicalJson(b) ? [] : [base];
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
