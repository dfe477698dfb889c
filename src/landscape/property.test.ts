// Property test: thousands of random mutations of valid landscape files (deleted and swapped lines, changed
// indentation, random bytes, huge numbers, deep nesting, cut files). Checking never throws, always ends
// quickly, places every error inside the file, and the fast block reader agrees with the yaml package.
// Seeded: SVC_PROPERTY_SEED=<n> replays a run; a failure names its seed and case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { landscapeErrorCodes } from './codes.ts';
import { normalizeLandscape } from './normal-form.ts';
import { parseLandscape } from './parse-landscape.ts';
import { readBlockYaml } from './yaml-block.ts';
import { readYamlDocument } from './yaml-document.ts';
import { checkSemantics } from './semantics.ts';
import { defaultLandscapeDefaults } from './types.ts';

const seed = Number(process.env.SVC_PROPERTY_SEED ?? 20240611);
const cases = Number(process.env.SVC_PROPERTY_CASES ?? 3000);

/** mulberry32: small, fast, good enough to pick mutations. */
function prng(start: number): () => number {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = ReturnType<typeof prng>;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const int = (random: Random, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

/** A valid landscape in varied styles. */
function validLandscape(random: Random): string {
  const count = int(random, 1, 6);
  const names = Array.from({ length: count }, (_, i) => `s${i}-${pick(random, ['web', 'api', 'db', 'job'])}`);
  const lines = ['# generated', 'schema: svc/v1'];
  if (random() < 0.6) lines.push('prepare:', '  - name: install', `    run: ${pick(random, ['npm ci', '"make all"', "'echo it''s'"])}`);
  if (random() < 0.3) lines.push('x-defaults: &defaults', '  replicas: 2');
  lines.push('services:');
  names.forEach((name, i) => {
    const kind = pick(random, ['steps', 'steps', 'container', 'managed', 'forward']);
    lines.push(`  ${name}:`, `    type: ${kind}`);
    if (kind === 'managed') {
      lines.push('    provider: postgresql', '    resources:', `      memory: ${pick(random, ['512Mi', '1.5Gi', '2048'])}`, '    secrets:', '      PW: ${{ secrets.PW }}');
      return;
    }
    if (kind === 'forward') {
      lines.push('    target: https://example.com', '    routes:', `      - path: /f${i}`, '        strip: true');
      return;
    }
    if (kind === 'container') lines.push('    image: docker.io/library/nginx:1.27', '    args: ["-g", "daemon off;"]');
    else lines.push('    steps:', '      - run: |', '          npm start', `          echo ${i}`);
    const port = 3000 + i;
    lines.push('    env:', `      PORT: ${port}`, '      URL: https://${{ workspace.devDomain }}', `      FLAG: ${pick(random, ['true', '"yes"', "'x'"])}`);
    lines.push('    ports:', `      - port: ${port}`, `        public: ${random() < 0.5}`, `        routes: [{path: /p${i}}]`);
    if (random() < 0.5) lines.push('    health:', `      port: ${port}`, '      path: /healthz');
    if (i > 0 && random() < 0.6) lines.push(`    needs: [${names[i - 1]}]`);
    if (random() < 0.3) lines.push('    mounts:', '      - from: config/app.toml', '        to: /etc/app.toml');
  });
  return lines.join('\n') + '\n';
}

const noise = ['\t', ':', ': ', '- ', '#', '"', "'", '[', ']', '{', '}', ',', '&a ', '*a', '!', '|', '>', '%', '@', '`', '\r', '\u0000', '\ufeff', 'é', '😀', '${{', '}}', '<<: ', '---\n', '?', '\\'];

function mutate(random: Random, text: string): string {
  const lines = text.split('\n');
  const at = int(random, 0, lines.length - 1);
  switch (int(random, 0, 9)) {
    case 0:
      lines.splice(at, 1);
      break;
    case 1: {
      const other = int(random, 0, lines.length - 1);
      [lines[at], lines[other]] = [lines[other], lines[at]];
      break;
    }
    case 2:
      lines[at] = random() < 0.5 ? ' '.repeat(int(random, 1, 4)) + lines[at] : lines[at].replace(/^ {1,3}/, '');
      break;
    case 3: {
      const position = int(random, 0, text.length);
      const bytes = Array.from({ length: int(random, 1, 6) }, () => (random() < 0.7 ? pick(random, noise) : String.fromCharCode(int(random, 0, 0xffff)))).join('');
      return text.slice(0, position) + bytes + text.slice(position);
    }
    case 4:
      return text.replace(/\d+/g, (digits) => (random() < 0.3 ? pick(random, ['99999999999999999999999999', '1e400', '-0', '0x7fffffff', '.nan', '1.5']) : digits));
    case 5: {
      const depth = int(random, 10, 2000);
      lines.splice(at, 0, `x-deep: ${'['.repeat(depth)}${random() < 0.5 ? ']'.repeat(depth) : ''}`);
      break;
    }
    case 6: {
      const depth = int(random, 10, 300);
      lines.splice(at, 0, ...Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k${i}:`));
      break;
    }
    case 7:
      return text.slice(0, int(random, 0, text.length));
    case 8:
      lines.splice(at, 0, lines[int(random, 0, lines.length - 1)]);
      break;
    default:
      lines[at] = lines[at].replace(/:( |$)/, pick(random, [' :', '::', ': &x ', ': *x', ': !!str ', ':\t']));
  }
  return lines.join('\n');
}

function assertInside(text: string, errors: ReturnType<typeof parseLandscape>['errors'], label: string): void {
  const lines = text.split('\n');
  for (const error of errors) {
    assert.ok(Object.hasOwn(landscapeErrorCodes, error.code), `${label}: known code ${error.code}`);
    assert.ok(error.line >= 1 && error.line <= lines.length, `${label}: line ${error.line} of ${lines.length}`);
    assert.ok(error.column >= 1 && error.column <= lines[error.line - 1].length + 1, `${label}: column ${error.column} on line ${error.line}`);
    assert.ok(error.pointer === '' || error.pointer.startsWith('/'), `${label}: pointer ${error.pointer}`);
    assert.ok(error.message.length > 0 && !error.message.includes('undefined'), `${label}: message ${error.message}`);
  }
}

test(`generated landscapes are valid and read by the block reader (seed ${seed})`, () => {
  const random = prng(seed);
  for (let i = 0; i < 200; i++) {
    const text = validLandscape(random);
    const result = parseLandscape(text);
    assert.deepEqual(result.errors, [], `case ${i}:\n${text}`);
    assert.ok(result.landscape !== undefined);
    normalizeLandscape(result.landscape);
    if (!text.includes('&defaults')) assert.ok(readBlockYaml(text) !== undefined, `case ${i} read by the block reader:\n${text}`);
  }
});

test(`${cases} random mutations never throw and place errors inside the file (seed ${seed})`, () => {
  const random = prng(seed + 1);
  let compared = 0;
  for (let i = 0; i < cases; i++) {
    let text = validLandscape(random);
    for (let n = int(random, 1, 3); n > 0; n--) text = mutate(random, text);
    const label = `seed ${seed} case ${i}`;
    // No time limit here (CI's cores are shared): the server bounds a check by its budget in a worker
    // (landscape-limits.test.ts), and bench/landscape measures speed.
    const result = parseLandscape(text);
    assertInside(text, result.errors, label);
    assert.equal(result.landscape === undefined, result.errors.length > 0, label);
    if (result.landscape !== undefined) normalizeLandscape(result.landscape);
    const fast = readBlockYaml(text);
    if (fast !== undefined) {
      compared++;
      assert.deepEqual({ root: fast.root, issues: fast.issues }, readYamlDocument(text), `${label}: the block reader and the yaml package disagree on\n${JSON.stringify(text)}`);
      if (fast.root !== null) {
        const collected = checkSemantics(fast.root, defaultLandscapeDefaults, fast.templated);
        assert.deepEqual(collected, checkSemantics(fast.root, defaultLandscapeDefaults), `${label}: collected templates and the tree search disagree`);
      }
    }
  }
  assert.ok(compared > cases / 10, `the block reader read ${compared} of ${cases} mutated files`);
});
