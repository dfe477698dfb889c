// The object keywords of the validator: properties, patternProperties, additionalProperties, propertyNames and
// required, with svc's unknown-key and required errors placed on the key.
import { closestName, describePath, listWords, quote } from './messages.ts';
import type { Segment } from './codes.ts';
import { report, type Check, type Walk } from './validate.ts';
import { entryOf, scalarNode, stringOf, valueOf, type MapEntry, type MapNode } from './yaml-tree.ts';

export interface ObjectRules {
  properties: Map<string, Check>;
  patterns: { pattern: RegExp; check: Check }[];
  /** true: any other key; false: no other key; a check: other keys' values. */
  additional: boolean | Check;
  names: Check | undefined;
  required: string[];
}

/** Rules that look only at their own properties (such as the `if` on a service's type) visit just those. */
function checksOnlyProperties(rules: ObjectRules): boolean {
  return rules.additional === true && rules.patterns.length === 0 && rules.names === undefined;
}

export function checkObject(node: MapNode, walk: Walk, rules: ObjectRules): boolean {
  let valid = true;
  const holder = walk.holder;
  const entries = checksOnlyProperties(rules) && rules.properties.size < node.entries.length ? propertyEntries(node, rules) : node.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    walk.path.push(entry.key);
    walk.holder = entry.keyOffset;
    const ok = checkEntry(node, entry, walk, rules);
    walk.path.pop();
    if (!ok) {
      valid = false;
      if (walk.issues === null) break;
    }
  }
  walk.holder = holder;
  if (!valid && walk.issues === null) return false;
  for (const key of rules.required) {
    if (valueOf(node, key) !== undefined) continue;
    valid = false;
    if (walk.issues === null) return false;
    // A key spelt close to the missing one (`typ: steps`) that no unknown-key error named already: point at it.
    const typo = rules.additional === false ? undefined : node.entries.find((e) => !rules.properties.has(e.key) && closestName(e.key, [key]) === key);
    const hint = typo === undefined ? '' : `; did you mean ${key} instead of ${quote(typo.key)}?`;
    report(walk, 'required', typo?.keyOffset ?? holder, `${describeMap(walk.path, node)} is missing the required key ${key}${hint}`, { path: [...walk.path, key], subject: key });
  }
  return valid;
}

function propertyEntries(node: MapNode, rules: ObjectRules): MapEntry[] {
  const found: MapEntry[] = [];
  for (const key of rules.properties.keys()) {
    const entry = entryOf(node, key);
    if (entry !== undefined) found.push(entry);
  }
  return found;
}

function checkEntry(node: MapNode, entry: MapEntry, walk: Walk, rules: ObjectRules): boolean {
  if (rules.names !== undefined) {
    walk.naming = true;
    const named = rules.names(scalarNode(entry.key, entry.keyOffset), walk);
    walk.naming = false;
    if (!named) return false;
  }
  const property = rules.properties.get(entry.key);
  if (property !== undefined) return property(entry.value, walk);
  let matched = false;
  let valid = true;
  for (const { pattern, check } of rules.patterns) {
    if (!pattern.test(entry.key)) continue;
    matched = true;
    if (!check(entry.value, walk)) valid = false;
  }
  if (matched) return valid;
  if (rules.additional === true) return true;
  if (rules.additional !== false) return rules.additional(entry.value, walk);
  return unknownKey(node, entry, walk, rules);
}

function unknownKey(node: MapNode, entry: MapEntry, walk: Walk, rules: ObjectRules): false {
  const known = [...rules.properties.keys()];
  const typo = closestName(entry.key, known);
  const parent = walk.path.slice(0, -1);
  const where = parent.length === 0 ? 'at the top level of the file' : `in ${describeMap(parent, node)}`;
  const hint = typo !== undefined ? `; did you mean ${typo}?` : known.length > 0 && known.length <= 16 ? `; allowed here: ${listWords(known)}` : '';
  return report(walk, 'unknown-key', entry.keyOffset, `unknown key ${quote(entry.key)} ${where}${hint}`, { subject: entry.key });
}

/** "service web (a steps service)", "ports[0] of service web", "the file". */
function describeMap(path: readonly Segment[], node: MapNode): string {
  const type = path.length === 2 && path[0] === 'services' ? stringOf(valueOf(node, 'type')) : undefined;
  const label = describePath(path);
  return type === undefined ? label : `${label} (a ${type} service)`;
}
