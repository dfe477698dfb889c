// The driver contract: what every runtime driver must do, run against each driver through the driver interface
// only. The local driver always; the Kubernetes driver when KUBECONFIG points at a cluster and the agent and base
// images are named (SVC_TEST_KUBE_AGENT_IMAGE / SVC_TEST_KUBE_BASE_IMAGE; `npm run test-cluster -- start` and
// scripts/test-cluster/env.sh give all three), with the test's repository served on SVC_TEST_CLUSTER_HOST, the
// host's address the cluster's pods reach; otherwise one skipped test says why it did not run.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { builtInPlans } from '../src/capacity/plans.ts';
import { ExecChannel, parseFrame, readExecStatus } from '../src/core/channel-protocol.ts';
import type { ReplicaSpec, RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { answersHttp } from '../src/runtime/local/agent-client.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createLocalWorkspaceFiles } from '../src/runtime/local/workspace-files.ts';
import { createBareRepository, serveOverHttp } from './helpers/git.ts';
import { removeTestInstallation, testClusterMissing, testClusterSettings, testInstallation } from './helpers/test-cluster.ts';
import { until } from './helpers/wait.ts';

interface Subject {
  name: string;
  /** A fresh driver of the same installation (another server, or this one restarted). */
  open(): Promise<RuntimeDriver>;
  /** A repository URL the driver's clone reaches, with svc.yml at its root on `main` and a branch `feature`. */
  repository(): Promise<string>;
  workspace(n: number): WorkspaceRef;
  cleanup(): Promise<void>;
}

const scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-contract-'));
await chmod(scratch, 0o755); // workspace pods (other UIDs) reach their volumes below it
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

const base = 910_000 + Math.floor(Math.random() * 80_000) * 8;

function localSubject(): Subject {
  const dataDir = path.join(scratch, 'local');
  const drivers: RuntimeDriver[] = [];
  return {
    name: 'local',
    async open() {
      await mkdir(dataDir, { recursive: true });
      const driver = createLocalDriver({ dataDir, editorTimeoutMs: 60_000, plans: builtInPlans });
      drivers.push(driver);
      return driver;
    },
    async repository() {
      const repository = await createBareRepository({ 'svc.yml': 'name: contract\n' }, { feature: { 'feature.txt': 'feature\n' } });
      cleanups.push(() => repository.remove());
      return repository.url;
    },
    workspace: (n) => ({ id: base + n, teamId: 1, uid: 3_100_000 + ((base + n) % 100_000), storageGib: 1 }),
    async cleanup() {
      for (const driver of drivers) await driver.close();
    },
  };
}

function kubernetesSubject(): Subject {
  const drivers: RuntimeDriver[] = [];
  const installation = testInstallation('contract');
  const env = process.env;
  return {
    name: 'kubernetes',
    async open() {
      const driver = await createKubernetesDriver({
        cluster: new Cluster(loadKubeConfig()),
        settings: testClusterSettings(installation),
        plans: builtInPlans,
        dataDir: path.join(scratch, 'kubernetes'),
      });
      drivers.push(driver);
      return driver;
    },
    async repository() {
      const repository = await createBareRepository({ 'svc.yml': 'name: contract\n' }, { feature: { 'feature.txt': 'feature\n' } });
      const served = await serveOverHttp(repository, env.SVC_TEST_CLUSTER_HOST!);
      cleanups.push(async () => {
        await served.close();
        await repository.remove();
      });
      return served.url;
    },
    workspace: (n) => ({ id: base + n, teamId: 990_001, uid: 3_100_000 + ((base + n) % 100_000), storageGib: 1 }),
    async cleanup() {
      for (const driver of drivers) await driver.close();
      await removeTestInstallation(installation);
    },
  };
}

const replica = (index: number): ReplicaSpec => ({
  service: 'hello', index, steps: [{ name: 'greet', run: 'echo "hello from $REPLICA"; exec sleep 3600' }],
  env: { REPLICA: String(index) }, ports: [], mounts: [], needs: [],
});

function contract(subject: Subject): void {
  const ws = (n: number) => subject.workspace(n);
  let driver: RuntimeDriver;
  const open = async () => {
    driver ??= await subject.open();
    return driver;
  };
  cleanups.push(() => subject.cleanup());
  /** Workspace `n` with its volume made, stopped and deleted after the tests. */
  const created = async (n: number) => {
    const d = await open();
    const w = ws(n);
    cleanups.push(async () => {
      await d.stopWorkspace(w);
      await d.deleteVolume(w);
    });
    await d.createVolume(w);
    return { d, w };
  };
  /** Workspace `n` with an empty volume and its editor started (at `address`). */
  const started = async (n: number) => {
    const { d, w } = await created(n);
    await d.prepareEmptyVolume(w, () => undefined);
    return { d, w, address: await d.startEditor(w, () => undefined) };
  };

  test(`${subject.name}: a cloned workspace's editor starts, answers at its address, reads ready, and stops to absent`, async () => {
    const { d, w } = await created(1);
    const texts: string[] = [];
    await d.cloneRepository(w, { url: await subject.repository(), ref: 'feature' }, (t) => texts.push(t));
    const address = await d.startEditor(w, (t) => texts.push(t));
    assert.ok(texts.length > 0, 'progress was reported');
    assert.equal(await answersHttp(address.host, address.port), true);
    assert.deepEqual(await d.editorState(w), { state: 'ready', address });
    const files = d.files ?? createLocalWorkspaceFiles({ dataDir: path.join(scratch, 'local') });
    assert.deepEqual(await files.readLandscapeFile(w, 'svc.yml'), { state: 'found', text: 'name: contract\n' });
    assert.ok(await until(() => d.landscapeFilesFingerprint(w), 'the agent reports the landscape files'));
    assert.ok((await d.volumeUsage(w)).bytes > 0);
    await d.stopWorkspace(w);
    assert.deepEqual(await d.editorState(w), { state: 'absent' });
  });

  test(`${subject.name}: another driver of the installation (a restarted server) finds a running editor and replica again`, async () => {
    const { d, w, address } = await started(2);
    await d.startReplica(w, replica(0));
    const again = await subject.open();
    assert.deepEqual(await again.editorState(w), { state: 'ready', address });
    const observed = await until(async () => (await again.replicaStates(w)).find((r) => r.status === 'running'), 'the replica runs');
    assert.equal(observed.service, 'hello');
    const log = await until(async () => {
      const read = await again.replicaLogs(w, 'hello', 0);
      return read.lines.some((line) => line.text === 'hello from 0') ? read : undefined;
    }, 'the replica\'s log shows its greeting');
    assert.equal(log.dropped, 0);
  });

  test(`${subject.name}: a stage step and an exec stream run in the editor pod with their variables; exit codes and output come back`, async () => {
    const { d, w } = await started(4);
    const step = await d.runStageStep(w, 'contract-1', { run: 'echo "stage $GREETING in $(pwd)"; echo oops >&2; exit 3', env: { GREETING: 'hi' } });
    assert.deepEqual(await step.exited, { exitCode: 3 });
    const lines = (await d.stageStepLogs(w, 'contract-1')).lines.map((l) => `${l.stream}: ${l.text}`);
    assert.ok(lines.includes('stdout: stage hi in /data/app'), lines.join('\n'));
    assert.ok(lines.includes('stderr: oops'), lines.join('\n'));
    // a command through the pod's exec stream: its output on channel 1, its exit code in the status on channel 3
    const socket = await d.openExec(w, { kind: 'editor' }, { command: ['sh', '-c', 'echo "exec $GREETING"; exit 4'], tty: false, stdin: false, env: { GREETING: 'hello' } });
    const frames: Array<{ channel: number; data: Buffer }> = [];
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('message', (message: Buffer) => frames.push(parseFrame(message)!));
    socket.resume();
    await closed;
    const stdout = Buffer.concat(frames.filter((f) => f.channel === ExecChannel.stdout).map((f) => f.data)).toString();
    assert.equal(stdout, 'exec hello\n');
    assert.deepEqual(readExecStatus(frames.find((f) => f.channel === ExecChannel.status)!.data), { exitCode: 4 });
  });

  test(`${subject.name}: a stopped replica reads stopped and keeps its log; a removed one is gone`, async () => {
    const { d, w } = await started(3);
    await d.startReplica(w, replica(1));
    await until(async () => ((await d.replicaLogs(w, 'hello', 1)).lines.some((l) => l.text === 'hello from 1') ? true : undefined), 'the greeting');
    await d.stopReplica(w, 'hello', 1);
    assert.deepEqual((await d.replicaStates(w)).map((r) => [r.service, r.index, r.status]), [['hello', 1, 'stopped']]);
    assert.ok((await d.replicaLogs(w, 'hello', 1)).lines.some((l) => l.text === 'hello from 1'));
    await d.removeReplica(w, 'hello', 1);
    assert.deepEqual(await d.replicaStates(w), []);
  });
}

contract(localSubject());
const missing = testClusterMissing();
if (missing) test(`kubernetes driver contract not run: ${missing}`, { skip: missing }, () => undefined);
else contract(kubernetesSubject());
