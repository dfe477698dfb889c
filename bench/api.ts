// bench/api: requests per second and p99 of GET /api/v1/version and GET /api/v1/me (API key) on the real
// server, against a bare Node http server answering the same JSON in the same run, measured with wrk.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startSvc } from '../test/helpers/process.ts';

const run = promisify(execFile);

interface Measurement {
  rps: number;
  p99ms: number;
}

async function wrk(url: string, headers: Record<string, string>, seconds: number): Promise<Measurement> {
  const args = ['-t1', '-c32', `-d${seconds}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  const { stdout } = await run('wrk', args);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(stdout);
  if (!p99 || !rps) throw new Error(`cannot read wrk output:\n${stdout}`);
  const factor = { us: 0.001, ms: 1, s: 1000 }[p99[2] as 'us' | 'ms' | 's'];
  if (!/Non-2xx/.test(stdout)) return { rps, p99ms: Number(p99[1]) * factor };
  throw new Error(`non-2xx answers during the run:\n${stdout}`);
}

function medianOf(runs: Measurement[]): Measurement {
  const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { rps: middle(runs.map((r) => r.rps)), p99ms: middle(runs.map((r) => r.p99ms)) };
}

function startBare(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare-server.ts')]);
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match) resolve({ url: match[1], stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
}

export async function benchApi(seconds = Number(process.env.BENCH_SECONDS) || 3): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-'));
  // With DATABASE_URL the run gets a database of its own on that server, else the embedded default.
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(
    ['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '1000000000', '--log-level', 'warn'],
    { DATABASE_URL: database?.url },
  );
  const bare = await startBare();
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const admin = await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length));
    const key = (await admin.mintKey('bench')).auth.token!;
    const cases: Array<{ name: string; path: string; headers: Record<string, string> }> = [
      { name: 'GET /api/v1/version', path: '/api/v1/version', headers: {} },
      { name: 'GET /api/v1/me (API key)', path: '/api/v1/me', headers: { authorization: `Bearer ${key}` } },
    ];
    const rounds = 3;
    console.log(`bench/api: wrk -t1 -c32, ${rounds} alternating rounds of ${seconds}s, medians; database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}`);
    console.log('case                          svc rps   bare rps  ratio   svc p99   bare p99');
    for (const c of cases) {
      await wrk(`${url}${c.path}`, c.headers, 1); // warm-up
      await wrk(`${bare.url}${c.path}`, c.headers, 1);
      // Alternating rounds, so that a noisy neighbour on this shared machine hits both sides alike.
      const oursRuns: Measurement[] = [];
      const referenceRuns: Measurement[] = [];
      for (let round = 0; round < rounds; round++) {
        oursRuns.push(await wrk(`${url}${c.path}`, c.headers, seconds));
        referenceRuns.push(await wrk(`${bare.url}${c.path}`, c.headers, seconds));
      }
      const ours = medianOf(oursRuns);
      const reference = medianOf(referenceRuns);
      console.log(
        `${c.name.padEnd(28)} ${ours.rps.toFixed(0).padStart(8)} ${reference.rps.toFixed(0).padStart(10)}  ${(ours.rps / reference.rps).toFixed(2)}x` +
          `  ${ours.p99ms.toFixed(2).padStart(6)}ms ${reference.p99ms.toFixed(2).padStart(7)}ms`,
      );
    }
  } finally {
    bare.stop();
    svc.child.kill('SIGTERM');
    await svc.exited;
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchApi();
