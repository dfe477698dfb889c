// Plans' limits on the machine (docs/capacity.md): each replica's pod runs in a cgroup of its own with its service
// plan's CPU and memory limits; a server allocating past its plan's memory is killed and its log says why; busy
// replicas of a small plan get about their share of a CPU (measured from the cgroup's CPU time, asserted loosely);
// a stopped replica leaves no cgroup behind. Real bubblewrap pods, real cgroups (needs root).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { builtInPlans, type InstallationPlans } from '../src/capacity/plans.ts';
import type { ReplicaSpec, RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { cgroupNames, hostCgroups } from '../src/runtime/local/cgroups.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { readReplicaRecord } from '../src/runtime/local/replica-files.ts';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
const cgroups = hostCgroups(asRoot);
const skip = !cgroups && 'needs root and cgroups with the cpu and memory controllers';
// ids in a block of their own (see runtime-replicas.test.ts), far from other files'
const base = 16384 * (60_000 + Math.floor(Math.random() * 20_000)) + 14_000 + Math.floor(Math.random() * 1900);
const workspace = (n: number): WorkspaceRef => ({ id: base + n, uid: 3_500_000 + ((base + n) % 400_000), storageGib: 1 });
const plans: InstallationPlans = {
  ...builtInPlans,
  service: {
    default: 'tiny',
    plans: [{ kind: 'service', id: 'tiny', title: 'Tiny', cpuMillis: 100, memoryMiB: 160, maxReplicas: 3, availability: 'always' }],
  },
};

let scratch: string;
let dataDir: string;
let driver: RuntimeDriver;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-runtime-limits-'));
  await run('chmod', ['755', scratch]);
  dataDir = path.join(scratch, 'data');
  await mkdir(dataDir);
  driver = createLocalDriver({ dataDir, editorTimeoutMs: 30_000, replicaTimings: { backoffBaseMs: 60_000, backoffMaxMs: 60_000, probeIntervalMs: 50 }, plans });
});

after(async () => {
  for (let n = 0; n < 3; n++) {
    await driver.stopWorkspace(workspace(n)).catch(() => undefined);
    await driver.deleteVolume(workspace(n)).catch(() => undefined);
  }
  await driver.close();
  await rm(scratch, { recursive: true, force: true });
});

async function volumeWith(ws: WorkspaceRef, files: Record<string, string>): Promise<void> {
  await driver.createVolume(ws);
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dataDir, 'volumes', String(ws.id), 'app', name);
    await writeFile(file, text);
    await chown(file, ws.uid, 0);
  }
}

const spec = (service: string, index: number, steps: ReplicaSpec['steps']): ReplicaSpec =>
  ({ service, index, steps, env: {}, ports: [], mounts: [], needs: [], plan: 'tiny' });

async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const names = () => cgroupNames(dataDir);

test('a replica whose server allocates past its plan is killed for memory, and its log says so', { skip }, async () => {
  const ws = workspace(0);
  // touches every page: 400 MiB of ones, where the plan allows 160 MiB
  await volumeWith(ws, { 'hog.cjs': "const b = Buffer.alloc(400 * 1024 * 1024, 1); console.log('allocated', b.length);\n" });
  await driver.startReplica(ws, spec('hog', 0, [{ name: 'hog', run: 'exec node hog.cjs' }]));
  const record = await until(async () => readReplicaRecord(dataDir, ws.id, 'hog', 0), 'the replica is recorded');
  const own = await readFile(`/proc/${record.pid}/cgroup`, 'utf8').catch(() => '');
  assert.match(own, new RegExp(`memory:/${names().replica(ws.id, 'hog', 0)}\\n`));
  const lines = await until(async () => {
    const texts = (await driver.replicaLogs(ws, 'hog', 0)).lines.map((line) => line.text);
    return texts.some((t) => t.startsWith('Server exited with code 137')) ? texts : undefined;
  }, 'the server was killed');
  assert.ok(!lines.includes('allocated 419430400'), lines.join('\n'));
  const killed = lines.indexOf('Out of memory: killed for using more than the 160 MiB of memory that plan tiny allows');
  assert.ok(killed >= 0, lines.join('\n'));
  assert.match(lines[killed + 1], /^Server exited with code 137; restarting in /);
  assert.equal(await cgroups!.memoryKills(names().replica(ws.id, 'hog', 0)), 1);
  const limit = await readFile(path.join('/sys/fs/cgroup', cgroups!.version === 1 ? 'memory' : '', names().replica(ws.id, 'hog', 0), cgroups!.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8');
  assert.equal(Number(limit), 160 * 2 ** 20);
  await driver.stopReplica(ws, 'hog', 0);
  await assert.rejects(access(cgroups!.memoryEventsFile(names().replica(ws.id, 'hog', 0))), 'the cgroup is removed with its pod');
});

test('busy replicas of a plan with a tenth of a CPU each use about a tenth of a CPU', { skip }, async () => {
  const ws = workspace(1);
  await volumeWith(ws, {});
  for (const index of [0, 1]) await driver.startReplica(ws, spec('busy', index, [{ name: 'spin', run: 'while :; do :; done' }]));
  const cgroupOf = (index: number) => names().replica(ws.id, 'busy', index);
  await until(async () => ((await cgroups!.cpuUsageNanos(cgroupOf(0))) > 0 && (await cgroups!.cpuUsageNanos(cgroupOf(1))) > 0 ? true : undefined), 'both spin');
  const start = [await cgroups!.cpuUsageNanos(cgroupOf(0)), await cgroups!.cpuUsageNanos(cgroupOf(1))];
  const startedAt = performance.now();
  // 200 ms of CPU time each: about 2 s of wall time at a tenth of a CPU, a fifth of that on a whole CPU
  await until(async () => {
    const used = [await cgroups!.cpuUsageNanos(cgroupOf(0)), await cgroups!.cpuUsageNanos(cgroupOf(1))];
    return used.every((u, i) => u - start[i] >= 200e6) ? true : undefined;
  }, 'both used 200 ms of CPU');
  const wallNanos = (performance.now() - startedAt) * 1e6;
  for (const index of [0, 1]) {
    const share = ((await cgroups!.cpuUsageNanos(cgroupOf(index))) - start[index]) / wallNanos;
    assert.ok(share <= 0.2, `replica ${index} used ${share.toFixed(3)} of a CPU, over its plan's 0.1`);
    assert.ok(share >= 0.02, `replica ${index} used only ${share.toFixed(3)} of a CPU`);
  }
  for (const index of [0, 1]) await driver.stopReplica(ws, 'busy', index);
});
