// `npm test`: every *.test.ts under src/ and test/, in parallel files, against a real PostgreSQL:
// DATABASE_URL when set, otherwise an embedded one started here for the run (each file makes its own database).
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedDatabase } from '../src/store/embedded.ts';

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
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit', env },
);
const code: number = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await embedded?.stop();
if (scratch) await rm(scratch, { recursive: true, force: true });
process.exit(code);
