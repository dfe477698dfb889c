// bench/managed: a managed PostgreSQL through svc against the same binaries by hand, in the same run (needs root
// and scripts/setup-postgres.sh's PostgreSQL 16).
//  - create: from POST .../landscape/sync of a file with a new `db` to the instance answering `SELECT 1` as its
//    user, against `initdb` + `pg_ctl start -w` + the same query by hand (target: within 1.5x);
//  - resume: from the Sync after a Teardown to the answer, against a plain `pg_ctl start -w` + the query
//    (target: within 1.2x).
// Each round alternates the two; medians over BENCH_RUNS rounds (default 3).
import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { deletePostgresInstance, installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import { binariesDir, instanceDir } from '../src/managed/postgres-rules.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startSvc } from '../test/helpers/process.ts';

const run = promisify(execFile);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const MAJOR = 16;
const PASSWORD = 'bench password 1';
/** An unprivileged user with an entry in /etc/passwd: initdb and postgres refuse root. */
const HAND_USER = 'nobody';

async function finish(key: ApiClient, operationId: string): Promise<void> {
  for (;;) {
    const operation = (await key.get(`/operations/${operationId}`)).body;
    if (operation.state === 'failed') throw new Error(JSON.stringify(operation.error));
    if (operation.state === 'succeeded') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Connects as `user` and runs SELECT 1, retrying until it answers. */
async function answers(options: { host: string; port: number; user: string; database: string }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ ...options, password: PASSWORD, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (attempt > 500) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** The same binaries by hand, no sandbox: initdb, pg_ctl start -w and the query; then a stop and a plain start. */
async function byHand(toolsDir: string, root: string, round: number): Promise<{ create: number; resume: number }> {
  const bin = path.join(binariesDir(toolsDir, MAJOR), 'bin');
  const dir = path.join(root, `hand-${round}`);
  const data = path.join(dir, 'data');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'pw'), `${PASSWORD}\n`);
  const { uid, gid } = await run('id', ['-u', HAND_USER]).then(async ({ stdout }) => ({ uid: Number(stdout), gid: Number((await run('id', ['-g', HAND_USER])).stdout) }));
  await chown(dir, uid, gid);
  await chown(path.join(dir, 'pw'), uid, gid);
  const port = await freeLoopbackPort();
  const as = (file: string, args: string[]) => run('runuser', ['-u', HAND_USER, '--', file, ...args], { env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' } });
  const start = () => as(path.join(bin, 'pg_ctl'), ['start', '-w', '-D', data, '-l', path.join(dir, 'log'), '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`]);
  const target = { host: '127.0.0.1', port, user: 'app', database: 'postgres' };
  let started = performance.now();
  await as(path.join(bin, 'initdb'), ['-D', data, '-U', 'app', `--pwfile=${path.join(dir, 'pw')}`, '--auth=scram-sha-256', '-E', 'UTF8', '--locale=C.UTF-8', '--lc-messages=C']);
  await start();
  await answers(target);
  const create = performance.now() - started;
  await as(path.join(bin, 'pg_ctl'), ['stop', '-m', 'fast', '-w', '-D', data]);
  started = performance.now();
  await start();
  await answers(target);
  const resume = performance.now() - started;
  await as(path.join(bin, 'pg_ctl'), ['stop', '-m', 'fast', '-w', '-D', data]);
  await rm(dir, { recursive: true, force: true });
  return { create, resume };
}

export async function benchManaged(runs = Number(process.env.BENCH_RUNS) || 3): Promise<void> {
  const sharedTools = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
  if (process.getuid?.() !== 0 || !(await installedPostgresMajors(sharedTools)).includes(MAJOR)) {
    console.log(`bench/managed: skipped (needs root and PostgreSQL ${MAJOR} from scripts/setup-postgres.sh)`);
    return;
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-ms-'));
  await chmod(dataDir, 0o755);
  // Only PostgreSQL from the tools: the editor stays the built-in one, quick to start.
  const tools = path.join(dataDir, 'tools');
  await mkdir(tools, { mode: 0o755 });
  await symlink(path.join(sharedTools, 'postgres'), path.join(tools, 'postgres'));
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--log-level', 'warn'], { DATABASE_URL: database?.url, SVC_TOOLS_DIR: tools });
  let ws: number | undefined;
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const key = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    const org = (await key.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await key.post('/teams', { org_id: org, name: 'Bench' })).body.id;
    const created = await key.post('/workspaces', { team_id: team, name: 'bench-managed', storage_gib: 1 });
    ws = Number(created.body.target.split('/')[2]);
    await finish(key, created.body.id);
    await key.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: PASSWORD });
    const file = path.join(dataDir, 'volumes', String(ws), 'svc.yml');
    // The plan is reviewed before a Sync: the time runs from the Sync request (onSync), which plans again itself.
    const sync = async (onSync: () => void = () => undefined) => {
      const plan = await key.get(`/workspaces/${ws}/landscape/plan`);
      if (plan.status !== 200) throw new Error(plan.text);
      onSync();
      const started = await key.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
      if (started.status !== 202) throw new Error(started.text);
      await finish(key, started.body.id);
    };
    const times = { create: [] as number[], resume: [] as number[], handCreate: [] as number[], handResume: [] as number[] };
    for (let round = 0; round < runs; round++) {
      await writeFile(file, `schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: postgres\n    providerVersion: "${MAJOR}"\n    secrets:\n      password: \${{ secrets.DB_PASSWORD }}\n`);
      let started = 0;
      await sync(() => (started = performance.now()));
      await answers(await recordedTarget(dataDir));
      times.create.push(performance.now() - started);
      await finish(key, (await key.post(`/workspaces/${ws}/landscape/teardown`)).body.id);
      await sync(() => (started = performance.now()));
      await answers(await recordedTarget(dataDir));
      times.resume.push(performance.now() - started);
      // The next round makes a new instance: this one goes with the file's services.
      await writeFile(file, 'schema: svc/v1\n');
      await sync();
      const hand = await byHand(sharedTools, dataDir, round);
      times.handCreate.push(hand.create);
      times.handResume.push(hand.resume);
    }
    const line = (name: string, svcMs: number, handMs: number, target: number) =>
      `  ${name}: svc ${svcMs.toFixed(0)} ms, by hand ${handMs.toFixed(0)} ms, ratio ${(svcMs / handMs).toFixed(2)}x (target within ${target}x)`;
    console.log(`bench/managed: PostgreSQL ${MAJOR}, medians over ${runs} rounds`);
    console.log(line('Sync to a new instance answering SELECT 1 vs initdb + pg_ctl start', median(times.create), median(times.handCreate), 1.5));
    console.log(line('Sync after Teardown to the answer vs pg_ctl start', median(times.resume), median(times.handResume), 1.2));
  } finally {
    // Whatever a failed round left running.
    const numbers = await readdir(path.join(dataDir, 'managed')).catch(() => [] as string[]);
    for (const n of numbers.filter((name) => /^\d+$/.test(name))) await deletePostgresInstance({ dataDir, toolsDir: tools, log: () => undefined }, Number(n));
    if (ws !== undefined) {
      const driver = createLocalDriver({ dataDir });
      await driver.stopWorkspace({ id: ws, uid: 0, storageGib: 1 });
      await driver.deleteVolume({ id: ws, uid: 0, storageGib: 1 });
    }
    svc.child.kill('SIGTERM');
    await svc.exited;
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The address and port of the newest instance under <data dir>/managed, from its process record. */
async function recordedTarget(dataDir: string): Promise<{ host: string; port: number; user: string; database: string }> {
  const numbers = (await readdir(path.join(dataDir, 'managed'))).filter((n) => /^\d+$/.test(n)).map(Number);
  const record = JSON.parse(await readFile(path.join(instanceDir(dataDir, Math.max(...numbers)), 'process.json'), 'utf8')) as { address: string; port: number };
  return { host: record.address, port: record.port, user: 'app', database: 'app' };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchManaged();
