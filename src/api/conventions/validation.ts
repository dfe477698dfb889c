// Request validation, one rule for every route. A body is taken as sent: no type coercion, so the text
// "Infinity" or "10" is not a number there (Ajv's coercion turned "Infinity" into a number its bounds then skipped).
// A query or path integer comes only from canonical decimal text ("42", never "1e3", "0x10", " 7" or "Infinity").
// No string or key anywhere holds the NUL character, which PostgreSQL refuses in text, and no number is infinite
// (the JSON literal 1e400 parses to Infinity). Every refusal is a validation error with a JSON Pointer. A schema
// with a `pattern` says in words what it allows in `patternErrorMessage` (as VS Code reads it in landscape files), and
// that message replaces Ajv's "must match pattern" with its regular expression.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

type HttpPart = 'body' | 'querystring' | 'params' | 'headers';
type Schema = Record<string, unknown>;

interface RouteDefinition {
  schema?: unknown;
  httpPart?: string;
}

/** What Fastify calls with the data of one part; it reads `errors` after a `false`. */
type RequestValidator = ((data: unknown, context?: unknown) => boolean) & { errors?: ErrorObject[] | null; schemaEnv?: unknown };

/** An error in Ajv's shape, so problems.ts turns it into a pointer and a message like any other. */
type InputError = Pick<ErrorObject, 'instancePath' | 'keyword' | 'message' | 'params' | 'schemaPath'>;

/** Most NUL and infinity errors reported for one part; a body of a million NULs gets a short answer. */
const MAX_SCAN_ERRORS = 20;

const canonicalInteger = /^-?(0|[1-9][0-9]*)$/;
const canonicalNumber = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

// verbose: a pattern error carries its schema, where patternErrorMessage is.
const common: Options = { removeAdditional: false, allErrors: true, useDefaults: true, addUsedSchema: false, verbose: true };

/** The schema keyword holding a pattern's rule in words: the whole message, "must ...". */
export const PATTERN_MESSAGE = 'patternErrorMessage';

function newAjv(coerceTypes: Options['coerceTypes'], externalSchemas: Record<string, unknown>): Ajv {
  const ajv = new Ajv({ ...common, coerceTypes });
  addFormats.default(ajv);
  ajv.addKeyword({ keyword: PATTERN_MESSAGE, schemaType: 'string' });
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as Schema);
  return ajv;
}

const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

function inputError(instancePath: string, keyword: string, message: string): InputError {
  return { instancePath, keyword, message, params: {}, schemaPath: '#' };
}

/** NUL characters in strings and keys, and numbers that are not finite, anywhere in `data` (no recursion: any depth). */
export function unsafeValues(data: unknown): InputError[] {
  const errors: InputError[] = [];
  const pending: Array<[unknown, string]> = [[data, '']];
  while (pending.length > 0 && errors.length < MAX_SCAN_ERRORS) {
    const [value, pointer] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\0')) errors.push(inputError(pointer, 'nul', 'must not contain the NUL character (U+0000)'));
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) errors.push(inputError(pointer, 'finite', 'must be a finite number'));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push([value[i], `${pointer}/${i}`]);
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i];
        const place = `${pointer}/${escapeToken(key)}`;
        if (key.includes('\0')) errors.push(inputError(place, 'nul', 'is a key with the NUL character (U+0000)'));
        else pending.push([item, place]);
      }
    }
  }
  return errors;
}

/** 'integer' or 'number' when a property takes a number and no text; undefined otherwise. */
function numericType(schema: unknown): 'integer' | 'number' | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const s = schema as Schema;
  const types = [s.type, ...[s.anyOf, s.oneOf].flatMap((list) => (Array.isArray(list) ? list.map((item) => (item as Schema)?.type) : []))]
    .flat()
    .filter((type): type is string => typeof type === 'string');
  if (types.includes('string')) return undefined;
  if (types.includes('integer')) return 'integer';
  return types.includes('number') ? 'number' : undefined;
}

/** Query, path and header numbers arrive as text: only canonical decimal text may become a number. */
export function nonCanonicalNumbers(schema: unknown, data: unknown): InputError[] {
  const properties = (schema as Schema | undefined)?.properties;
  if (!properties || typeof properties !== 'object' || data === null || typeof data !== 'object') return [];
  const errors: InputError[] = [];
  for (const [key, value] of Object.entries(data)) {
    const type = numericType((properties as Schema)[key]);
    if (type === undefined) continue;
    const texts = (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
    const canonical = (text: string) =>
      type === 'integer' ? canonicalInteger.test(text) && Number.isSafeInteger(Number(text)) : canonicalNumber.test(text) && Number.isFinite(Number(text));
    if (texts.every(canonical)) continue;
    const message = type === 'integer' ? 'must be an integer written in decimal digits, like 42' : 'must be a number written in decimal digits, like 4.2';
    errors.push(inputError(`/${escapeToken(key)}`, 'type', message));
  }
  return errors;
}

/** Ajv's error, with the words of the schema's patternErrorMessage for a pattern it has them for; lean either way. */
export function wordedError(error: ErrorObject): ErrorObject {
  const words = error.keyword === 'pattern' ? (error.parentSchema as Schema | undefined)?.[PATTERN_MESSAGE] : undefined;
  const { instancePath, keyword, params, schemaPath } = error;
  return { instancePath, keyword, params, schemaPath, message: typeof words === 'string' ? words : error.message };
}

/** Each list's errors at places the lists before it did not name (Ajv may name one place more than once). */
function merged(...lists: Array<ReadonlyArray<InputError | ErrorObject>>): ErrorObject[] {
  const all: ErrorObject[] = [];
  for (const list of lists) {
    const named = new Set(all.map((error) => error.instancePath));
    all.push(...(list.filter((error) => !named.has(error.instancePath)) as ErrorObject[]));
  }
  return all;
}

function guarded(validate: ValidateFunction, schema: unknown, httpPart: HttpPart): RequestValidator {
  const guard: RequestValidator = (data, context) => {
    const before = httpPart === 'body' ? [] : nonCanonicalNumbers(schema, data);
    const valid = validate(data, context as never);
    const after = unsafeValues(data);
    if (valid && before.length === 0 && after.length === 0) return true;
    guard.errors = merged(before, valid ? [] : (validate.errors ?? []).map(wordedError), after);
    return false;
  };
  // Fastify passes the parent object (so that Ajv may coerce a root value) only to a function with a schemaEnv.
  guard.schemaEnv = validate.schemaEnv;
  return guard;
}

/**
 * The validator compiler for `app.setValidatorCompiler`: one Ajv without coercion for bodies, one that coerces the
 * text of query strings, paths and headers, both behind the checks above. `externalSchemas` are the shared schemas.
 */
export function buildRequestValidator(externalSchemas: Record<string, unknown>) {
  const bodies = newAjv(false, externalSchemas);
  const texts = newAjv('array', externalSchemas);
  return ({ schema, httpPart }: RouteDefinition): RequestValidator => {
    const part = (httpPart ?? 'body') as HttpPart;
    const ajv = part === 'body' ? bodies : texts;
    const id = (schema as Schema).$id;
    const validate = (typeof id === 'string' && ajv.getSchema(id)) || ajv.compile(schema as Schema);
    return guarded(validate, schema, part);
  };
}

/** A validated value whose `K` the schema gives defaults for: the validator filled them, the static type cannot say so. */
export type WithDefaults<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };
