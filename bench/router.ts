// bench/router: the router's data plane and wake on request, on a real server with a real workspace whose `steps`
// service is a trivial HTTP server (small body). Measured with wrk, in the same run: (a) the service directly at its
// pod address, (b) through svc's router, (c) through nginx (Debian) proxying the same pod address with a keep-alive
// upstream. Printed: req/s and p50/p99 of each, router/nginx ratios, the p99 each proxy adds at half the router's
// maximum rate (paced with wrk's delay(), see pacedScript), and the time from a request to the sleeping workspace
// to its first byte against the same wake without the router. Targets (issue 7, item 8): >= 0.8x nginx's req/s,
// < 1 ms added p99 at half load, a woken service's first byte within its own start time + 150 ms.
// `npm run bench -- router`; SVC_DATA_PLANE=node measures svc with --data-plane node (nginx is the default); BENCH_SECONDS and BENCH_ROUNDS set the length of each wrk run and the rounds.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { ensureNginx } from '../src/router/nginx.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import type { RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { createBareRepository, type BareRepository } from '../test/helpers/git.ts';
import { startSvc } from '../test/helpers/process.ts';

const run = promisify(execFile);

const TARGET_RATIO = 0.8;
const TARGET_ADDED_P99_MS = 1;
const TARGET_WAKE_EXTRA_MS = 150;
const CONNECTIONS = 50;
const SERVICE_PORT = 8080;

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node server.js
    ports:
      - port: ${SERVICE_PORT}
        routes: [{ path: / }]
    health: { port: ${SERVICE_PORT} }
`;

// The trivial upstream: a small fixed body (BENCH_PORT and BENCH_HOST when run outside a pod, for the start time).
const serverJs = `const http = require('node:http');
const body = 'hello from the service\\n';
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
  res.end(body);
});
server.listen(Number(process.env.BENCH_PORT || ${SERVICE_PORT}), process.env.BENCH_HOST || '0.0.0.0');
`;

interface Measurement {
  rps: number;
  p50ms: number;
  p99ms: number;
}

const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const medianOf = (runs: Measurement[]): Measurement => ({
  rps: middle(runs.map((r) => r.rps)),
  p50ms: middle(runs.map((r) => r.p50ms)),
  p99ms: middle(runs.map((r) => r.p99ms)),
});

function latencyMs(stdout: string, percentile: string): number {
  const match = new RegExp(`\\s${percentile}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(stdout);
  if (!match) throw new Error(`no ${percentile}% in wrk output:\n${stdout}`);
  return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
}

/** One wrk run; with `script`, a Lua file (the paced runs). Non-2xx answers or socket errors fail the bench. */
async function wrk(url: string, headers: Record<string, string>, options: { seconds: number; connections: number; script?: string }): Promise<Measurement> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`])];
  if (options.script) args.push('-s', options.script);
  const { stdout } = await run('wrk', [...args, url]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  if (!rps || /Non-2xx|Socket errors/.test(stdout)) throw new Error(`wrk on ${url} failed:\n${stdout}`);
  return { rps, p50ms: latencyMs(stdout, '50'), p99ms: latencyMs(stdout, '99') };
}

/** nginx as a reverse proxy to `upstream` with a keep-alive pool, one worker per core as Debian configures it (and svc's nginx data plane). */
async function startNginx(dir: string, upstream: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const binary = await ensureNginx((m) => console.log(`bench/router: ${m}`));
  const port = await freeLoopbackPort();
  await mkdir(path.join(dir, 'logs'), { recursive: true });
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${path.join(dir, name)};`).join('\n');
  const config = `worker_processes auto;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'logs', 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
${temp}
  upstream service { server ${upstream}; keepalive 256; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header Svc-Authorization "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
    }
  }
}
`;
  const file = path.join(dir, 'nginx.conf');
  await writeFile(file, config);
  const child = spawn(binary, ['-p', dir, '-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/`;
  await until(() => answers(url, {}), 10_000, () => `nginx to answer on ${url}: ${stderr}`);
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Whether `url` answers 200 (with `headers`). */
function answers(url: string, headers: Record<string, string>, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** Milliseconds from now to the first byte of an answer of `url`, which must be 200. */
function firstByte(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (response) => {
      const at = performance.now() - started;
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(at) : reject(new Error(`${url} answered ${response.statusCode}: ${text}`))));
    });
    request.on('error', reject);
  });
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: () => string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

async function finish(key: ApiClient, operationId: string): Promise<void> {
  await until(async () => {
    const operation = (await key.get(`/operations/${operationId}`)).body;
    if (operation.state === 'failed') throw new Error(JSON.stringify(operation.error));
    return operation.state === 'succeeded';
  }, 120_000, () => `operation ${operationId}`, 10);
}

async function setFirstWorkspaceId(databaseUrl: string, id: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${id}`);
  } finally {
    await client.end();
  }
}

/** The pod address of the service's ready replica, read from the runtime as the router does. */
async function serviceAddress(driver: RuntimeDriver, workspace: WorkspaceRef): Promise<string | undefined> {
  const replica = (await driver.replicaStates(workspace)).find((r) => r.service === 'web' && r.status === 'running' && r.ready && r.address);
  return replica ? `${replica.address!.host}:${SERVICE_PORT}` : undefined;
}

interface Targets {
  direct: string;
  router: string;
  nginx: string;
  headers: Record<string, string>;
}

const NAMES = ['direct', 'router', 'nginx'] as const;

interface Runs {
  medians: Record<(typeof NAMES)[number], Measurement>;
  /** Median over the rounds of router/nginx measured in the same round: steadier than a ratio of medians here. */
  rpsRatio: number;
  /** Median over the rounds of each proxy's p99 minus the service's own in the same round. */
  addedP99ms: { router: number; nginx: number };
}

/**
 * The three in alternating rounds, so that a neighbour's load (this machine is shared) hits each alike; with
 * `script`, wrk runs that Lua file (the paced runs).
 */
async function measureRounds(targets: Targets, options: { seconds: number; rounds: number; script?: string }): Promise<Runs> {
  const runs = { direct: [] as Measurement[], router: [] as Measurement[], nginx: [] as Measurement[] };
  const ratios: number[] = [];
  const added = { router: [] as number[], nginx: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    for (const name of NAMES) runs[name].push(await wrk(targets[name], targets.headers, { ...options, connections: CONNECTIONS }));
    ratios.push(runs.router[round].rps / runs.nginx[round].rps);
    added.router.push(runs.router[round].p99ms - runs.direct[round].p99ms);
    added.nginx.push(runs.nginx[round].p99ms - runs.direct[round].p99ms);
  }
  return {
    medians: { direct: medianOf(runs.direct), router: medianOf(runs.router), nginx: medianOf(runs.nginx) },
    rpsRatio: middle(ratios),
    addedP99ms: { router: middle(added.router), nginx: middle(added.nginx) },
  };
}

/**
 * A wrk script for about `rate` req/s. Debian's wrk has no `-R` (that is wrk2), so each connection waits a random
 * 0..2x its share of the interval after every answer (wrk's `delay()`); the random pauses keep the connections
 * from marching in step, and wrk times each request from its write, so the pause is not counted as latency.
 */
async function pacedScript(dir: string, rate: number): Promise<string> {
  const meanMs = (CONNECTIONS * 1000) / rate;
  const script = path.join(dir, 'paced.lua');
  await writeFile(script, `function delay() return math.floor(math.random() * ${2 * meanMs} + 0.5) end\n`);
  return script;
}

/** How long `node server.js` takes on this machine from spawn to its first answer (no pod, no platform). */
async function processStartMs(dir: string): Promise<number> {
  const file = path.join(dir, 'server.js');
  await writeFile(file, serverJs);
  const port = await freeLoopbackPort();
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [file], { env: { ...process.env, BENCH_PORT: String(port), BENCH_HOST: '127.0.0.1' }, stdio: 'ignore' });
  try {
    await until(() => answers(`http://127.0.0.1:${port}/`, {}, 200), 10_000, () => 'node server.js', 2);
    return performance.now() - started;
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * The wake: (reference) POST /wake, then the service polled directly at its pod address every 5 ms until it
 * answers; (router) one request to the sleeping workspace's dev URL, held by the router until it can be answered.
 */
async function measureWake(key: ApiClient, ws: number, driver: RuntimeDriver, workspace: WorkspaceRef, routerUrl: string, headers: Record<string, string>, rounds: number) {
  const alone: number[] = [];
  const routed: number[] = [];
  const sleep = async () => {
    const answer = await key.post(`/workspaces/${ws}/sleep`);
    if (answer.status !== 200) throw new Error(`sleep answered ${answer.status}: ${answer.text}`);
  };
  for (let round = 0; round < rounds; round++) {
    await sleep();
    let started = performance.now();
    const wake = await key.post(`/workspaces/${ws}/wake`);
    if (wake.status !== 202) throw new Error(`wake answered ${wake.status}: ${wake.text}`);
    await until(async () => {
      const address = await serviceAddress(driver, workspace);
      return address !== undefined && (await answers(`http://${address}/`, {}, 1000));
    }, 120_000, () => 'the woken service', 5);
    alone.push(performance.now() - started);
    await finish(key, wake.body.id);

    await sleep();
    started = performance.now();
    routed.push(await firstByte(routerUrl, headers));
    // The held request is answered once the service is ready, while the editor may still start (services first):
    // the next round's sleep waits until the wake has finished.
    await until(async () => (await key.get(`/workspaces/${ws}`)).body.state === 'running', 120_000, () => 'the routed wake to finish', 5);
  }
  return { alone: middle(alone), routed: middle(routed), rounds };
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const row = (name: string, m: Measurement) => `  ${name.padEnd(22)} ${m.rps.toFixed(0).padStart(8)} req/s   p50 ${ms(m.p50ms).padStart(9)}   p99 ${ms(m.p99ms).padStart(9)}`;

export async function benchRouter(seconds = Number(process.env.BENCH_SECONDS) || 5, rounds = Number(process.env.BENCH_ROUNDS) || 3): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-router-'));
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-router-scratch-'));
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', '1000000000', '--log-level', 'warn'], {
    DATABASE_URL: database?.url,
    SVC_ALLOW_LOCAL_REPOSITORIES: 'true',
    // SVC_DATA_PLANE=node measures svc without nginx in front ("svc router" below).
    SVC_DATA_PLANE: process.env.SVC_DATA_PLANE,
  });
  const driver = createLocalDriver({ dataDir });
  let repository: BareRepository | undefined;
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  let workspace: WorkspaceRef | undefined;
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const key = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    // Pods and their networks are named by workspace id on this one machine: keep clear of tests and other servers.
    const databaseUrl = database?.url ?? (JSON.parse(await readFile(path.join(dataDir, 'server.json'), 'utf8')).database_url as string);
    await setFirstWorkspaceId(databaseUrl, database?.firstWorkspaceId ?? 14_200 + (process.pid % 1000));
    const org = (await key.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await key.post('/teams', { org_id: org, name: 'Bench' })).body.id;
    repository = await createBareRepository({ 'svc.yml': svcYml, 'server.js': serverJs });
    const created = await key.post('/workspaces', { team_id: team, name: 'routed', git: { provider: 'git', repo: repository.url } });
    if (created.status !== 202) throw new Error(`POST /workspaces answered ${created.status}: ${created.text}`);
    const ws = Number(created.body.target.split('/')[2]);
    workspace = { id: ws, uid: 0, storageGib: 0 };
    await finish(key, created.body.id);
    const plan = (await key.get(`/workspaces/${ws}/landscape/plan`)).body;
    await finish(key, (await key.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.hash })).body.id);
    const headers = { Host: `w${ws}.localhost`, 'Svc-Authorization': `Bearer ${key.auth.token}` };
    const routerUrl = `${url}/`;
    await until(() => answers(routerUrl, headers), 120_000, () => 'the dev URL to answer');
    const address = (await serviceAddress(driver, workspace))!;
    nginx = await startNginx(scratch, address);
    const targets: Targets = { direct: `http://${address}/`, router: routerUrl, nginx: nginx.url, headers };

    console.log(`bench/router: wrk -t1 -c${CONNECTIONS}, ${rounds} alternating rounds of ${seconds}s, medians; upstream: node http server in a pod at ${address}; nginx: a worker per core, keepalive upstream; database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}; svc data plane: ${process.env.SVC_DATA_PLANE ?? 'nginx'}`);
    for (const name of NAMES) await wrk(targets[name], headers, { seconds: 1, connections: CONNECTIONS }); // warm-up
    const { medians: max, rpsRatio } = await measureRounds(targets, { seconds, rounds });
    console.log('  maximum load');
    console.log(row('service directly', max.direct));
    console.log(row('svc router', max.router));
    console.log(row('nginx', max.nginx));
    console.log(`  router/nginx: req/s ${rpsRatio.toFixed(2)}x (median of per-round ratios; target >= ${TARGET_RATIO}x, ${rpsRatio >= TARGET_RATIO ? 'met' : 'MISSED'}),` +
      ` p50 ${(max.router.p50ms / max.nginx.p50ms).toFixed(2)}x, p99 ${(max.router.p99ms / max.nginx.p99ms).toFixed(2)}x`);

    const rate = max.router.rps / 2;
    const { medians: paced, addedP99ms } = await measureRounds(targets, { seconds, rounds, script: await pacedScript(scratch, rate) });
    const added = addedP99ms.router;
    console.log(`  paced at half the router's maximum (about ${rate.toFixed(0)} req/s offered)`);
    console.log(row('service directly', paced.direct));
    console.log(row('svc router', paced.router));
    console.log(row('nginx', paced.nginx));
    console.log(`  added p99: router ${ms(added)} (median of per-round differences; target < ${TARGET_ADDED_P99_MS} ms, ${added < TARGET_ADDED_P99_MS ? 'met' : 'MISSED'}), nginx ${ms(addedP99ms.nginx)};` +
      ` added p50: router ${ms(paced.router.p50ms - paced.direct.p50ms)}, nginx ${ms(paced.nginx.p50ms - paced.direct.p50ms)}`);

    await nginx.stop();
    nginx = undefined;
    const processMs = await processStartMs(scratch);
    const wake = await measureWake(key, ws, driver, workspace, routerUrl, headers, rounds);
    const extra = wake.routed - wake.alone;
    console.log(`  wake, medians of ${wake.rounds}: request to a sleeping workspace, first byte through the router ${wake.routed.toFixed(0)} ms;` +
      ` the same wake by itself (POST /wake to the service's first answer at its pod address) ${wake.alone.toFixed(0)} ms`);
    console.log(`  wake: router - by itself ${extra.toFixed(0)} ms (target <= +${TARGET_WAKE_EXTRA_MS} ms, ${extra <= TARGET_WAKE_EXTRA_MS ? 'met' : 'MISSED'}); ratio ${(wake.routed / wake.alone).toFixed(2)}x;` +
      ` node server.js alone on the host starts in ${processMs.toFixed(0)} ms`);
  } finally {
    await nginx?.stop();
    svc.child.kill('SIGTERM');
    await svc.exited;
    if (workspace) {
      await driver.stopWorkspace(workspace).catch(() => undefined);
      await driver.deleteVolume(workspace).catch(() => undefined);
    }
    await database?.drop();
    await repository?.remove();
    await rm(dataDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRouter();
