// docs/svc-yml.md stays true: every key and error code is documented, each error example gives exactly the
// line shown, and the complete landscape is valid.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatError } from '../cli/lint.ts';
import { managedCatalog } from '../managed/catalog.ts';
import { catalogErrors } from '../managed/check.ts';
import { landscapeErrorCodes } from './codes.ts';
import { normalizeLandscape } from './normal-form.ts';
import { parseLandscape } from './parse-landscape.ts';
import { svcSchema, type JsonSchema } from './schema.ts';
import type { LandscapeDefaults } from './types.ts';

const docs = readFileSync(new URL('../../docs/svc-yml.md', import.meta.url), 'utf8');

const catalog: LandscapeDefaults = {
  servicePlan: 'standard',
  servicePlans: { standard: { maxReplicas: 10, availability: 'always' }, large: { maxReplicas: 50, availability: 'always' } },
  servicePlansComplete: true,
  unlistedPlan: { maxReplicas: 10, availability: 'always' },
  idleTimeoutMinutes: 30,
};

/** Every key that some object of the schema defines. */
function schemaKeys(): Set<string> {
  const keys = new Set<string>();
  const visit = (schema: JsonSchema): void => {
    for (const [key, value] of Object.entries(schema.properties ?? {})) {
      keys.add(key);
      visit(value);
    }
  };
  visit(svcSchema);
  Object.values(svcSchema.$defs ?? {}).forEach(visit);
  return keys;
}

test('every key of the schema and every error code is documented', () => {
  for (const key of schemaKeys()) assert.ok(docs.includes(`| \`${key}\` |`), `docs list key ${key}`);
  for (const code of Object.keys(landscapeErrorCodes)) assert.ok(docs.includes(`#### \`${code}\``), `docs show code ${code}`);
});

test('each error example in the docs gives exactly the line shown', () => {
  // A section shows the file and what svc lint prints; a section with two files shows the deployed one first
  // (update constraints of managed services are checked against it when a plan is made).
  const sections = [...docs.matchAll(/#### `([a-z-]+)`\n([\s\S]*?)(?=\n#### |\n## )/g)];
  const examples = sections.filter(([, code]) => code in landscapeErrorCodes);
  assert.equal(examples.length, Object.keys(landscapeErrorCodes).length);
  for (const [, code, body] of examples) {
    const files = [...body.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    const shown = /```text\n(.*)\n```/.exec(body)?.[1];
    assert.ok(files.length >= 1 && files.length <= 2 && shown, code);
    const text = files.at(-1)!;
    const errors = errorsAtPlan(text, files.length === 2 ? files[0] : undefined).map((error) => formatError('svc.yml', error).trimEnd());
    assert.ok(errors.includes(shown), `${code}: ${JSON.stringify(errors)}`);
    assert.ok(shown.includes(`: ${code}: `));
  }
});

/** The file's errors as a plan finds them: the file's own, then the managed services' against the catalog. */
function errorsAtPlan(text: string, deployed?: string) {
  const parsed = parseLandscape(text, { defaults: catalog });
  if (!parsed.landscape) return parsed.errors;
  const previous = deployed === undefined ? null : normalizeLandscape(parseLandscape(deployed).landscape!);
  return catalogErrors(text, parsed.landscape, previous, managedCatalog());
}

test('the complete landscape of the docs is valid', () => {
  const example = /## A complete landscape\n\n```yaml\n([\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(example);
  const result = parseLandscape(example);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(errorsAtPlan(example), []);
  assert.deepEqual(Object.keys(result.landscape!.services!), ['web', 'api', 'cache', 'db', 'legacy']);
});
