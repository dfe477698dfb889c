// docs/svc-yml.md stays true: every key and error code is documented, each error example gives exactly the
// line shown, and the complete landscape is valid.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatError } from '../cli/lint.ts';
import { landscapeErrorCodes } from './codes.ts';
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
  const examples = [...docs.matchAll(/#### `([a-z-]+)`[\s\S]*?```yaml\n([\s\S]*?)```\n\n```text\n(.*)\n```/g)];
  assert.equal(examples.length, Object.keys(landscapeErrorCodes).length);
  for (const [, code, text, shown] of examples) {
    const errors = parseLandscape(text, { defaults: catalog }).errors.map((error) => formatError('svc.yml', error).trimEnd());
    assert.ok(errors.includes(shown), `${code}: ${JSON.stringify(errors)}`);
    assert.ok(shown.includes(`: ${code}: `));
  }
});

test('the complete landscape of the docs is valid', () => {
  const example = /## A complete landscape\n\n```yaml\n([\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(example);
  const result = parseLandscape(example);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(Object.keys(result.landscape!.services!), ['web', 'api', 'cache', 'db', 'legacy']);
});
