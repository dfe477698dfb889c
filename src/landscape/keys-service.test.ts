// Table-driven tests of every service key of svc.yml (spec 2.8): a valid value, and each kind of invalid value
// with its code, pointer, line and column.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LandscapeErrorCode } from './codes.ts';
import { parseLandscape } from './parse-landscape.ts';
import type { ServiceType } from './types.ts';

interface KeyCase {
  /** Lines added to service `web` (indented for it); line 1 of the body is what `at` counts from. */
  body: string;
  type?: ServiceType;
  /** Leave out the keys the type requires (to test them). */
  bare?: boolean;
  code?: LandscapeErrorCode;
  pointer?: string;
  /** [line within the body, column within that body line], both 1-based. */
  at?: [number, number];
  /** Other errors may come with it (the case checks only its own). */
  withOthers?: boolean;
}

const headers: Record<ServiceType, string[]> = {
  steps: ['steps: [{run: start}]'],
  container: ['image: nginx:1.27'],
  managed: ['provider: postgresql'],
  forward: ['target: https://example.com', 'routes: [{path: /fwd}]'],
};

const indent = '    ';

/** The file of a case, and the line where its body starts. */
function fileOf(c: KeyCase): { text: string; bodyLine: number } {
  const type = c.type ?? 'steps';
  const header = [`type: ${type}`, ...(c.bare ? [] : headers[type])];
  const others = ['  db:', '    type: managed', '    provider: postgresql', '  api:', '    type: steps', '    steps: [{run: api}]', '    ports: [{port: 9000, public: true, routes: [{path: /taken}]}]'];
  const lines = ['schema: svc/v1', 'services:', ...others, '  web:', ...header.map((line) => indent + line)];
  const bodyLine = lines.length + 1;
  lines.push(...c.body.split('\n').map((line) => (line === '' ? '' : indent + line)));
  return { text: lines.join('\n') + '\n', bodyLine };
}

const long = (n: number, c = 'a'): string => c.repeat(n);

const cases: Record<string, Record<string, KeyCase>> = {
  type: {
    'valid steps': { body: '' },
    'unknown kind': { body: 'replicas: 1', type: 'step' as ServiceType, bare: true, code: 'enum', pointer: '/services/web/type', at: [-1, 11] },
  },
  plan: {
    valid: { body: 'plan: large-2' },
    pattern: { body: 'plan: Large', code: 'pattern', pointer: '/services/web/plan', at: [1, 7] },
    type: { body: 'plan: 5', code: 'type', pointer: '/services/web/plan', at: [1, 7] },
  },
  replicas: {
    valid: { body: 'replicas: 3' },
    'below 1': { body: 'replicas: 0', code: 'out-of-range', pointer: '/services/web/replicas', at: [1, 11] },
    'above 100': { body: 'replicas: 101', code: 'out-of-range', pointer: '/services/web/replicas', at: [1, 11] },
    'huge number': { body: 'replicas: 99999999999999999999999', code: 'out-of-range', pointer: '/services/web/replicas', at: [1, 11] },
    fraction: { body: 'replicas: 1.5', code: 'type', pointer: '/services/web/replicas', at: [1, 11] },
    text: { body: 'replicas: two', code: 'type', pointer: '/services/web/replicas', at: [1, 11] },
    'above maxReplicas': { body: 'maxReplicas: 3\nreplicas: 5', code: 'out-of-range', pointer: '/services/web/replicas', at: [2, 11] },
    'above the plan default': { body: 'replicas: 12', code: 'out-of-range', pointer: '/services/web/replicas', at: [1, 11] },
  },
  maxReplicas: {
    valid: { body: 'maxReplicas: 10\nreplicas: 10' },
    'below 1': { body: 'maxReplicas: 0', code: 'out-of-range', pointer: '/services/web/maxReplicas', at: [1, 14] },
    'above the plan': { body: 'maxReplicas: 20', code: 'out-of-range', pointer: '/services/web/maxReplicas', at: [1, 14] },
    type: { body: 'maxReplicas: [1]', code: 'type', pointer: '/services/web/maxReplicas', at: [1, 14] },
  },
  availability: {
    valid: { body: 'availability: on-demand' },
    enum: { body: 'availability: sometimes', code: 'enum', pointer: '/services/web/availability', at: [1, 15] },
  },
  idleTimeoutMinutes: {
    valid: { body: 'idleTimeoutMinutes: 1440' },
    'below 1': { body: 'idleTimeoutMinutes: 0', code: 'out-of-range', pointer: '/services/web/idleTimeoutMinutes', at: [1, 21] },
    'above 1440': { body: 'idleTimeoutMinutes: 1441', code: 'out-of-range', pointer: '/services/web/idleTimeoutMinutes', at: [1, 21] },
    text: { body: 'idleTimeoutMinutes: "30"', code: 'type', pointer: '/services/web/idleTimeoutMinutes', at: [1, 21] },
  },
  env: {
    valid: { body: 'env:\n  A: text\n  B_2: 8080\n  _C: true\n  D: ${{ secrets.KEY }}-${{ services.db.dsn }}\n  E: ${{ workspace.devDomain }}${{ team.id }}${{ env.HOME }}\n  x-note: ignored' },
    'not a map': { body: 'env: [A=1]', code: 'type', pointer: '/services/web/env', at: [1, 6] },
    'bad name': { body: 'env:\n  1ABC: x', code: 'pattern', pointer: '/services/web/env/1ABC', at: [2, 3] },
    'name too long': { body: `env:\n  ${long(129, 'A')}: x`, code: 'pattern', pointer: `/services/web/env/${long(129, 'A')}`, at: [2, 3] },
    'reserved name': { body: 'env:\n  SVC_TOKEN: x', code: 'reserved-env-name', pointer: '/services/web/env/SVC_TOKEN', at: [2, 3] },
    'empty value': { body: 'env:\n  A:', code: 'type', pointer: '/services/web/env/A', at: [2, 3] },
    'map value': { body: 'env:\n  A: {b: 1}', code: 'type', pointer: '/services/web/env/A', at: [2, 6] },
    'unknown template root': { body: 'env:\n  A: ${{ vars.X }}', code: 'template-unknown', pointer: '/services/web/env/A', at: [2, 6] },
    'unclosed template': { body: 'env:\n  A: "${{ secrets.X"', code: 'template-syntax', pointer: '/services/web/env/A', at: [2, 6] },
    'template expression': { body: 'env:\n  A: ${{ secrets.X || "d" }}', code: 'template-syntax', pointer: '/services/web/env/A', at: [2, 6] },
    'service not in the file': { body: 'env:\n  A: ${{ services.cache.host }}', code: 'template-unknown', pointer: '/services/web/env/A', at: [2, 6] },
    'service not managed': { body: 'env:\n  A: ${{ services.api.host }}', code: 'template-unknown', pointer: '/services/web/env/A', at: [2, 6] },
  },
  ports: {
    valid: { body: 'ports:\n  - port: 1\n  - port: 65535\n    public: true\n    routes: [{path: /, strip: true}]' },
    'not a list': { body: 'ports: 80', code: 'type', pointer: '/services/web/ports', at: [1, 8] },
    'port missing': { body: 'ports:\n  - public: true', code: 'required', pointer: '/services/web/ports/0/port', at: [2, 5] },
    'port 0': { body: 'ports:\n  - port: 0', code: 'out-of-range', pointer: '/services/web/ports/0/port', at: [2, 11] },
    'port 65536': { body: 'ports:\n  - port: 65536', code: 'out-of-range', pointer: '/services/web/ports/0/port', at: [2, 11] },
    'port as text': { body: 'ports:\n  - port: "80"', code: 'type', pointer: '/services/web/ports/0/port', at: [2, 11] },
    'public not boolean': { body: 'ports:\n  - port: 80\n    public: "yes"', code: 'type', pointer: '/services/web/ports/0/public', at: [3, 13] },
    'unknown key': { body: 'ports:\n  - port: 80\n    host: x', code: 'unknown-key', pointer: '/services/web/ports/0/host', at: [3, 5] },
    'listed twice': { body: 'ports:\n  - port: 80\n  - port: 80', code: 'port-duplicate', pointer: '/services/web/ports/1/port', at: [3, 11] },
    'public twice in the landscape': { body: 'ports:\n  - port: 9000\n    public: true', code: 'public-port-duplicate', pointer: '/services/web/ports/0/port', at: [2, 11] },
  },
  routes: {
    valid: { body: "ports:\n  - port: 80\n    routes:\n      - path: /a/b.c~d!$&'()*+,;=:@%20-\n        strip: false" },
    'path missing': { body: 'ports:\n  - port: 80\n    routes:\n      - strip: true', code: 'required', pointer: '/services/web/ports/0/routes/0/path', at: [4, 9] },
    'no leading slash': { body: 'ports:\n  - port: 80\n    routes: [{path: api}]', code: 'pattern', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'too long': { body: `ports:\n  - port: 80\n    routes: [{path: /${long(256)}}]`, code: 'too-long', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'trailing slash': { body: 'ports:\n  - port: 80\n    routes: [{path: /api/}]', code: 'invalid-path', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'empty segment': { body: 'ports:\n  - port: 80\n    routes: [{path: /a//b}]', code: 'invalid-path', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'dot segment': { body: 'ports:\n  - port: 80\n    routes: [{path: /a/../b}]', code: 'invalid-path', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'bad escape': { body: 'ports:\n  - port: 80\n    routes: [{path: /a%zz}]', code: 'invalid-path', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
    'strip not boolean': { body: 'ports:\n  - port: 80\n    routes: [{path: /a, strip: 1}]', code: 'type', pointer: '/services/web/ports/0/routes/0/strip', at: [3, 32] },
    'routed twice': { body: 'ports:\n  - port: 80\n    routes: [{path: /taken}]', code: 'route-duplicate', pointer: '/services/web/ports/0/routes/0/path', at: [3, 21] },
  },
  health: {
    valid: { body: 'ports: [{port: 80}]\nhealth:\n  port: 80\n  path: /healthz?full=1\n  mode: http-2xx' },
    'port missing': { body: 'ports: [{port: 80}]\nhealth:\n  path: /', code: 'required', pointer: '/services/web/health/port', at: [2, 1] },
    'port not declared': { body: 'ports: [{port: 80}]\nhealth:\n  port: 8080', code: 'port-not-declared', pointer: '/services/web/health/port', at: [3, 9] },
    'port out of range': { body: 'health:\n  port: 70000', code: 'out-of-range', pointer: '/services/web/health/port', at: [2, 9] },
    'relative path': { body: 'ports: [{port: 80}]\nhealth:\n  port: 80\n  path: healthz', code: 'pattern', pointer: '/services/web/health/path', at: [4, 9] },
    'path with a space': { body: 'ports: [{port: 80}]\nhealth:\n  port: 80\n  path: /health check', code: 'invalid-path', pointer: '/services/web/health/path', at: [4, 9] },
    'path too long': { body: `ports: [{port: 80}]\nhealth:\n  port: 80\n  path: /${long(256)}`, code: 'too-long', pointer: '/services/web/health/path', at: [4, 9] },
    'unknown mode': { body: 'ports: [{port: 80}]\nhealth:\n  port: 80\n  mode: tcp', code: 'enum', pointer: '/services/web/health/mode', at: [4, 9] },
    'unknown key': { body: 'ports: [{port: 80}]\nhealth:\n  port: 80\n  interval: 5', code: 'unknown-key', pointer: '/services/web/health/interval', at: [4, 3] },
  },
  mounts: {
    valid: { body: 'mounts:\n  - from: config/app.toml\n    to: /etc/app.toml\n  - from: a/../b\n    to: /b' },
    'absolute from': { body: 'mounts:\n  - from: /etc\n    to: /x', code: 'pattern', pointer: '/services/web/mounts/0/from', at: [2, 11] },
    'from leaves /data/app': { body: 'mounts:\n  - from: a/../../secrets\n    to: /x', code: 'path-escape', pointer: '/services/web/mounts/0/from', at: [2, 11] },
    'empty from': { body: 'mounts:\n  - from: ""\n    to: /x', code: 'too-short', pointer: '/services/web/mounts/0/from', at: [2, 11] },
    'from too long': { body: `mounts:\n  - from: ${long(1025)}\n    to: /x`, code: 'too-long', pointer: '/services/web/mounts/0/from', at: [2, 11] },
    'relative to': { body: 'mounts:\n  - from: a\n    to: etc', code: 'pattern', pointer: '/services/web/mounts/0/to', at: [3, 9] },
    'to is /': { body: 'mounts:\n  - from: a\n    to: /', code: 'pattern', pointer: '/services/web/mounts/0/to', at: [3, 9] },
    'to missing': { body: 'mounts:\n  - from: a', code: 'required', pointer: '/services/web/mounts/0/to', at: [2, 5] },
  },
  needs: {
    valid: { body: 'needs: [db, api]' },
    'not a list': { body: 'needs: db', code: 'type', pointer: '/services/web/needs', at: [1, 8] },
    'unknown service': { body: 'needs: [db, cache]', code: 'needs-unknown', pointer: '/services/web/needs/1', at: [1, 13] },
    itself: { body: 'needs: [web]', code: 'needs-cycle', pointer: '/services/web/needs/0', at: [1, 9] },
    ide: { body: 'needs: [ide]', code: 'needs-ide', pointer: '/services/web/needs/0', at: [1, 9] },
    duplicate: { body: 'needs: [db, db]', code: 'duplicate-item', pointer: '/services/web/needs/1', at: [1, 13] },
    'bad name': { body: 'needs: [Db]', code: 'pattern', pointer: '/services/web/needs/0', at: [1, 9] },
    'more than 64': { body: `needs: [${Array.from({ length: 65 }, (_, i) => `s${i}`).join(', ')}]`, code: 'too-long', pointer: '/services/web/needs', at: [1, 8], withOthers: true },
  },
  steps: {
    valid: { body: 'steps:\n  - name: build\n    run: make\n  - run: |\n      ./server', bare: true },
    missing: { body: 'replicas: 1', bare: true, code: 'required', pointer: '/services/web/steps', at: [-2, 3] },
    empty: { body: 'steps: []', bare: true, code: 'too-short', pointer: '/services/web/steps', at: [1, 8] },
    'run missing': { body: 'steps:\n  - name: x', bare: true, code: 'required', pointer: '/services/web/steps/0/run', at: [2, 5] },
    'template in run': { body: 'steps:\n  - run: echo ${{ secrets.X }}', bare: true, code: 'template-not-allowed', pointer: '/services/web/steps/0/run', at: [2, 10] },
  },
  image: {
    valid: { body: 'image: registry.example.com/team/base@sha256:0123abcd' },
    pattern: { body: 'image: Bad Image', code: 'pattern', pointer: '/services/web/image', at: [1, 8] },
    'too long': { body: `image: ${long(513)}`, code: 'too-long', pointer: '/services/web/image', at: [1, 8] },
    'container without image': { type: 'container', bare: true, body: 'args: [x]', code: 'required', pointer: '/services/web/image', at: [-2, 3] },
  },
  nixWritable: {
    valid: { body: 'nixWritable: true' },
    type: { body: 'nixWritable: yes', code: 'type', pointer: '/services/web/nixWritable', at: [1, 14] },
    'not for containers': { type: 'container', body: 'nixWritable: true', code: 'unknown-key', pointer: '/services/web/nixWritable', at: [1, 1] },
  },
  command: {
    valid: { type: 'container', body: 'command: [/bin/sh, -c]\nargs: ["echo hi"]' },
    'not a list': { type: 'container', body: 'command: /bin/sh', code: 'type', pointer: '/services/web/command', at: [1, 10] },
    'number item': { type: 'container', body: 'args: [--port, 8080]', code: 'type', pointer: '/services/web/args/1', at: [1, 16] },
    'not for steps': { body: 'command: [x]', code: 'unknown-key', pointer: '/services/web/command', at: [1, 1] },
  },
  runAsUser: {
    valid: { type: 'container', body: 'runAsUser: 0' },
    negative: { type: 'container', body: 'runAsUser: -1', code: 'out-of-range', pointer: '/services/web/runAsUser', at: [1, 12] },
    'too large': { type: 'container', body: 'runAsUser: 2147483648', code: 'out-of-range', pointer: '/services/web/runAsUser', at: [1, 12] },
  },
};

describe('service keys of svc.yml', () => {
  for (const [key, keyCases] of Object.entries(cases)) {
    for (const [name, c] of Object.entries(keyCases)) {
      const rule = c.code === undefined ? `${key}: ${name} is accepted` : `${key}: ${name} is refused with ${c.code} at the ${c.code === 'required' ? 'holding key' : 'offending place'}`;
      test(rule, () => {
        const { text, bodyLine } = fileOf(c);
        const { errors } = parseLandscape(text);
        if (c.code === undefined) {
          assert.deepEqual(errors, []);
          return;
        }
        const matching = errors.filter((error) => error.code === c.code);
        assert.equal(c.withOthers ? matching.length : errors.length, 1, JSON.stringify(errors, null, 1));
        const [error] = matching;
        const [line, column] = c.at!;
        const headerLines = c.bare ? 0 : headers[c.type ?? 'steps'].length;
        // Negative lines count back from the body: -1 is the type line, -2 the service's key.
        const expectedLine = line > 0 ? bodyLine + line - 1 : bodyLine - headerLines + line;
        const expectedColumn = line > 0 ? column + indent.length : column;
        assert.deepEqual(
          { code: error.code, pointer: error.pointer, line: error.line, column: error.column, subject: error.subject },
          { code: c.code, pointer: c.pointer, line: expectedLine, column: expectedColumn, subject: error.code === 'unknown-key' || error.code === 'required' ? c.pointer!.split('/').pop() : 'web' },
        );
        assert.ok(error.message.length > 10 && !error.message.includes('undefined'), error.message);
      });
    }
  }
});
