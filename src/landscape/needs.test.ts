// needs between services: unknown names, a service needing itself, cycles with their path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cyclicComponents } from './needs.ts';
import { parseLandscape } from './parse-landscape.ts';

function landscape(needs: Record<string, string[]>, types: Record<string, string> = {}): string {
  const services = Object.entries(needs).map(([name, list]) => {
    const type = types[name] ?? 'steps';
    const body = type === 'managed' ? '    provider: p\n' : type === 'forward' ? '    target: https://x.example\n    routes: [{path: /' + name + '}]\n' : `    steps: [{run: ${name}}]\n    needs: [${list.join(', ')}]\n`;
    return `  ${name}:\n    type: ${type}\n${body}`;
  });
  return `schema: svc/v1\nservices:\n${services.join('')}`;
}

const errors = (text: string) => parseLandscape(text).errors.map((e) => ({ code: e.code, pointer: e.pointer, line: e.line, column: e.column, message: e.message }));

test('needs may name steps, container, managed and forward services', () => {
  assert.deepEqual(errors(landscape({ web: ['db', 'api', 'fwd'], api: ['db'], db: [], fwd: [] }, { db: 'managed', fwd: 'forward' })), []);
});

test('a cycle of two is reported once, with its path, at the first service of the file', () => {
  assert.deepEqual(errors(landscape({ web: ['api'], api: ['web'] })), [
    { code: 'needs-cycle', pointer: '/services/web/needs/0', line: 6, column: 13, message: 'services need each other in a cycle: web → api → web; remove one of these needs' },
  ]);
});

test('a longer cycle shows every service on it, and services leading into it are not blamed', () => {
  const result = errors(landscape({ entry: ['a'], a: ['b'], b: ['c'], c: ['a', 'leaf'], leaf: [] }));
  assert.equal(result.length, 1);
  assert.equal(result[0].pointer, '/services/a/needs/0');
  assert.match(result[0].message, /a → b → c → a/);
});

test('separate cycles are reported separately and the shortest way round is shown', () => {
  const result = errors(landscape({ a: ['b', 'c'], b: ['a'], c: ['a'], x: ['y'], y: ['x'] }));
  assert.deepEqual(result.map((e) => e.message.split(': ')[1]), ['a → b → a; remove one of these needs', 'x → y → x; remove one of these needs']);
});

test('a service needing itself, an unknown name and ide each have their code', () => {
  const result = errors(landscape({ web: ['web', 'dbb', 'ide'], db: [] }, { db: 'managed' }));
  assert.deepEqual(result.map((e) => [e.code, e.pointer]), [
    ['needs-cycle', '/services/web/needs/0'],
    ['needs-unknown', '/services/web/needs/1'],
    ['needs-ide', '/services/web/needs/2'],
  ]);
  assert.equal(result[1].message, 'service web needs dbb, which is not a service of this file; did you mean db?');
});

test('a chain of 5000 services is checked without deep recursion', () => {
  const graph = Array.from({ length: 5000 }, (_, i) => (i + 1 < 5000 ? [i + 1] : [0]));
  const components = cyclicComponents(graph);
  assert.equal(components.length, 1);
  assert.equal(components[0].length, 5000);
  assert.deepEqual(cyclicComponents(Array.from({ length: 5000 }, (_, i) => (i + 1 < 5000 ? [i + 1] : []))), []);
});
