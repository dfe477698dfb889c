// Where a request's time goes: seeds bench/lists' team, runs wrk, and reads the CPU seconds per request of the
// svc server, its nginx workers, its PostgreSQL backends (/proc) and wrk itself (all share the machine's cores), and
// the statements per request PostgreSQL counted (pg_stat_database, read after its stats are flushed).
// ROUTE=lists (default: a page of 50 of 1,000 workspaces), me (GET /me with a key) or version.
// With PROFILE=dir the server writes a V8 profile of the run; NODE_ARGS='--max-semi-space-size=…' runs the server's
// Node with those flags instead of bin/svc.js's. The server's garbage collections during the run are counted (--trace-gc) and summed.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { writeFile } from 'node:fs/promises';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { ApiClient, createPerson } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { spawn } from 'node:child_process';
import { svcBin, svcNodeFlags, stopSvc, watchSvc } from '../test/helpers/process.ts';
import { wrk } from './http-load.ts';
import { rssMiB } from './process-stats.ts';

const ticks = (pid: number) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch { return 0; }
};
const children = (pid: number): number[] => {
  try {
    const out = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
    return out.flatMap((c) => [c, ...children(c)]);
  } catch { return []; }
};

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-prof-'));
const database = await createTestDatabase();
const profileDir = process.env.PROFILE;
const svcArgs = ['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '1000000000', '--log-level', 'warn', ...(process.env.SVC_ARGS?.split(' ').filter(Boolean) ?? [])];
const nodeArgs = [...(profileDir ? ['--inspect=127.0.0.1:0'] : []), '--trace-gc', ...(process.env.NODE_ARGS?.split(' ').filter(Boolean) ?? svcNodeFlags)];
const svc = watchSvc(spawn(process.execPath, [...nodeArgs, process.env.SVC_BIN ?? svcBin, ...svcArgs], { env: { ...process.env, DATABASE_URL: database.url } }));
try {
  const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
  const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
  const admin = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
  const info = JSON.parse(await readFile(path.join(dataDir, 'server.json'), 'utf8')) as { database_url: string };
  const org = (await admin.post('/orgs', { name: 'Bench' })).body.id;
  const team = (await admin.post('/teams', { org_id: org, name: 'Bench' })).body.id as number;
  const developer = await createPerson(admin, 'lists@example.com');
  await admin.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  const pool = new pg.Pool({ connectionString: info.database_url, max: 4 });
  for (let i = 0; i < 1000; i++) {
    await insertWorkspace(pool, { teamId: team, name: `ws-${i}`, plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
      idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', createdBy: developer.id, at: new Date() });
  }
  await pool.query('ANALYZE workspaces');
  if (process.env.CHECK) {
    for (const q of [`team=${team}&limit=200`, 'limit=50', `team=${team}&deleted=true`]) {
      const a = await developer.key.get(`/workspaces?${q}`);
      console.log(q, a.status, a.headers.get('content-type'), typeof a.body, a.text.slice(0, 100));
    }
    const a = await admin.get('/workspaces?limit=3');
    console.log('admin', a.status, a.text.slice(0, 300));
  }
  const route = process.env.ROUTE ?? 'lists';
  const paths: Record<string, string> = { lists: '/api/v1/workspaces?limit=50', me: '/api/v1/me', version: '/api/v1/version' };
  if (!paths[route]) throw new Error(`ROUTE is one of ${Object.keys(paths).join(', ')}`);
  const target = `${process.env.TARGET_URL ?? url}${paths[route]}`;
  const headers: Record<string, string> = route === 'version' ? {} : { authorization: `Bearer ${developer.key.auth.token}` };
  const dbName = new URL(info.database_url).pathname.slice(1);
  // PostgreSQL 15 flushes a backend's counters at most once a second, and 10 s after it fell idle.
  const statements = async () => {
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    return Number((await pool.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [dbName])).rows[0].n);
  };
  // The server's own background statements (presence, housekeeping, the operation queue) over an idle interval,
  // subtracted from the run's at the same rate.
  const idleFrom = await statements();
  const idleFromAt = Date.now();
  const statementsBefore = await statements();
  const statementsBeforeAt = Date.now();
  const backgroundPerMs = (statementsBefore - idleFrom - 1) / (statementsBeforeAt - idleFromAt);
  const warmUp = await wrk(target, headers, 2);
  const backends = async () => (await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName])).rows.map((r) => r.pid);
  const server = svc.child.pid!;
  const procs = { node: [server], nginx: children(server).filter((p) => /nginx/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'))), pg: await backends() };
  const before = Object.fromEntries(Object.entries(procs).map(([k, ps]) => [k, ps.map(ticks)]));

  const seconds = Number(process.env.SECONDS_WRK) || 8;
  let profiler: ((method: string, params?: object) => Promise<any>) | undefined;
  if (profileDir) {
    const inspectorUrl = /Debugger listening on (ws:\S+)/.exec(svc.stderr())![1];
    const socket = new WebSocket(inspectorUrl);
    await new Promise((resolve) => socket.once('open', resolve));
    let next = 1;
    const pending = new Map<number, (r: any) => void>();
    socket.on('message', (data) => { const m = JSON.parse(String(data)); pending.get(m.id)?.(m.result); });
    profiler = (method, params = {}) => new Promise((resolve) => { const id = next++; pending.set(id, resolve); socket.send(JSON.stringify({ id, method, params })); });
    await profiler('Profiler.enable');
    await profiler('Profiler.setSamplingInterval', { interval: 500 });
    await profiler('Profiler.start');
  }
  const gcFrom = svc.stdout().length;
  const m = await wrk(target, headers, seconds);
  const gcLines = svc.stdout().slice(gcFrom).split('\n');
  const gcOf = (kind: RegExp) => {
    const pauses = gcLines.filter((l) => kind.test(l)).map((l) => Number(/, ([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0));
    return `${pauses.length} (${pauses.reduce((a, b) => a + b, 0).toFixed(0)} ms, longest ${Math.max(0, ...pauses).toFixed(1)} ms)`;
  };
  if (profiler) {
    const { profile } = await profiler('Profiler.stop');
    await writeFile(path.join(profileDir!, `lists-${Date.now()}.cpuprofile`), JSON.stringify(profile));
  }
  const requests = m.rps * seconds;
  const used = Object.entries(procs).map(([k, ps]) => [k, ps.reduce((sum, p, i) => sum + ticks(p) - before[k][i], 0)] as const);
  const line = [...used, ['wrk', m.loadCpuSeconds ?? NaN] as const]
    .map(([k, cpu]) => `${k} ${(cpu * 1e6 / requests).toFixed(0)} µs/req (${(cpu / seconds * 100).toFixed(0)}% cpu)`).join('   ');
  const load = os.loadavg()[0].toFixed(1);
  // less the two statements of this script's own reading
  const statementsAfter = await statements();
  const background = backgroundPerMs * (Date.now() - statementsBeforeAt);
  const perRequest = (statementsAfter - statementsBefore - 2 - background) / (requests + warmUp.rps * 2);
  console.log(`${route}: ${m.rps.toFixed(0)} req/s p99 ${m.p99ms.toFixed(1)} ms   ${line}   ${perRequest.toFixed(2)} statements/req (less ${background.toFixed(0)} of the background)   load ${load}`);
  if (process.env.GC_LINES) console.log(gcLines.filter((l) => /Mark-Compact|Scavenge/.test(l)).filter((_, i, all) => i < 3 || i >= all.length - 3).join('\n'));
  console.log(`  gc during the run: scavenges ${gcOf(/Scavenge/)}, mark-compacts ${gcOf(/Mark-Compact/)}, of ${seconds * 1000} ms; server RSS ${(await rssMiB(server)).toFixed(0)} MiB`);
  await pool.end();
} finally {
  await stopSvc(svc);
  if (process.env.KEEP) console.log(`kept ${database.url}`); else await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
