// The plan of a Sync: what changes between the landscape last applied and the file now, per service, plus the
// prepare and test steps, with a hash that Sync compares to refuse with plan-changed when the file moved on.
import { canonicalJson, sha256 } from './normal-form.ts';
import type { NormalLandscape, NormalService, ServiceType, Step } from './types.ts';
import { jsonPointer } from './yaml-tree.ts';

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
  /** sha256 (hex) of the canonical JSON of both normal forms: a later Sync compares it. */
  hash: string;
}

/** Plans going from `previous` (null when nothing was applied yet) to `next`. */
export function planLandscape(previous: NormalLandscape | null, next: NormalLandscape): LandscapePlan {
  const before = previous?.services ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(next.services)])].sort();
  const services: ServiceChange[] = [];
  const unchanged: string[] = [];
  for (const name of names) {
    const old = Object.hasOwn(before, name) ? before[name] : undefined;
    const now = Object.hasOwn(next.services, name) ? next.services[name] : undefined;
    const change = serviceChange(name, old, now);
    if (change === undefined) unchanged.push(name);
    else services.push(change);
  }
  const prepare = stageChange(previous?.prepare ?? [], next.prepare, '/prepare');
  const test = stageChange(previous?.test ?? [], next.test, '/test');
  return {
    services,
    unchanged,
    prepare,
    test,
    changed: services.length > 0 || prepare.changed || test.changed,
    hash: sha256(canonicalJson({ previous, next })),
  };
}

function serviceChange(name: string, old: NormalService | undefined, now: NormalService | undefined): ServiceChange | undefined {
  const base = jsonPointer(['services', name]);
  if (old === undefined && now !== undefined) return { name, action: 'create', type: now.type, changes: [base] };
  if (now === undefined) return old === undefined ? undefined : { name, action: 'remove', type: old.type, changes: [base] };
  const changes = diffPointers(old, now, base);
  if (changes.length === 0) return undefined;
  const replaced = old!.type !== now.type || (old!.type === 'managed' && now.type === 'managed' && old!.provider !== now.provider);
  if (!replaced) return { name, action: 'change', type: now.type, changes };
  return { name, action: 'replace', type: now.type, previousType: old!.type, changes };
}

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
