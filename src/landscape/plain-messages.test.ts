// Messages a first-time author meets (issue 35): a misspelt `type` gets "did you mean type?" like any other key, and
// the YAML parser's jargon for a second `key: value` on one line is said in plain words, with the line it is on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { landscapeProblem, parseLandscape } from './parse-landscape.ts';

const service = (body: string) => `schema: svc/v1\nservices:\n  web:\n${body}`;

test('typ: steps is missing type and asks "did you mean type?", at the misspelt key', () => {
  const { errors } = parseLandscape(service('    typ: steps\n    steps:\n      - run: node web.js\n'));
  assert.deepEqual(
    errors.map((e) => [e.code, e.pointer, e.line, e.column, e.message]),
    [['required', '/services/web/type', 4, 5, 'service web is missing the required key type; did you mean type instead of "typ"?']],
  );
});

test('a key named as an unknown key already is not hinted twice; a missing key without a look-alike has no hint', () => {
  const ports = parseLandscape(service('    type: steps\n    steps:\n      - run: x\n    ports:\n      - prot: 80\n')).errors;
  assert.deepEqual(ports.map((e) => e.message), ['unknown key "prot" in ports[0] of service web; did you mean port?', 'ports[0] of service web is missing the required key port']);
  const bare = parseLandscape(service('    steps:\n      - run: x\n')).errors;
  assert.deepEqual(bare.map((e) => e.message), ['service web is missing the required key type']);
});

test('a second "key: value" on one line is said in plain words with its line, once per line', () => {
  const { errors } = parseLandscape(service('    type: steps\n    steps:\n      - run: echo a: b: c\n'));
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'yaml-syntax');
  assert.equal(errors[0].line, 6);
  assert.equal(
    errors[0].message,
    '"- run: echo a: b: c" holds a second "key: value" on one line (a colon followed by a space starts one); put quotes around a value that has ": " in it (run: "echo a: b"), or put the inner key on its own, indented line',
  );
  assert.doesNotMatch(errors[0].message, /compact mappings/);
  const detail = landscapeProblem(parseLandscape('schema: svc/v1\nservices:\n  web: type: steps\n').errors).detail;
  assert.match(detail ?? '', /^svc\.yml has an error at line 3, column \d+: "web: type: steps" holds a second "key: value" on one line/);
});
