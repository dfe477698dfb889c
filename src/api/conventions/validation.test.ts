import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildRequestValidator, nonCanonicalNumbers, unsafeValues } from './validation.ts';

const compile = buildRequestValidator({});
const pointers = (errors: Array<{ instancePath: string }> | null | undefined) => (errors ?? []).map((e) => e.instancePath);

test('a NUL in a value or a key and an infinite number are found at any depth, with escaped pointers', () => {
  const found = unsafeValues({ a: 'x\u0000', list: [1, -Infinity], 'k/~\u0000': 'v', deep: { ok: 'fine', n: Infinity } });
  assert.deepEqual(pointers(found).sort(), ['/a', '/deep/n', '/k~1~0\u0000', '/list/1'].sort());
});

test('a deeply nested body is scanned without running out of stack, and the errors are capped', () => {
  let nested: unknown = 'x\u0000';
  for (let i = 0; i < 200_000; i++) nested = [nested];
  assert.equal(unsafeValues(nested).length, 1);
  assert.equal(unsafeValues(Array.from({ length: 1000 }, () => '\u0000')).length, 20);
});

test('query and path integers come only from canonical decimal text', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' }, x: { type: 'number' }, s: { type: 'string' } } };
  for (const text of ['Infinity', '-Infinity', '1e400', '1e3', '0x10', ' 7', '07', '1.5', '', '9007199254740993']) {
    assert.deepEqual(pointers(nonCanonicalNumbers(schema, { n: text })), ['/n'], text);
  }
  for (const text of ['0', '42', '-3', '9007199254740991']) assert.deepEqual(nonCanonicalNumbers(schema, { n: text }), [], text);
  assert.deepEqual(nonCanonicalNumbers(schema, { x: '4.25', s: 'Infinity' }), []);
  assert.deepEqual(pointers(nonCanonicalNumbers(schema, { x: 'Infinity' })), ['/x']);
});

test('a body is taken as sent; a query string is coerced from canonical text only', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 10, default: 5 } }, additionalProperties: false };
  const body = compile({ schema, httpPart: 'body' });
  assert.equal(body({ n: '3' }), false);
  assert.deepEqual(pointers(body.errors), ['/n']);
  assert.equal(body({ n: Infinity }), false);
  const withDefault: Record<string, unknown> = {};
  assert.equal(body(withDefault), true);
  assert.equal(withDefault.n, 5);

  const query = compile({ schema, httpPart: 'querystring' });
  const good: Record<string, unknown> = { n: '3' };
  assert.equal(query(good), true);
  assert.equal(good.n, 3);
  assert.equal(query({ n: 'Infinity' }), false);
  assert.deepEqual(pointers(query.errors), ['/n'], 'one error for the place, not one from each check');
  assert.equal(query({ n: '1e1' }), false);
  assert.equal(query({ n: '11' }), false);
});
