// bench/images: `container` services against the same work by hand, in the same run (needs root, docker-registry,
// skopeo, umoci, bubblewrap and busybox-static: scripts/apt-packages.sh).
//  - pull-and-start: from the Plan of a file naming a new ~50 MB image (4 layers of files, busybox httpd) on a
//    loopback registry to its web server answering on the dev URL, against `skopeo copy` + `umoci unpack` of the
//    same image and busybox httpd started from the unpacked root under bubblewrap, answering (target: within 1.2x);
//  - start of a pulled image: from the Sync after a Teardown to the container answering, against the same for a
//    `steps` service running the same httpd on the same server (target: within 1.2x).
// Each round pushes a new image (new layers, so nothing is in the store) and alternates the measures; medians over
// BENCH_RUNS rounds (default 3). The Plan + Sync of a new image is itemised: the client's steps (Plan, Sync request,
// operation, answer after it), the server's account of the Sync and of its pull (its log lines `sync of workspace N
// took ...` and `image store: pulled ... in ...`), and the store pull's own phases. The bench follows operations on
// the event stream (as the console does), not by polling: a poll every few ms would take CPU from the pull it waits for.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { parsePhases, type Phase } from '../src/core/phases.ts';
import { ImageStore, pullImage, type PullTimings } from '../src/images/index.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { EventStream } from '../test/helpers/events.ts';
import { pushImage, startRegistry, type LayerEntry } from '../test/helpers/oci.ts';
import { startSvc, stopSvc } from '../test/helpers/process.ts';
import { rawRequest } from '../test/helpers/raw-http.ts';

const run = promisify(execFile);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const LAYERS = 4;
const FILES_PER_LAYER = 200;
const FILE_BYTES = 64 * 1024; // 4 x 200 x 64 KiB: 50 MiB of files besides busybox

/** Waits for the operation's end on the event stream; a failed one throws its problem. */
async function finish(events: EventStream, operationId: string): Promise<void> {
  const ended = (data: any) => data.operation?.id === operationId && ['succeeded', 'failed'].includes(data.operation.state);
  const operation = (await events.next('operation.updated', ended, 600_000)).data.operation;
  if (operation.state === 'failed') throw new Error(JSON.stringify(operation.error));
}

/** Each phase's median over the runs (in the order of the first run; phases a run lacks count as absent). */
function phaseMedians(runs: Phase[][]): Phase[] {
  const names = [...new Set(runs.flatMap((run) => run.map((p) => p.name)))];
  return names.map((name) => ({ name, ms: median(runs.map((run) => run.filter((p) => p.name === name).reduce((sum, p) => sum + p.ms, 0))) }));
}

const phasesText = (phases: Phase[]) => phases.map((p) => `${p.name} ${Math.round(p.ms)}`).join(', ');

/** A pull's phases with its layers summed up: the slowest layer's stream, hashing and bytes over all of them. */
function pullPhases(timings: PullTimings): Phase[] {
  const layers = timings.layers;
  const sum = (f: (l: PullTimings['layers'][number]) => number) => layers.reduce((total, l) => total + f(l), 0);
  return [
    ...timings.phases,
    { name: `[of the layers, in parallel: slowest request`, ms: Math.max(0, ...layers.map((l) => l.requestMs)) },
    { name: 'slowest stream (download, sha256, inflate, untar)', ms: Math.max(0, ...layers.map((l) => l.streamMs)) },
    { name: 'sha256 of blobs summed', ms: sum((l) => l.blobHashMs) },
    { name: 'sha256 of tars summed', ms: sum((l) => l.tarHashMs) },
    { name: 'publish summed]', ms: sum((l) => l.publishMs) },
  ];
}

/** The server's log line `prefix ... took|in <text>` messages, newest last. */
function loggedMessages(serverLog: string, prefix: string): string[] {
  return serverLog.split('\n').flatMap((line) => {
    if (!line.includes(prefix)) return [];
    const message = (JSON.parse(line) as { msg: string }).msg;
    return message.startsWith(prefix) ? [message] : [];
  });
}

/** `image store: pulled REF in 812 ms: manifest 12, ... ms; layers: ... request 2 + stream 410 (sha256 8 + 9) + publish 3; ...` */
function parsePullLine(message: string): PullTimings | undefined {
  const match = /: (manifest .*?) ms; layers: (.*)$/.exec(message);
  if (!match) return undefined;
  const layers = [...match[2].matchAll(/([\d.]+) MB -> ([\d.]+) MB \((\d+) entries\) request (\d+) \+ stream (\d+) \(sha256 (\d+) \+ (\d+)\) \+ publish (\d+)/g)].map((m) => ({
    digest: '', blobBytes: Number(m[1]) * 1e6, tarBytes: Number(m[2]) * 1e6, entries: Number(m[3]), requestMs: Number(m[4]), streamMs: Number(m[5]), blobHashMs: Number(m[6]), tarHashMs: Number(m[7]), publishMs: Number(m[8]),
  }));
  return { phases: parsePhases(`0 ms: ${match[1]}`), layers };
}

/** Half random bytes as base64 (compresses a little), half repeated text (compresses well), like real images. */
function fileContent(i: number): string {
  if (i % 2 === 0) return randomBytes((FILE_BYTES * 3) / 4).toString('base64');
  return `line ${i} of a text file that compresses well\n`.repeat(Math.ceil(FILE_BYTES / 46)).slice(0, FILE_BYTES);
}

/** A new image (layers no earlier round had) whose httpd serves `marker` at /. */
async function pushBenchImage(registry: Awaited<ReturnType<typeof startRegistry>>, tag: string, marker: string): Promise<void> {
  const base: Record<string, LayerEntry> = { 'bin/busybox': { busybox: true }, 'bin/sh': { symlink: 'busybox' }, 'bin/httpd': { symlink: 'busybox' }, 'etc/round': marker };
  const layers: Record<string, LayerEntry>[] = [base];
  for (let l = 0; l < LAYERS; l++) {
    const layer: Record<string, LayerEntry> = {};
    for (let f = 0; f < FILES_PER_LAYER; f++) layer[`usr/share/bench/${l}/${Math.floor(f / 20)}/file-${f}.txt`] = fileContent(f);
    layers.push(layer);
  }
  layers.push({ 'www/index.html': marker });
  await pushImage(registry, tag, { layers, entrypoint: ['/bin/httpd'], cmd: ['-f', '-p', '8080', '-h', '/www'] });
}

/** Polls `fetch` until it answers `marker`; the time from `started`. */
async function answered(ask: () => Promise<string>, marker: string, started: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const body = await ask().catch(() => '');
    if (body.includes(marker)) return performance.now() - started;
    if (attempt > 20_000) throw new Error(`no answer ${marker}; last: ${body.slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** skopeo copy + umoci unpack, then busybox httpd from the unpacked root under bubblewrap as a workspace would run it. */
async function byHand(registryHost: string, tag: string, marker: string, root: string): Promise<{ pull: number; total: number }> {
  const dir = await mkdtemp(path.join(root, 'hand-'));
  const port = await freeLoopbackPort();
  const started = performance.now();
  await run('skopeo', ['copy', '--quiet', '--src-tls-verify=false', `docker://${registryHost}/${tag}`, `oci:${dir}/layout:img`]);
  await run('umoci', ['unpack', '--image', `${dir}/layout:img`, `${dir}/bundle`]);
  const pull = performance.now() - started;
  await chmod(dir, 0o755);
  await chmod(path.join(dir, 'bundle'), 0o755); // umoci makes it 0700; the workspace UID passes through
  const rootfs = path.join(dir, 'bundle', 'rootfs');
  for (const mountPoint of ['dev', 'proc', 'tmp']) await mkdir(path.join(rootfs, mountPoint), { recursive: true }); // as svc's store does
  const args = ['--reuid', '10002', '--regid', '0', '--clear-groups', 'bwrap', '--ro-bind', rootfs, '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-pid', '--unshare-user', '--uid', '10002', '--gid', '0', '--die-with-parent', '/bin/httpd', '-f', '-p', String(port), '-h', '/www'];
  const child = spawn('setpriv', args, { stdio: 'ignore' });
  try {
    return { pull, total: await answered(async () => (await rawRequest(port, 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close')).body, marker, started) };
  } finally {
    child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

/** The image store alone, in this process: a pull into an empty store (what a Sync does before the pods start). */
async function pullAlone(reference: string, registryHost: string, root: string): Promise<{ ms: number; timings?: PullTimings }> {
  const dir = await mkdtemp(path.join(root, 'store-'));
  try {
    const store = await ImageStore.open({ root: dir, maxBytes: 1 << 30, insecureRegistries: [registryHost] });
    const started = performance.now();
    const pulled = await pullImage(store, reference);
    return { ms: performance.now() - started, timings: pulled.timings };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchImages(runs = Number(process.env.BENCH_RUNS) || 3): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log('bench/images: skipped (needs root)');
    return;
  }
  const registry = await startRegistry();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-images-'));
  await chmod(dataDir, 0o755);
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--log-level', 'info'], {
    DATABASE_URL: database?.url,
    SVC_INSECURE_REGISTRIES: registry.host,
    SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'),
  });
  let ws: number | undefined;
  let events: EventStream | undefined;
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const key = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    events = await EventStream.open(key);
    const stream = events;
    const org = (await key.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await key.post('/teams', { org_id: org, name: 'Bench' })).body.id;
    const created = await key.post('/workspaces', { team_id: team, name: 'bench-images', storage_gib: 1 });
    ws = Number(created.body.target.split('/')[2]);
    await finish(stream, created.body.id);
    const volume = path.join(dataDir, 'volumes', String(ws));
    const port = Number(new URL(url).port);
    const devUrl = async () => (await rawRequest(port, `GET / HTTP/1.1\r\nHost: w${ws}.localhost\r\nSvc-Authorization: Bearer ${key.auth.token}\r\nConnection: close`)).body;
    // Time runs from the Plan (which resolves the tag) to the answer; the client's steps are kept for the itemisation.
    const planAndSync = async (): Promise<Phase[]> => {
      const t0 = performance.now();
      const plan = await key.get(`/workspaces/${ws}/landscape/plan`);
      if (plan.status !== 200) throw new Error(plan.text);
      const t1 = performance.now();
      const started = await key.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
      if (started.status !== 202) throw new Error(started.text);
      const t2 = performance.now();
      await finish(stream, started.body.id);
      const t3 = performance.now();
      return [{ name: 'Plan', ms: t1 - t0 }, { name: 'Sync request', ms: t2 - t1 }, { name: 'operation to its end', ms: t3 - t2 }];
    };
    const teardown = async () => finish(stream, (await key.post(`/workspaces/${ws}/landscape/teardown`)).body.id);
    const web = (spec: string) => `schema: svc/v1\nservices:\n  web:\n${spec}    ports:\n      - port: 8080\n        routes: [{ path: / }]\n    health: { port: 8080, mode: http-2xx }\n`;
    const times = { store: [] as number[], handPull: [] as number[], pull: [] as number[], hand: [] as number[], warm: [] as number[], steps: [] as number[] };
    const itemised = { client: [] as Phase[][], sync: [] as Phase[][], serverPull: [] as Phase[][], storePull: [] as Phase[][], layerBytes: [] as string[] };
    const syncLines = () => loggedMessages(svc.stderr(), `sync of workspace ${ws} took `);
    await writeFile(path.join(volume, 'www.html'), 'served by steps\n');
    for (let round = 0; round < runs; round++) {
      const tag = `bench/web:r${round}-${randomBytes(3).toString('hex')}`;
      const marker = `round ${round} ${randomBytes(4).toString('hex')}\n`;
      await pushBenchImage(registry, tag, marker);
      const alone = await pullAlone(`${registry.host}/${tag}`, registry.host, dataDir);
      times.store.push(alone.ms);
      if (alone.timings) itemised.storePull.push(pullPhases(alone.timings));
      const fetched = alone.timings?.layers ?? [];
      itemised.layerBytes.push(`${fetched.length}: ${(fetched.reduce((t, l) => t + l.blobBytes, 0) / 1e6).toFixed(1)} MB -> ${(fetched.reduce((t, l) => t + l.tarBytes, 0) / 1e6).toFixed(1)} MB`);

      await writeFile(path.join(volume, 'svc.yml'), web(`    type: container\n    image: ${registry.host}/${tag}\n`));
      let started = performance.now();
      const client = await planAndSync();
      const synced = performance.now();
      times.pull.push(await answered(devUrl, marker, started));
      itemised.client.push([...client, { name: 'answer after the operation (readiness, route)', ms: started + times.pull.at(-1)! - synced }]);
      const syncLine = syncLines().at(-1);
      if (syncLine) itemised.sync.push(parsePhases(syncLine.slice(syncLine.indexOf(' took ') + ' took '.length)));
      // the pull that fetched the image (a Plan's, joined by its Sync, or the Sync's own)
      const serverPull = loggedMessages(svc.stderr(), `image store: pulled ${registry.host}/${tag}@`).map(parsePullLine).filter((t) => t !== undefined).at(-1);
      if (serverPull) itemised.serverPull.push(pullPhases(serverPull));
      const hand = await byHand(registry.host, tag, marker, dataDir);
      times.handPull.push(hand.pull);
      times.hand.push(hand.total);

      await teardown();
      started = performance.now();
      await planAndSync();
      times.warm.push(await answered(devUrl, marker, started));

      await writeFile(path.join(volume, 'svc.yml'), web('    type: steps\n    steps:\n      - run: mkdir -p /tmp/www && cp www.html /tmp/www/index.html && exec busybox httpd -f -p 8080 -h /tmp/www\n'));
      await planAndSync();
      await answered(devUrl, 'served by steps', performance.now());
      await teardown();
      started = performance.now();
      await planAndSync();
      times.steps.push(await answered(devUrl, 'served by steps', started));
    }
    if (process.env.BENCH_DEBUG) console.log([...loggedMessages(svc.stderr(), 'image store: '), ...syncLines()].join('\n'));
    const line = (name: string, svcMs: number, refMs: number, target: number, ref: string) =>
      `  ${name}: svc ${svcMs.toFixed(0)} ms, ${ref} ${refMs.toFixed(0)} ms, ratio ${(svcMs / refMs).toFixed(2)}x (target within ${target}x)`;
    console.log(`bench/images: ${LAYERS + 2} layers, ${(LAYERS * FILES_PER_LAYER * FILE_BYTES) / 1048576} MiB of files + busybox, medians over ${runs} rounds`);
    console.log(line('pull into an empty image store (src/images) vs skopeo copy + umoci unpack', median(times.store), median(times.handPull), 1.2, 'by hand'));
    console.log(line('Plan + Sync of a new image to its answer vs skopeo copy + umoci unpack + bwrap httpd', median(times.pull), median(times.hand), 1.2, 'by hand'));
    console.log(line('Sync after Teardown of a pulled image vs the same for a steps service', median(times.warm), median(times.steps), 1.2, 'steps'));
    const bytes = itemised.layerBytes.at(-1);
    console.log(`  Plan + Sync of a new image, itemised (medians, ms; ${bytes ? `layers ${bytes}` : 'no layer sizes'}):`);
    console.log(`    client: ${phasesText(phaseMedians(itemised.client))}`);
    console.log(`    server, the Sync operation: ${phasesText(phaseMedians(itemised.sync))}`);
    console.log(`    server, its pull: ${phasesText(phaseMedians(itemised.serverPull))}`);
    console.log(`    the store pull alone: ${phasesText(phaseMedians(itemised.storePull))}`);
  } finally {
    events?.close();
    if (ws !== undefined) {
      const driver = createLocalDriver({ dataDir });
      await driver.stopWorkspace({ id: ws, uid: 0, storageGib: 1 });
      await driver.deleteVolume({ id: ws, uid: 0, storageGib: 1 });
    }
    await stopSvc(svc);
    await database?.drop();
    await registry.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchImages();
