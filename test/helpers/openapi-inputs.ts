// Requests built from the OpenAPI document a server serves: a valid sample for every operation's path, query and
// body, and every field of them with its place, so a test can spoil one field at a time.
import { randomUUID } from 'node:crypto';

export type JsonSchema = Record<string, any>;
export type Place = 'path' | 'query' | 'header' | 'body';

export interface Operation {
  method: string;
  /** The template, e.g. /api/v1/workspaces/{ws}. */
  path: string;
  security: 'apiKey' | 'session' | 'public';
  parameters: Array<{ name: string; in: Place; schema: JsonSchema }>;
  body?: JsonSchema;
}

export interface Field {
  in: Place;
  /** The parameter's name, or the JSON Pointer into the body. */
  pointer: string;
  schema: JsonSchema;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

export function operationsOf(document: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const schemes: string[] = (operation.security ?? []).flatMap((entry: object) => Object.keys(entry));
      operations.push({
        method: method.toUpperCase(),
        path,
        security: schemes.includes('apiKey') ? 'apiKey' : schemes.includes('session') ? 'session' : 'public',
        parameters: (operation.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in, schema: p.schema })),
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

/** Text that fits a string schema; throws for a pattern none of the candidates fits (add one then). */
function sampleText(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.format === 'uuid') return randomUUID();
  if (schema.format === 'date-time') return new Date(Date.UTC(2030, 0, 1)).toISOString();
  const min = schema.minLength ?? 0;
  const candidates = ['a', 'a.b', 'a@b.example', '/', 'f'.repeat(64), 'a'.repeat(Math.max(1, min))];
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
  const fit = candidates.find((text) => text.length >= min && text.length <= (schema.maxLength ?? Infinity) && (!pattern || pattern.test(text)));
  if (fit === undefined) throw new Error(`no sample text fits ${JSON.stringify(schema)}`);
  return fit;
}

/** A valid value of `schema`: objects with their required properties only. */
export function sample(schema: JsonSchema): unknown {
  switch (schema.type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name: string) => [name, sample(schema.properties[name])]));
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return false;
    case 'string':
      return sampleText(schema);
    default:
      throw new Error(`no sample for ${JSON.stringify(schema)}`);
  }
}

const token = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every leaf field of a body schema (properties at any depth, array items as /0), with its JSON Pointer. */
export function bodyFields(schema: JsonSchema, pointer = ''): Field[] {
  if (schema.type === 'object') {
    return Object.entries<JsonSchema>(schema.properties ?? {}).flatMap(([name, property]) => bodyFields(property, `${pointer}/${token(name)}`));
  }
  if (schema.type === 'array') return bodyFields(schema.items, `${pointer}/0`);
  return [{ in: 'body', pointer, schema }];
}

export function fieldsOf(operation: Operation): Field[] {
  const parameters = operation.parameters.map((p) => ({ in: p.in, pointer: p.name, schema: p.schema }));
  return [...parameters, ...(operation.body ? bodyFields(operation.body) : [])];
}

/** A valid body with `value` at `pointer`; the objects on the way get their required properties. */
export function bodyWith(schema: JsonSchema, pointer: string, value: unknown): unknown {
  const root = sample(schema) as Record<string, any>;
  let container: any = root;
  let at = schema;
  const names = pointer.split('/').slice(1).map((name) => name.replace(/~1/g, '/').replace(/~0/g, '~'));
  names.forEach((name, index) => {
    const last = index === names.length - 1;
    at = at.type === 'array' ? at.items : at.properties[name];
    if (last) container[name] = value;
    else container = container[name] ??= at.type === 'array' ? [] : sample(at);
  });
  return root;
}

/** The path with every parameter sampled, and `override` for one of them (text put in as given). */
export function pathWith(operation: Operation, override?: { name: string; text: string }): string {
  let path = operation.path;
  for (const p of operation.parameters.filter((q) => q.in === 'path')) {
    const text = override?.name === p.name ? override.text : encodeURIComponent(String(sample(p.schema)));
    path = path.replace(`{${p.name}}`, text);
  }
  return path;
}
