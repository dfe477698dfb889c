// A JSON Schema validator driven by svcSchema: it compiles the schema once into checks that run over the
// positioned YAML tree and report issues with svc's codes, places and plain words. It supports exactly the
// keywords of schema-types.ts and refuses a schema with others, so the schema and the validator stay in step.
import type { Issue, LandscapeErrorCode, Segment } from './codes.ts';
import { closestName, describePath, describeValue, listWords, quote } from './messages.ts';
import type { JsonSchema, JsonType } from './schema-types.ts';
import { plainValue, type YamlNode } from './yaml-tree.ts';
import { checkObject, type ObjectRules } from './validate-object.ts';

export interface Walk {
  path: Segment[];
  /** Offset of the key holding the current value (or of the list item): where `required` errors point. */
  holder: number;
  /** Where issues go; null while only testing a condition (`if`), which stops at the first failure. */
  issues: Issue[] | null;
  /** True while checking a map key's name (propertyNames) rather than a value. */
  naming?: boolean;
}

export type Check = (node: YamlNode, walk: Walk) => boolean;

const supported = new Set<string>([
  '$schema', '$id', '$ref', '$defs', '$comment', 'title', 'description', 'default', 'examples', 'type', 'const', 'enum',
  'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minItems', 'maxItems', 'uniqueItems', 'items',
  'properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'required', 'allOf', 'if', 'then', 'else',
  'patternErrorMessage', 'defaultSnippets', 'x-svc-code',
]);

const typeWords: Record<JsonType, string> = {
  object: 'a map',
  array: 'a list',
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  null: 'empty',
};

/** Compiles a schema (with its `$defs`) into a function that validates a tree. */
export function compileSchema(root: JsonSchema): (node: YamlNode) => Issue[] {
  const compiler = new Compiler(root);
  const check = compiler.compile(root);
  return (node) => {
    const issues: Issue[] = [];
    check(node, { path: [], holder: node.offset, issues });
    return issues;
  };
}

export function report(walk: Walk, code: LandscapeErrorCode, offset: number, message: string, extra?: { path?: Segment[]; subject?: string }): false {
  walk.issues?.push({ code, offset, path: extra?.path ?? [...walk.path], message, subject: extra?.subject });
  return false;
}

class Compiler {
  private readonly definitions = new Map<string, Check>();

  constructor(private readonly root: JsonSchema) {}

  compile(schema: JsonSchema): Check {
    for (const keyword of Object.keys(schema)) if (!supported.has(keyword)) throw new Error(`svc schema uses unsupported keyword ${keyword}`);
    if (schema.$ref !== undefined) return this.reference(schema.$ref);
    const assertions: Check[] = [];
    if (schema.type !== undefined) assertions.push(typeCheck(Array.isArray(schema.type) ? schema.type : [schema.type]));
    if (schema.const !== undefined) assertions.push(enumCheck([schema.const]));
    if (schema.enum !== undefined) assertions.push(enumCheck(schema.enum));
    const string = stringCheck(schema);
    if (string !== undefined) assertions.push(string);
    const number = numberCheck(schema);
    if (number !== undefined) assertions.push(number);
    const applicators: Check[] = [];
    // List-level rules (length, duplicates) do not hide the errors of the entries.
    const array = arrayCheck(schema);
    if (array !== undefined) applicators.push(array);
    if (schema.items !== undefined) applicators.push(itemsCheck(this.compile(schema.items)));
    const object = this.objectRules(schema);
    if (object !== undefined) applicators.push((node, walk) => node.kind !== 'map' || checkObject(node, walk, object));
    for (const part of schema.allOf ?? []) applicators.push(this.compile(part));
    if (schema.if !== undefined) applicators.push(this.condition(schema));
    return combine(assertions, applicators);
  }

  private reference(ref: string): Check {
    const name = /^#\/\$defs\/([^/]+)$/.exec(ref)?.[1];
    const definition = name === undefined ? undefined : this.root.$defs?.[name];
    if (name === undefined || definition === undefined) throw new Error(`svc schema has an unresolvable $ref ${ref}`);
    let check = this.definitions.get(name);
    if (check === undefined) {
      let compiled: Check | undefined;
      check = (node, walk) => (compiled ??= this.compile(definition))(node, walk);
      this.definitions.set(name, check);
    }
    return check;
  }

  private objectRules(schema: JsonSchema): ObjectRules | undefined {
    const { properties, patternProperties, additionalProperties, propertyNames, required } = schema;
    if (properties === undefined && patternProperties === undefined && additionalProperties === undefined && propertyNames === undefined && required === undefined) return undefined;
    return {
      properties: new Map(Object.entries(properties ?? {}).map(([key, value]) => [key, this.compile(value)])),
      patterns: Object.entries(patternProperties ?? {}).map(([pattern, value]) => ({ pattern: new RegExp(pattern, 'u'), check: this.compile(value) })),
      additional: additionalProperties === undefined || additionalProperties === true ? true : additionalProperties === false ? false : this.compile(additionalProperties),
      names: propertyNames === undefined ? undefined : this.compile(propertyNames),
      required: required ?? [],
    };
  }

  private condition(schema: JsonSchema): Check {
    const test = this.compile(schema.if!);
    const then = schema.then === undefined ? undefined : this.compile(schema.then);
    const otherwise = schema.else === undefined ? undefined : this.compile(schema.else);
    return (node, walk) => {
      const holds = test(node, { path: walk.path, holder: walk.holder, issues: null });
      const next = holds ? then : otherwise;
      return next === undefined || next(node, walk);
    };
  }
}

function combine(assertions: Check[], applicators: Check[]): Check {
  return (node, walk) => {
    for (let i = 0; i < assertions.length; i++) if (!assertions[i](node, walk)) return false;
    let valid = true;
    for (let i = 0; i < applicators.length; i++) {
      if (!applicators[i](node, walk)) {
        valid = false;
        if (walk.issues === null) return false;
      }
    }
    return valid;
  };
}

export function jsonTypeOf(node: YamlNode): JsonType | 'non-finite' {
  if (node.kind === 'map') return 'object';
  if (node.kind === 'seq') return 'array';
  const value = node.value;
  if (value === null) return 'null';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (!Number.isFinite(value)) return 'non-finite';
  return Number.isInteger(value) ? 'integer' : 'number';
}

const typeBits: Record<JsonType | 'non-finite', number> = { object: 1, array: 2, string: 4, integer: 8, number: 16, boolean: 32, null: 64, 'non-finite': 128 };

function typeCheck(types: JsonType[]): Check {
  let accepts = 0;
  for (const type of types) accepts |= typeBits[type] | (type === 'number' ? typeBits.integer : 0);
  const expected = listWords(types.map((type) => typeWords[type]));
  return (node, walk) => {
    if ((accepts & typeBits[jsonTypeOf(node)]) !== 0) return true;
    if (walk.issues === null) return false;
    return report(walk, 'type', node.offset, `${describePath(walk.path)} must be ${expected}, not ${describeValue(node)}`);
  };
}

function enumCheck(options: unknown[]): Check {
  const words = options.map((option) => String(option));
  return (node, walk) => {
    if (node.kind === 'scalar' && options.includes(node.value)) return true;
    if (walk.issues === null) return false;
    const typo = node.kind === 'scalar' && typeof node.value === 'string' ? closestName(node.value, words) : undefined;
    const hint = typo === undefined ? '' : `; did you mean ${typo}?`;
    return report(walk, 'enum', node.offset, `${describePath(walk.path)} must be ${listWords(words)}, not ${describeValue(node)}${hint}`);
  };
}

const codePoints = (text: string): number => {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) count++;
    else {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      count++;
    }
  }
  return count;
};

function stringCheck(schema: JsonSchema): Check | undefined {
  const { minLength, maxLength, pattern, patternErrorMessage } = schema;
  if (minLength === undefined && maxLength === undefined && pattern === undefined) return undefined;
  const regex = pattern === undefined ? undefined : new RegExp(pattern, 'u');
  const code = (schema['x-svc-code'] ?? 'pattern') as LandscapeErrorCode;
  const rule = patternErrorMessage === undefined ? `does not match the pattern ${pattern}` : patternErrorMessage.charAt(0).toLowerCase() + patternErrorMessage.slice(1).replace(/\.$/, '');
  return (node, walk) => {
    if (node.kind !== 'scalar' || typeof node.value !== 'string') return true;
    const text = node.value;
    const tooShort = minLength !== undefined && (text.length < minLength || codePoints(text) < minLength);
    const tooLong = maxLength !== undefined && text.length > maxLength && codePoints(text) > maxLength;
    const mismatch = !tooShort && !tooLong && regex !== undefined && !regex.test(text);
    if (!tooShort && !tooLong && !mismatch) return true;
    if (walk.issues === null) return false;
    if (walk.naming === true && mismatch) {
      return report(walk, code, node.offset, `${describePath(walk.path.slice(0, -1))} cannot have the name ${quote(text)}; ${rule}`);
    }
    const label = describePath(walk.path);
    if (tooShort) return report(walk, 'too-short', node.offset, minLength === 1 ? `${label} must not be empty` : `${label} must have at least ${minLength} characters`);
    if (tooLong) return report(walk, 'too-long', node.offset, `${label} has ${codePoints(text)} characters; at most ${maxLength} are allowed`);
    return report(walk, code, node.offset, `${label} is ${quote(text)}; ${rule}`);
  };
}

function numberCheck(schema: JsonSchema): Check | undefined {
  const { minimum, maximum } = schema;
  if (minimum === undefined && maximum === undefined) return undefined;
  const bounds = minimum !== undefined && maximum !== undefined ? `between ${minimum} and ${maximum}` : minimum !== undefined ? `at least ${minimum}` : `at most ${maximum}`;
  return (node, walk) => {
    if (node.kind !== 'scalar' || typeof node.value !== 'number') return true;
    const value = node.value;
    if ((minimum !== undefined && value < minimum) || (maximum !== undefined && value > maximum)) {
      if (walk.issues === null) return false;
      return report(walk, 'out-of-range', node.offset, `${describePath(walk.path)} must be ${bounds}, not ${String(value)}`);
    }
    return true;
  };
}

function arrayCheck(schema: JsonSchema): Check | undefined {
  const { minItems, maxItems, uniqueItems } = schema;
  if (minItems === undefined && maxItems === undefined && uniqueItems !== true) return undefined;
  return (node, walk) => {
    if (node.kind !== 'seq') return true;
    const count = node.items.length;
    if (minItems !== undefined && count < minItems) return report(walk, 'too-short', node.offset, `${describePath(walk.path)} must have at least ${minItems} ${minItems === 1 ? 'entry' : 'entries'}`);
    if (maxItems !== undefined && count > maxItems) return report(walk, 'too-long', node.offset, `${describePath(walk.path)} has ${count} entries; at most ${maxItems} are allowed`);
    if (uniqueItems === true) return uniqueCheck(node.items, walk);
    return true;
  };
}

function uniqueCheck(items: readonly YamlNode[], walk: Walk): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const identity = item.kind === 'scalar' ? `${typeof item.value}:${String(item.value)}` : JSON.stringify(plainValue(item));
    if (seen.has(identity)) {
      const shown = item.kind === 'scalar' ? quote(String(item.value)) : 'an entry';
      return report(walk, 'duplicate-item', item.offset, `${describePath(walk.path)} lists ${shown} more than once`, { path: [...walk.path, i] });
    }
    seen.add(identity);
  }
  return true;
}

function itemsCheck(check: Check): Check {
  return (node, walk) => {
    if (node.kind !== 'seq') return true;
    let valid = true;
    const holder = walk.holder;
    for (let i = 0; i < node.items.length; i++) {
      const item = node.items[i];
      walk.path.push(i);
      walk.holder = item.offset;
      const ok = check(item, walk);
      walk.path.pop();
      if (!ok) {
        valid = false;
        if (walk.issues === null) break;
      }
    }
    walk.holder = holder;
    return valid;
  };
}
