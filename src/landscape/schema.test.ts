// The svc.yml JSON Schema as served to editors: draft 2020-12, every key of spec 2.8 with a description,
// x- keys allowed and other keys refused everywhere, and only keywords the validator supports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { svcSchema, type JsonSchema } from './schema.ts';
import { compileSchema } from './validate.ts';

const defs = svcSchema.$defs!;
const resolve = (schema: JsonSchema): JsonSchema => (schema.$ref === undefined ? schema : defs[schema.$ref.replace('#/$defs/', '')]);

function* schemas(schema: JsonSchema, path = '#'): Generator<[string, JsonSchema]> {
  yield [path, schema];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'defaultSnippets' || key === 'examples' || key === 'default' || key === 'const' || key === 'enum') continue;
    if (Array.isArray(value)) for (const [i, inner] of value.entries()) if (typeof inner === 'object') yield* schemas(inner, `${path}/${key}/${i}`);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      if (['properties', 'patternProperties', '$defs'].includes(key)) for (const [name, inner] of Object.entries(value)) yield* schemas(inner as JsonSchema, `${path}/${key}/${name}`);
      else yield* schemas(value as JsonSchema, `${path}/${key}`);
    }
  }
}

test('the schema has its id, draft and a title, is plain JSON and cannot be changed', () => {
  assert.equal(svcSchema.$id, 'urn:svc:schema:svc-v1');
  assert.equal(svcSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.deepEqual(JSON.parse(JSON.stringify(svcSchema)), svcSchema);
  assert.ok(Object.isFrozen(svcSchema) && Object.isFrozen(defs.port.properties!.port));
});

test('every closed map allows x- keys, and every map of names does too', () => {
  for (const [path, schema] of schemas(svcSchema)) {
    if (schema.additionalProperties === undefined) continue;
    assert.ok(schema.patternProperties?.['^x-'] !== undefined, `${path} allows x- keys`);
  }
});

test('every key has a description, and $ref stands alone (same meaning for draft-07 editors)', () => {
  for (const [path, schema] of schemas(svcSchema)) {
    if (schema.$ref !== undefined) assert.deepEqual(Object.keys(schema), ['$ref'], path);
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (path.includes('/if')) continue;
      assert.ok(resolve(property).description, `${path}/${key} has a description`);
    }
  }
});

test('every key of spec 2.8 is in the schema, per kind of service', () => {
  const keysOf = (name: string): string[] => Object.keys(defs[name].properties!).sort();
  const running = ['plan', 'replicas', 'maxReplicas', 'availability', 'idleTimeoutMinutes', 'env', 'ports', 'health', 'mounts', 'needs'];
  assert.deepEqual(Object.keys(svcSchema.properties!).sort(), ['prepare', 'schema', 'services', 'test']);
  assert.deepEqual(keysOf('step'), ['name', 'run']);
  assert.deepEqual(keysOf('stepsService'), ['type', ...running, 'steps', 'image', 'nixWritable'].sort());
  assert.deepEqual(keysOf('containerService'), ['type', ...running, 'image', 'command', 'args', 'runAsUser'].sort());
  assert.deepEqual(keysOf('managedService'), ['backups', 'config', 'plan', 'provider', 'providerVersion', 'resources', 'secrets', 'type']);
  assert.deepEqual(keysOf('forwardService'), ['routes', 'target', 'type']);
  assert.deepEqual(keysOf('port'), ['port', 'public', 'routes']);
  assert.deepEqual(keysOf('route'), ['path', 'strip']);
  assert.deepEqual(keysOf('health'), ['mode', 'path', 'port']);
  assert.deepEqual(keysOf('mount'), ['from', 'to']);
});

test('static defaults and bounds are stated in the schema', () => {
  const steps = defs.stepsService.properties!;
  assert.deepEqual([steps.replicas.default, steps.replicas.minimum, steps.replicas.maximum], [1, 1, 100]);
  assert.equal(steps.nixWritable.default, false);
  assert.equal(steps.needs.maxItems, 64);
  assert.equal(defs.managedService.properties!.backups.default, true);
  assert.equal(defs.port.properties!.public.default, false);
  assert.equal(defs.route.properties!.strip.default, false);
  assert.deepEqual([defs.health.properties!.path.default, defs.health.properties!.mode.default], ['/', 'any-http']);
});

test('the service type picks a closed schema through if/then on type', () => {
  const branches = defs.service.allOf!.map((part) => [part.if?.properties?.type.const, part.then?.$ref]);
  assert.deepEqual(branches, [
    ['steps', '#/$defs/stepsService'],
    ['container', '#/$defs/containerService'],
    ['managed', '#/$defs/managedService'],
    ['forward', '#/$defs/forwardService'],
  ]);
});

test('every pattern is a valid ECMAScript (unicode) regular expression', () => {
  for (const [path, schema] of schemas(svcSchema)) {
    if (schema.pattern !== undefined) assert.doesNotThrow(() => new RegExp(schema.pattern!, 'u'), path);
    for (const pattern of Object.keys(schema.patternProperties ?? {})) assert.doesNotThrow(() => new RegExp(pattern, 'u'), path);
  }
});

test('the validator compiles the schema and refuses keywords it does not support', () => {
  assert.doesNotThrow(() => compileSchema(svcSchema));
  assert.throws(() => compileSchema({ type: 'object', unevaluatedProperties: false } as JsonSchema), /unsupported keyword unevaluatedProperties/);
  assert.throws(() => compileSchema({ $ref: '#/$defs/missing' }), /unresolvable/);
});
