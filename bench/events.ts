// bench/events: 1,000 SSE subscribers on one server (its own process). Measures the time from the COMMIT of a
// transaction that publishes an event to each subscriber receiving it (p50/p99 against the 30 ms target of issue 17), then
// shows that a subscriber that stops reading is dropped at its cap instead of growing the server's memory.
// The reference, in the same run and with rounds taken in turns: a bare Node server (bench/bare-events-server.ts)
// writing each NOTIFY payload to as many SSE clients, the least a fan-out in Node costs on this machine.
// The subscribers of both run on raw sockets in the same client processes (bench/events-clients.ts), so the client
// side stays out of the way; each round is split into commit → server has it → last write → last client from the
// servers' traces (SVC_EVENTS_TRACE), and each server's CPU per event is read from /proc.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { publishEvent } from '../src/events/publish.ts';
import { ApiClient, createPerson } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { svcBin, watchSvc } from '../test/helpers/process.ts';
import { recordResult } from './summary.ts';
import { cpuMs, descendants, openFileLimit, rssMiB, softirqThreadDirs } from './process-stats.ts';
import { ms, Side, type RoundTimes } from './events-side.ts';

const TARGET_P99_MS = 30; // issue 17

interface Subscriber {
  ready: Promise<void>;
  bytes: number;
  events: number;
  ended: Promise<string>;
  request: http.ClientRequest;
  response?: http.IncomingMessage;
}

/** A subscriber in this process, for the one that stops reading. */
function subscribe(url: string, token: string | undefined, agent: http.Agent, paused = false): Subscriber {
  let readyResolve!: () => void;
  let endResolve!: (why: string) => void;
  const subscriber = {
    ready: new Promise<void>((resolve) => (readyResolve = resolve)),
    ended: new Promise<string>((resolve) => (endResolve = resolve)),
    bytes: 0,
    events: 0,
  } as Subscriber;
  let buffer = '';
  subscriber.request = http.get(`${url}/api/v1/events`, { agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (response) => {
    subscriber.response = response;
    if (response.statusCode !== 200) throw new Error(`GET /events answered ${response.statusCode}`);
    if (paused) {
      response.pause();
      readyResolve();
    }
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      subscriber.bytes += chunk.length;
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.startsWith(':')) continue;
        subscriber.events++;
        if (frame.includes('event: ready')) readyResolve();
      }
    });
    response.on('end', () => endResolve('ended by the server'));
    response.on('error', (error) => endResolve(error.message));
  });
  subscriber.request.on('error', (error) => endResolve(error.message));
  return subscriber;
}


async function startBare(databaseUrl: string): Promise<{ url: string; pid: number; stop: () => Promise<void>; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare-events-server.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, BARE_CHANNEL },
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)\n/.exec(out);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`the bare event server exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const BARE_CHANNEL = 'bench_bare_events';

/** The subscribers' worker processes (bench/events-clients.ts). */
class Clients {
  private readonly workers: ChildProcess[] = [];
  private readonly waiting = new Map<string, { left: number; times: number[]; busyMs: number; resolve: (r: RoundTimes) => void }>();
  private failure?: Error;
  /** Processes holding subscribers of each group. */
  private readonly reporting = new Map<string, number>();
  private readonly failures = new Set<(error: Error) => void>();

  constructor(readonly processes: number) {
    for (let i = 0; i < processes; i++) {
      const worker = fork(path.join(import.meta.dirname, 'events-clients.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      worker.on('message', (message: WorkerMessage) => this.message(message));
      worker.on('exit', (code) => code && this.fail(new Error(`a client process exited with ${code}`)));
      this.workers.push(worker);
    }
  }

  /** Opens one subscriber per token (undefined: no credentials), dealt out over the processes in turn. */
  async open(group: string, url: string, tokens: Array<string | undefined>): Promise<void> {
    const shares = this.workers.map((_, k) => tokens.filter((_, i) => i % this.processes === k));
    this.reporting.set(group, shares.filter((share) => share.length > 0).length);
    const used = this.workers.filter((_, k) => shares[k].length > 0);
    await this.expect(`opened ${group}`, used.length, () => this.workers.forEach((worker, k) => worker.send({ open: { group, url, tokens: shares[k] } })));
  }

  /** Resolves with every subscriber's receipt time of the round (ms of the monotonic clock). */
  round(group: string, round: number): Promise<RoundTimes> {
    return this.expect(`${group} ${round}`, this.reporting.get(group)!);
  }

  private expect(key: string, reports: number, then?: () => void): Promise<RoundTimes> {
    if (this.failure) return Promise.reject(this.failure);
    const promise = new Promise<RoundTimes>((resolve, reject) => {
      if (reports === 0) return resolve({ times: [], busyMs: 0 });
      const failed = (error: Error) => {
        clearTimeout(timer);
        this.failures.delete(failed);
        reject(error);
      };
      const timer = setTimeout(() => failed(new Error(`timed out waiting for ${key}`)), 30_000);
      this.failures.add(failed);
      this.waiting.set(key, { left: reports, times: [], busyMs: 0, resolve: (r) => (clearTimeout(timer), this.failures.delete(failed), resolve(r)) });
    });
    then?.();
    return promise;
  }

  private message(message: WorkerMessage): void {
    if ('failed' in message) return this.fail(new Error(message.failed));
    const key = 'opened' in message ? `opened ${message.opened}` : `${message.group} ${message.round}`;
    const entry = this.waiting.get(key);
    if (!entry) return this.fail(new Error(`unexpected report ${key}`));
    if ('times' in message) {
      entry.times.push(...message.times);
      entry.busyMs = Math.max(entry.busyMs, message.busyMs);
    }
    if (--entry.left === 0) {
      this.waiting.delete(key);
      entry.resolve({ times: entry.times, busyMs: entry.busyMs });
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const failed of [...this.failures]) failed(error);
  }

  close(): void {
    for (const worker of this.workers) if (worker.connected) worker.send({ close: true });
  }
}

type WorkerMessage = { opened: string } | { round: number; group: string; times: number[]; busyMs: number } | { failed: string };


const nowMs = () => Number(process.hrtime.bigint()) / 1e6;



export async function benchEvents(
  subscribers = Number(process.env.BENCH_SUBSCRIBERS) || 1000,
  rounds = Number(process.env.BENCH_EVENTS) || 100,
  processes = Number(process.env.BENCH_CLIENT_PROCESSES) || 2,
): Promise<void> {
  const needed = 2 * subscribers + 200;
  const limit = await openFileLimit();
  if (limit < needed) throw new Error(`bench/events needs ${needed} open files; raise the limit (ulimit -n ${needed}) and run again`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-'));
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  // BENCH_SVC_NODE_FLAGS: flags for svc's node, such as `--cpu-prof --cpu-prof-dir=DIR` for a profile of the server.
  const nodeFlags = process.env.BENCH_SVC_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  // BENCH_EVENTS_DATA_PLANE=node: svc without its nginx in front (what the router's hop costs).
  const dataPlane = process.env.BENCH_EVENTS_DATA_PLANE ?? 'nginx';
  const serverArgs = ['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '1000000000', '--log-level', 'warn', '--data-plane', dataPlane];
  const svc = watchSvc(
    spawn(process.execPath, [...nodeFlags, svcBin, ...serverArgs], { env: { ...process.env, DATABASE_URL: database?.url, SVC_EVENTS_TRACE: '1' } }),
  );
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const clients = new Clients(processes);
  let bare: Awaited<ReturnType<typeof startBare>> | undefined;
  let db: pg.Client | undefined;
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const databaseUrl = JSON.parse(await readFile(path.join(dataDir, 'server.json'), 'utf8')).database_url as string;
    const admin = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    const org = (await admin.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await admin.post('/teams', { org_id: org, name: 'Fast readers' })).body.id as number;
    const stalledTeam = (await admin.post('/teams', { org_id: org, name: 'Stalled reader' })).body.id as number;
    // 50 users share the subscribers, so standings are per user as on a real server.
    const people: Array<Awaited<ReturnType<typeof createPerson>>> = [];
    for (let i = 0; i < 50; i++) {
      const person = await createPerson(admin, `bench-${i}@example.com`);
      await admin.put(`/teams/${team}/members/${person.id}`, { role: 'viewer' });
      people.push(person);
    }
    const staller = await createPerson(admin, 'bench-stalled@example.com');
    await admin.put(`/teams/${stalledTeam}/members/${staller.id}`, { role: 'viewer' });

    const base = Date.parse('2030-01-01T00:00:00.000Z');
    const started = performance.now();
    await clients.open('svc', url, Array.from({ length: subscribers }, (_, i) => people[i % people.length].key.auth.token!));
    const connectSeconds = (performance.now() - started) / 1000;
    bare = await startBare(databaseUrl);
    await clients.open('reference', bare.url, Array.from({ length: subscribers }, () => undefined));

    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const svcSide = new Side();
    const bareSide = new Side();
    const softirqDirs = await softirqThreadDirs();
    // svc's nginx (its children) forwards every event too: its CPU counts with svc's.
    const nginxPids = await descendants(svc.child.pid!);
    const nginxCpu = async () => (await Promise.all(nginxPids.map((pid) => cpuMs(pid).catch(() => 0)))).reduce((a, b) => a + b, 0);
    const nginxBefore = await nginxCpu();
    const cpuBefore = [await cpuMs(svc.child.pid!), await cpuMs(bare.pid)];
    for (let round = 1; round <= rounds; round++) {
      await db.query('BEGIN');
      await publishEvent(db as unknown as pg.PoolClient, { type: 'team.updated', at: new Date(base + round).toISOString(), team_id: team });
      await svcSide.scheduled(svc.child.pid!, softirqDirs, async () => {
        const received = clients.round('svc', round);
        const committing = nowMs();
        await db!.query('COMMIT');
        svcSide.add(committing, await received);
      });
      // The same event to the reference, as a bare NOTIFY whose payload is the frame's data.
      const data = JSON.stringify({ type: 'team.updated', at: new Date(base + round).toISOString(), team_id: team });
      await bareSide.scheduled(bare.pid, softirqDirs, async () => {
        const bareReceived = clients.round('reference', round);
        const committing = nowMs();
        await db!.query('SELECT pg_notify($1, $2)', [BARE_CHANNEL, data]);
        bareSide.add(committing, await bareReceived);
      });
    }
    // What each server spent on the CPU per event, whatever else runs on the machine (the bench's own queries
    // count on svc's side only for its event row reads and standing checks, as they should).
    const [svcCpu, bareCpu] = [(await cpuMs(svc.child.pid!)) - cpuBefore[0], (await cpuMs(bare.pid)) - cpuBefore[1]].map((cpu) => cpu / rounds);
    const routerCpu = ((await nginxCpu()) - nginxBefore) / rounds;
    svcSide.phases(svc.stderr());
    bareSide.phases(bare.output());
    const { p50, p99 } = svcSide;
    const bareP50 = bareSide.p50;
    const bareP99 = bareSide.p99;
    console.log(
      `bench/events: ${subscribers} SSE subscribers (50 users) per server, ${rounds} events, commit to receipt; connected in ${connectSeconds.toFixed(1)} s; ` +
        `the subscribers of both servers are raw sockets spread over the same ${processes} client processes`,
    );
    console.log(`${svcSide.line('svc')}   p99/target ${(p99 / TARGET_P99_MS).toFixed(2)}x (target p99 < ${TARGET_P99_MS} ms)`);
    console.log(svcSide.phaseLine());
    console.log(svcSide.schedLine(rounds));
    if (process.env.BENCH_EVENTS_DETAIL) for (const [i, line] of svcSide.detail.entries()) console.log(`    svc ${i + 1}: ${line}   reference: ${bareSide.detail[i]}`);
    console.log(`${bareSide.line('reference')}   (bare Node server, NOTIFY payload written to each client)`);
    console.log(bareSide.phaseLine());
    console.log(bareSide.schedLine(rounds));
    console.log(`  svc/reference: p50 ${(p50 / bareP50).toFixed(2)}x   p99 ${(p99 / bareP99).toFixed(2)}x`);
    console.log(`  server CPU per event (user + system, from /proc): svc ${ms(svcCpu)}, reference ${ms(bareCpu)} (${(svcCpu / bareCpu).toFixed(2)}x); ` +
      (nginxPids.length > 0 ? `svc's nginx in front of it (${nginxPids.length} processes) ${ms(routerCpu)} more` : `svc without nginx (--data-plane ${dataPlane})`));
    recordResult('events', {
      measured: `p99 ${p99.toFixed(1)} ms (p50 ${p50.toFixed(1)} ms), ${subscribers} subscribers; bare Node reference p99 ${bareP99.toFixed(1)} ms (${(p99 / bareP99).toFixed(2)}×)`,
      met: p99 < TARGET_P99_MS,
    });

    if (process.env.BENCH_EVENTS_STALLED === '0') {
      console.log('  stalled subscriber: not measured in this run (BENCH_EVENTS_STALLED=0)');
      return;
    }
    // A subscriber that never reads, sent 64 KiB events: the server must drop it, not buffer everything.
    const stalled = subscribe(url, staller.key.auth.token!, agent, true);
    await stalled.ready;
    const before = await rssMiB(svc.child.pid!);
    const big = { id: 1, team_id: stalledTeam, name: 'x'.repeat(64 * 1024) };
    const bigEvents = 640;
    const rss: number[] = [];
    let round = rounds;
    for (const half of [1, 2]) {
      for (let i = 0; i < bigEvents / 2; i += 20) {
        await db.query('BEGIN');
        for (let j = 0; j < 20; j++) {
          const event = { type: 'workspace.updated' as const, at: new Date().toISOString(), team_id: stalledTeam, workspace_id: 1, workspace: big };
          await publishEvent(db as unknown as pg.PoolClient, event);
        }
        await db.query('COMMIT');
      }
      // A round for the readers: they were not held up, and the fan-out has passed every big event by then.
      round++;
      await db.query('BEGIN');
      await publishEvent(db as unknown as pg.PoolClient, { type: 'team.updated', at: new Date(base + round).toISOString(), team_id: team });
      const received = clients.round('svc', round);
      await db.query('COMMIT');
      await received;
      rss.push(await rssMiB(svc.child.pid!));
    }
    stalled.response!.resume();
    const why = await Promise.race([stalled.ended, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 30_000))]);
    const sentMiB = (bigEvents * 64) / 1024;
    if (why === 'still open') throw new Error('the server kept the stalled subscriber: its buffer is not capped');

    console.log(
      `  stalled subscriber: ${sentMiB.toFixed(0)} MiB published to it, never read; the server dropped it (client saw: ${why}), ` +
        `${Math.max(0, stalled.events - 1)} of ${bigEvents} events readable afterwards; ` +
        `server RSS ${before.toFixed(0)} MiB before, ${rss[0].toFixed(0)} after ${(sentMiB / 2).toFixed(0)} MiB, ${rss[1].toFixed(0)} after ${sentMiB.toFixed(0)} MiB`,
    );
  } finally {
    clients.close();
    agent.destroy();
    await bare?.stop();
    await db?.end();
    svc.child.kill('SIGTERM');
    await svc.exited;
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchEvents();
