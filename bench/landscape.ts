// bench/landscape: median time to check a generated 1 MB svc.yml with parseLandscape (YAML, schema, rules),
// against the yaml package merely parsing the same text in the same run. Target: under 100 ms.
import { parseDocument } from 'yaml';
import { parseLandscape } from '../src/landscape/index.ts';

const targetMs = 100;

/** A valid landscape of about `bytes` characters, with every kind of service, templates and needs. */
export function generateLandscape(bytes: number): string {
  const parts = ['# yaml-language-server: $schema=https://svc.example/api/v1/schemas/svc.json\nschema: svc/v1\n'];
  parts.push('prepare:\n  - name: install\n    run: npm ci\ntest:\n  - run: npm test\nservices:\n');
  parts.push('  db:\n    type: managed\n    provider: postgresql\n    resources:\n      memory: 1.5Gi\n      storage: 10240\n    secrets:\n      PASSWORD: ${{ secrets.DB_PASSWORD }}\n');
  let size = parts.join('').length;
  for (let i = 0; size < bytes; i++) {
    const part = service(i);
    parts.push(part);
    size += part.length;
  }
  return parts.join('');
}

function service(i: number): string {
  const name = `svc-${i}`;
  const needs = i === 0 ? '[db]' : `[db, svc-${i - 1}]`;
  if (i % 10 === 7) return `  ${name}:\n    type: forward\n    target: https://api.example.com/v${i}\n    routes:\n      - path: /forward/${i}\n        strip: true\n`;
  if (i % 10 === 3) {
    return `  ${name}:\n    type: container\n    image: registry.example.com/team/app-${i}@sha256:${'ab'.repeat(32)}\n    command: ["/bin/server", "--port", "8080"]\n    ports:\n      - port: 8080\n        routes:\n          - path: /c/${i}\n    needs: ${needs}\n`;
  }
  return [
    `  ${name}:`,
    '    type: steps',
    '    replicas: 2',
    '    maxReplicas: 4',
    '    availability: on-demand',
    '    idleTimeoutMinutes: 15',
    '    env:',
    '      NODE_ENV: production',
    `      PORT: ${3000 + (i % 1000)}`,
    "      DATABASE_URL: ${{ services.db.dsn }}",
    "      DEV_URL: https://${{ workspace.devDomain }}/app",
    '    ports:',
    `      - port: ${3000 + (i % 1000)}`,
    `        public: ${i < 60000 ? 'false' : 'true'}`,
    '        routes:',
    `          - path: /app/${i}`,
    '            strip: true',
    '    health:',
    `      port: ${3000 + (i % 1000)}`,
    '      path: /healthz',
    '      mode: http-2xx',
    '    mounts:',
    '      - from: config/app.toml',
    '        to: /etc/app/app.toml',
    `    needs: ${needs}`,
    '    steps:',
    '      - name: build',
    '        run: npm run build',
    '      - run: |',
    '          node server.js \\',
    `            --port ${3000 + (i % 1000)}`,
    '',
  ].join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(runs: number, work: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    work();
    times.push(performance.now() - start);
  }
  return median(times);
}

export async function benchLandscape(): Promise<void> {
  const text = generateLandscape(1024 * 1024);
  const check = parseLandscape(text);
  if (check.errors.length > 0) throw new Error(`the generated landscape has errors: ${JSON.stringify(check.errors.slice(0, 3))}`);
  const services = Object.keys(check.landscape?.services ?? {}).length;
  time(5, () => parseLandscape(text));
  const ours = time(21, () => parseLandscape(text));
  const reference = time(3, () => parseDocument(text));
  const megabytes = (text.length / 1024 / 1024).toFixed(2);
  console.log(`landscape: parseLandscape on ${megabytes} MB (${services} services): median ${ours.toFixed(1)} ms (target ${targetMs} ms, ${ours <= targetMs ? 'met' : 'MISSED'})`);
  console.log(`landscape: yaml package parseDocument alone on the same text: median ${reference.toFixed(1)} ms; ratio ours/reference ${(ours / reference).toFixed(3)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchLandscape();
}
