// `npm test`: every *.test.ts under src/ and test/, in parallel files, against a real PostgreSQL:
// DATABASE_URL when set, otherwise an embedded one started here for the run (each file makes its own database).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedDatabase } from '../src/store/embedded.ts';
import { minutes, readProgress } from './test-progress-read.ts';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' ? [] : testFiles(full);
    return name.endsWith('.test.ts') ? [full] : [];
  });
}

const filters = process.argv.slice(2);
const files = ['src', 'test']
  .flatMap((dir) => testFiles(dir))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();

let embedded: { stop(): Promise<void> } | undefined;
let scratch: string | undefined;
const env = { ...process.env };
if (!env.DATABASE_URL) {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-test-pg-'));
  const database = await startEmbeddedDatabase(scratch, () => undefined, 'postgres');
  embedded = database;
  env.DATABASE_URL = database.url;
  console.log(`tests use an embedded PostgreSQL in ${scratch}`);
}

const concurrency = Math.max(2, os.availableParallelism());
// A test with no timeout of its own fails after SVC_TEST_TIMEOUT_MS (15 min): a hang names itself and the rest go on.
const testTimeout = Number(process.env.SVC_TEST_TIMEOUT_MS ?? 15 * 60_000);
const progressDir = await mkdtemp(path.join(os.tmpdir(), 'svc-test-progress-'));
const progressFile = path.join(progressDir, 'progress.tsv');
const reporter = new URL('./test-progress.mjs', import.meta.url).pathname;
const startedAt = Date.now();
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${testTimeout}`,
    '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${reporter}`, `--test-reporter-destination=${progressFile}`, ...files],
  { stdio: 'inherit', env },
);
const exited = new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));

// SVC_TEST_DEADLINE (seconds since the epoch, CI sets it): at that time the run stops, naming what was still running.
const deadline = Number(process.env.SVC_TEST_DEADLINE ?? 0) * 1000;
let timer: NodeJS.Timeout | undefined;
const overrun = deadline > 0 ? new Promise<'deadline'>((resolve) => { timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now())); }) : undefined;
process.once('SIGTERM', () => {
  const { running } = readProgress(progressFile, Date.now() - startedAt);
  console.error(`\ntests: stopped by SIGTERM after ${minutes(Date.now() - startedAt)}; still running:`);
  for (const test of running) console.error(`  ${test.file}: ${test.name} (${minutes(test.ms)})`);
  child.kill('SIGTERM');
  process.exitCode = 1;
});
const first = await Promise.race([exited, ...(overrun ? [overrun] : [])]);
clearTimeout(timer);
let code: number;
if (first === 'deadline') {
  const { running } = readProgress(progressFile, Date.now() - startedAt);
  console.error(`\ntests: the deadline came after ${minutes(Date.now() - startedAt)}; still running:`);
  for (const test of running) console.error(`  ${test.file}: ${test.name} (${minutes(test.ms)})`);
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
  code = 1;
} else code = first;
const { files: spans } = readProgress(progressFile, Date.now() - startedAt);
console.error(`\ntests: ${minutes(Date.now() - startedAt)} in all; the slowest files:`);
for (const span of spans.slice(0, 12)) console.error(`  ${minutes(span.ms).padStart(9)}  ${span.file}`);
await rm(progressDir, { recursive: true, force: true });
await embedded?.stop();
if (scratch) await rm(scratch, { recursive: true, force: true });
process.exit(code);
