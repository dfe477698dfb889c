// The YAML layer: positions, duplicate keys, x- keys, anchors, aliases and merge keys, syntax errors reported
// (never thrown), and the fast block reader giving the same tree as the yaml package.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseLandscape } from './parse-landscape.ts';
import { readYaml } from './parse.ts';
import { readBlockYaml } from './yaml-block.ts';
import { readYamlDocument } from './yaml-document.ts';
import { LineIndex, plainValue } from './yaml-tree.ts';

const errorsOf = (text: string) => parseLandscape(text).errors.map((e) => [e.code, e.pointer, e.line, e.column]);

describe('YAML with positions', () => {
  test('duplicate keys are errors at the second key, in every map', () => {
    const text = 'schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: a\n    provider: b\nschema: svc/v1\n';
    assert.deepEqual(errorsOf(text), [
      ['duplicate-key', '/services/db/provider', 6, 5],
      ['duplicate-key', '/schema', 7, 1],
    ]);
  });

  test('a NUL character is refused where it stands: raw in the text, or written as an escape in a value or key', () => {
    const service = (env: string) => `schema: svc/v1\nservices:\n  api:\n    type: steps\n    steps:\n      - run: node api.js\n    env:\n${env}`;
    assert.deepEqual(errorsOf(service('      A: plain\u0000x\n')), [['yaml-syntax', '', 8, 15]]);
    assert.deepEqual(errorsOf('# a comment \u0000\nschema: svc/v1\n'), [['yaml-syntax', '', 1, 13]]);
    assert.deepEqual(errorsOf(service('      A: "a\\0b"\n      B: "\\u0000"\n      "C\\x00": c\n')), [
      ['pattern', '/services/api/env/A', 8, 10],
      ['pattern', '/services/api/env/B', 9, 10],
      ['pattern', '/services/api/env/C\u0000', 10, 7],
      ['pattern', '/services/api/env/C\u0000', 10, 7], // the name's form, and the NUL
    ]);
  });

  test('keys starting with x- are ignored everywhere, also when repeated', () => {
    const text = 'schema: svc/v1\nx-a: 1\nx-a: 2\nservices:\n  x-draft: {type: nonsense}\n  db:\n    type: managed\n    provider: p\n    x-owner: me\n    config: {x-comment: c, a: 1}\n';
    const result = parseLandscape(text);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.landscape, { schema: 'svc/v1', services: { db: { type: 'managed', provider: 'p', config: { a: 1 } } } });
  });

  test('anchors, aliases and merge keys work; the keys of the map win over merged ones', () => {
    const text = [
      'schema: svc/v1',
      'x-base: &base',
      '  type: steps',
      '  replicas: 2',
      '  env: &env {A: "1"}',
      'services:',
      '  web:',
      '    <<: *base',
      '    replicas: 3',
      '    steps: [{run: web}]',
      '  worker:',
      '    <<: [*base, {nixWritable: true}]',
      '    env: *env',
      '    steps: [{run: work}]',
      '',
    ].join('\n');
    const result = parseLandscape(text);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.landscape?.services, {
      web: { replicas: 3, steps: [{ run: 'web' }], type: 'steps', env: { A: '1' } },
      worker: { env: { A: '1' }, steps: [{ run: 'work' }], type: 'steps', replicas: 2, nixWritable: true },
    });
  });

  test('an error inside an anchor points into the anchor', () => {
    const text = 'schema: svc/v1\nx-base: &base\n  type: steps\n  replicas: 0\nservices:\n  web:\n    <<: *base\n    steps: [{run: x}]\n';
    assert.deepEqual(errorsOf(text), [['out-of-range', '/services/web/replicas', 4, 13]]);
  });

  test('unknown and self-referencing aliases and alias bombs are reported, not thrown', () => {
    assert.deepEqual(errorsOf('schema: svc/v1\nservices: *nothing\n'), [['yaml-alias', '/services', 2, 11]]);
    assert.deepEqual(errorsOf('schema: svc/v1\nx-loop: &loop [*loop]\nprepare: *loop\n').map((e) => e[0]), ['yaml-alias']);
    const bomb = ['schema: svc/v1', 'x-0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) bomb.push(`x-${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    bomb.push('services:\n  db:\n    type: managed\n    provider: p\n    config: {a: *a8}\n');
    const started = performance.now();
    assert.deepEqual(errorsOf(bomb.join('\n')).map((e) => e[0]), ['yaml-alias']);
    assert.ok(performance.now() - started < 2000);
  });

  test('syntax errors are listed with their place and nothing else is checked', () => {
    assert.deepEqual(errorsOf('schema: svc/v1\nservices:\n  web: {type: steps\n'), [['yaml-syntax', '', 4, 1]]);
    assert.deepEqual(errorsOf('schema: svc/v1\nservices: x: y\n').map((e) => e[0]).slice(0, 1), ['yaml-syntax']);
    assert.deepEqual(errorsOf('schema: svc/v1\n---\nschema: svc/v1\n').map((e) => e.slice(0, 1)), [['yaml-syntax']]);
    assert.match(parseLandscape('schema: !custom svc/v1\n').errors[0].message, /uses no YAML tags/);
  });

  test('nesting deeper than 64 levels is refused, not thrown', () => {
    const deep = 'schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: p\n    config: ' + '['.repeat(200) + ']'.repeat(200) + '\n';
    assert.deepEqual(errorsOf(deep).map((e) => e[0]), ['too-deep']);
    const deeper = '['.repeat(50_000) + ']'.repeat(50_000);
    assert.ok(parseLandscape(deeper).errors.length > 0);
  });

  test('keys that are not text are refused', () => {
    assert.deepEqual(errorsOf('schema: svc/v1\n? [a]\n: b\n'), [['type', '', 2, 3]]);
  });

  test('CRLF line ends and a byte-order mark keep lines and columns right', () => {
    assert.deepEqual(errorsOf('schema: svc/v1\r\nservices:\r\n  web:\r\n    type: stepz\r\n'), [['enum', '/services/web/type', 4, 11]]);
    assert.deepEqual(errorsOf('\ufeffschema: svc/v1\nfoo: 1\n'), [['unknown-key', '/foo', 2, 1]]);
  });

  test('numbers, booleans and null follow YAML 1.2: yes and on stay text', () => {
    const text = 'a: yes\nb: on\nc: 0x1F\nd: 0o17\ne: 012\nf: 1e3\ng: ~\nh: "1"\ni: 1_000\nj: .5\nk: -.inf\n';
    const read = readYaml(text);
    assert.equal(read.reader, 'block');
    assert.deepEqual(plainValue(read.root!), { a: 'yes', b: 'on', c: 31, d: 15, e: 12, f: 1000, g: null, h: '1', i: '1_000', j: 0.5, k: -Infinity });
  });

  test('line index turns offsets into 1-based lines and columns and clamps', () => {
    const lines = new LineIndex('ab\ncd\n');
    assert.deepEqual([lines.position(0), lines.position(4), lines.position(6), lines.position(99), lines.position(-3)], [
      { line: 1, column: 1 },
      { line: 2, column: 2 },
      { line: 3, column: 1 },
      { line: 3, column: 1 },
      { line: 1, column: 1 },
    ]);
  });
});

const corpus = [
  'a:\n  b: 1\nc:\n- x\n-\n- y\nd:\ne: 2\n',
  '- a: 1\n  b: |\n    text\n  c:\n',
  'a: [1, b, "c", \'d\']\nb: {x: 1, "y": two}\nc: { a: 1 , b: 2 }\nd: [ a , b, ]\ne: []\nf: {}\n',
  'a: |\n  x\n\n\nb: |+\n  y\n\n\nc: >\n  p\n  q\n\n  r\nd: >-\n  s\n  t\n',
  'a: |\n  x', 'a: |+\n  x\n\n', 'a: |+\n  x\n  ', 'a: |\n\n  x\n', 'a: |-\n  x\n\n', '- |\n x\n', '- a: |\n   x\n  b: 1\n', 'a: >\n\n  x\n  y\n',
  'a: "x" # c\nb: \'it\'\'s\'\nc: "esc \\" \\\\ \\n \\t \\u00e9 \\x41"\n"q k": 1\n\'s k\': 2\n',
  '---\na: 1\n', '# c\n\n--- # c\na: 1\n', 'a: 1\na: 2\nx-a: 1\nx-a: 2\n', 'a:b: c\nk2: a#b\nk3: "#x"\n',
  'a:\n  - b: 1\n    c:\n    - d\n    - e\n  - f\n', 'a:\n    b: 1\n    c: 2\n', 'a: b\n\n\n', '1: x\n~: y\ntrue: z\n1.5: w\n',
  'services:\n  web:\n    type: steps\n    env:\n      A: "1"\n    steps:\n      - run: |\n          echo hi\n          echo there\n      - name: x\n        run: y\n',
];

describe('the block reader and the yaml package agree', () => {
  for (const text of corpus) {
    test(`same tree for ${JSON.stringify(text).slice(0, 60)}`, () => {
      const fast = readBlockYaml(text);
      assert.ok(fast !== undefined, 'the block reader reads it');
      assert.deepEqual({ root: fast.root, issues: fast.issues }, readYamlDocument(text));
    });
  }

  test('the block reader leaves anchors, tags, tabs and multi-line scalars to the yaml package', () => {
    for (const text of ['a: &x 1\nb: *x\n', 'a: !!str 1\n', 'a:\tb\n', 'a: multi\n  line\n', 'a: "multi\n  line"\n', 'a: [1,\n  2]\n', 'a: 1\r\n', '? a\n: b\n']) {
      assert.equal(readBlockYaml(text), undefined, text);
      assert.equal(readYaml(text).reader, 'yaml');
    }
  });
});

test('on 30000 random block-style texts the block reader either gives up or agrees with the yaml package', () => {
  let state = 7;
  const random = (): number => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const contents = ['a:', 'b: 1', 'c: text here', '- x', '- y: 2', '-', '- |', '- >', 'd: |', 'e: |-', 'f: |+', 'g: >', 'h: >-', 'line of text', '', '# comment', 'j: [1, {k: v}]', 'k: {a: [b, c]}', '"q": 1', "'s': 2", 'l: "x y"', 'm: # c', 'n: a # c', '- - z', 'x-a: 1', 'o: -', '...', '---', 'a: 1', '- a: 1'];
  let agreed = 0;
  for (let i = 0; i < 30_000; i++) {
    const lines = Array.from({ length: 1 + Math.floor(random() * 8) }, () => ' '.repeat(pick([0, 0, 1, 2, 2, 3, 4, 4, 6])) + pick(contents));
    const text = lines.join('\n') + pick(['', '\n', '\n', '\n\n', '  \n', '   ']);
    const fast = readBlockYaml(text);
    if (fast === undefined) continue;
    assert.deepEqual({ root: fast.root, issues: fast.issues }, readYamlDocument(text), JSON.stringify(text));
    agreed++;
  }
  assert.ok(agreed > 500, `${agreed} texts read by both`);
});
