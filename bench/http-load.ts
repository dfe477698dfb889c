// What the HTTP benchmarks share: wrk runs read into requests per second and p99, medians of alternating rounds,
// and a real `svc server` (its own process and data directory, its own database) with an administrator's key.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startSvc, stopSvc } from '../test/helpers/process.ts';

const run = promisify(execFile);

export interface Measurement {
  rps: number;
  p99ms: number;
  /** CPU seconds (user + system) wrk itself used: it runs on the same cores as the server. */
  loadCpuSeconds?: number;
}

export async function wrk(url: string, headers: Record<string, string>, seconds: number, connections = 32): Promise<Measurement> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  // Through /usr/bin/time: what the load generator costs is part of the machine's budget, and is reported.
  const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'wrk-cpu %U %S', 'wrk', ...args]);
  const cpu = /wrk-cpu ([\d.]+) ([\d.]+)/.exec(stderr);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(stdout);
  if (!p99 || !rps) throw new Error(`cannot read wrk output:\n${stdout}`);
  const factor = { us: 0.001, ms: 1, s: 1000 }[p99[2] as 'us' | 'ms' | 's'];
  if (!/Non-2xx/.test(stdout)) return { rps, p99ms: Number(p99[1]) * factor, loadCpuSeconds: cpu ? Number(cpu[1]) + Number(cpu[2]) : undefined };
  throw new Error(`non-2xx answers during the run:\n${stdout}`);
}

export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

export function medianOf(runs: Measurement[]): Measurement {
  return { rps: median(runs.map((r) => r.rps)), p99ms: median(runs.map((r) => r.p99ms)) };
}

export interface BenchServer {
  url: string;
  /** An administrator's API key. */
  admin: ApiClient;
  /** Its database's address (for seeding rows a benchmark needs). */
  databaseUrl: string;
  stop(): Promise<void>;
}

/** `svc server` as installed, with `args` added (e.g. `--data-plane node`); no rate limit in the way of the load. */
export async function startBenchServer(args: string[] = []): Promise<BenchServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-'));
  // With DATABASE_URL the run gets a database of its own on that server, else the embedded default.
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(
    ['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '1000000000', '--log-level', 'warn', ...args],
    { DATABASE_URL: database?.url },
  );
  const stop = async () => {
    await stopSvc(svc);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const admin = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    const info = JSON.parse(await readFile(path.join(dataDir, 'server.json'), 'utf8')) as { database_url: string };
    return { url, admin, databaseUrl: info.database_url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
