// The Kubernetes driver's parts that need no cluster: states read off pod and Job objects as the watches deliver
// them, the watch-fed object store and its waits, a replica's Pod and Secrets (checked against the Kubernetes 1.33
// schemas), the volume Jobs' shell scripts (run here with /bin/sh and git against a real repository, as the Job's
// container would run them), replica logs from container output, landscape reads through the agent, the agent's
// replica index and the server's `--runtime kubernetes` settings. No API server: see docs/kubernetes.md.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { builtInPlans, servicePlan, workspacePlan } from '../src/capacity/plans.ts';
import { createStdoutLogWriter } from '../src/agent/log-file.ts';
import { replicaConfigWithIndex, type ReplicaConfig } from '../src/agent/replica-protocol.ts';
import { ConfigError, loadServerConfig } from '../src/core/config.ts';
import {
  agentTokenSecret, replicaConfigSecret, replicaPodManifest, volumeJobManifest, type KubernetesSettings, type WorkspaceManifestInput,
} from '../src/runtime/kubernetes/manifests.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { ObjectStore } from '../src/runtime/kubernetes/object-store.ts';
import { editorPodState, jobOutcome, podLossOf, replicaPodObservation } from '../src/runtime/kubernetes/pod-state.ts';
import { parseLogOutput } from '../src/runtime/kubernetes/replica-driver.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';
import { landscapeReadOf } from '../src/runtime/kubernetes/workspace-files.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';

const run = promisify(execFile);

const settings: KubernetesSettings = {
  systemNamespace: 'svc', volumeAccessMode: 'ReadWriteOnce', agentImage: 'registry.example.com/svc/agent:1', baseImage: 'registry.example.com/svc/base:1',
  archiveClaim: 'svc-archives', archiveClaimGib: 100,
};
const input: WorkspaceManifestInput = {
  team: { id: 7 },
  workspace: { id: 42, uid: 1_000_123, storageGib: 5, restricted: false },
  limits: workspacePlan(builtInPlans, builtInPlans.workspace.default)!,
  services: [],
  serviceAddresses: { api: '10.96.0.12' },
};
const apiService = {
  replicas: 1,
  limits: servicePlan(builtInPlans, undefined)!,
  spec: { service: 'api', steps: [{ run: 'npm start' }], env: { PORT: '8080' }, ports: [8080], mounts: [], needs: [] },
};

const pod = (status: V1Pod['status'], extra: Partial<V1Pod> = {}): V1Pod => ({
  metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u1', resourceVersion: '10' },
  spec: { containers: [{ name: 'agent' }] },
  status,
  ...extra,
});

test('an editor pod the scheduler places nowhere reads "Waiting for a node: <the scheduler\'s reason>"', () => {
  const waiting = pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }] });
  assert.deepEqual(editorPodState(waiting), { state: 'starting', statusText: 'Waiting for a node: 0/3 nodes are available: 3 Insufficient cpu.' });
});

test('an editor pod reads starting until Ready with an IP, then ready at its Pod IP and the editor port', () => {
  assert.deepEqual(editorPodState(pod({ phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Ready', status: 'False' }] })), { state: 'starting', statusText: 'Starting' });
  assert.deepEqual(editorPodState(pod({ phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Ready', status: 'True' }] })), { state: 'ready', address: { host: '10.1.2.3', port: 8443 } });
  assert.deepEqual(editorPodState(undefined), { state: 'absent' });
});

test('an image that cannot be pulled fails the editor pod with the kubelet\'s reason', () => {
  const state = editorPodState(pod({ phase: 'Pending', initContainerStatuses: [{ name: 'install-agent', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } }] }));
  assert.equal(state.state, 'failed');
  assert.equal(state.state === 'failed' && state.failure.reason, 'install-agent: ImagePullBackOff: Back-off pulling image "x"');
});

test('a drained or evicted pod reads absent, and its loss says the node was drained', () => {
  const drained = pod({ phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }] }, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', deletionTimestamp: new Date() } });
  assert.equal(podLossOf(drained), 'node-drained');
  assert.deepEqual(editorPodState(drained), { state: 'absent' });
  const evicted = pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' });
  assert.equal(podLossOf(evicted), 'node-drained');
  assert.deepEqual(editorPodState(evicted), { state: 'absent' });
  assert.equal(podLossOf(pod({ phase: 'Running' })), undefined);
});

test('a replica\'s observation is its agent\'s report once it answers, Kubernetes\' view before', () => {
  const running = pod({ phase: 'Running', podIP: '10.1.2.4', containerStatuses: [{ name: 'replica', image: 'x', imageID: '', ready: true, restartCount: 1 }] });
  assert.deepEqual(replicaPodObservation(running, 'api', 0, undefined), { service: 'api', index: 0, restarts: 1, address: { host: '10.1.2.4' }, status: 'starting', ready: false });
  const agent = { agentVersion: '1', pid: 7, replica: { status: 'failure' as const, detail: 'Step exited with code 3', ready: false, restarts: 2 } };
  assert.deepEqual(replicaPodObservation(running, 'api', 0, agent), { service: 'api', index: 0, restarts: 2, address: { host: '10.1.2.4' }, status: 'failure', detail: 'Step exited with code 3', ready: false });
});

test('a Job\'s outcome comes from its conditions', () => {
  const job = (conditions: NonNullable<V1Job['status']>['conditions']): V1Job => ({ status: { conditions } });
  assert.deepEqual(jobOutcome(job([])), { state: 'running' });
  assert.deepEqual(jobOutcome(job([{ type: 'Complete', status: 'True' }])), { state: 'succeeded' });
  assert.deepEqual(jobOutcome(job([{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' }])), { state: 'failed', reason: 'Job was active longer than specified deadline' });
});

test('the object store resolves a wait at the watch event that makes it true, ignores stale events, and abandons waits on abort', async () => {
  const store = new ObjectStore<V1Pod>();
  const ready = store.waitFor('svc-team-7', 'ws-42-editor', (p) => editorPodState(p).state === 'ready');
  let settled = false;
  void ready.then(() => (settled = true));
  store.apply('add', pod({ phase: 'Pending' }));
  await Promise.resolve();
  assert.equal(settled, false);
  store.apply('update', pod({ phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Ready', status: 'True' }] }, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u1', resourceVersion: '12' } }));
  assert.equal((await ready)?.status?.podIP, '10.1.2.3');
  // an older event of the same pod (resourceVersion 11 < 12) does not move it back
  store.apply('update', pod({ phase: 'Pending' }, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u1', resourceVersion: '11' } }));
  assert.equal(store.get('svc-team-7', 'ws-42-editor')?.status?.phase, 'Running');
  // the delete of an earlier pod of the same name (another uid) leaves the current one
  store.apply('delete', pod({}, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'old' } }));
  assert.ok(store.get('svc-team-7', 'ws-42-editor'));
  const gone = store.waitFor('svc-team-7', 'ws-42-editor', (p) => p === undefined);
  store.apply('delete', pod({}, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u1' } }));
  assert.equal(await gone, undefined);
  // a wait on a pod just created does not end on "not there yet", only once the watch showed it and it then went
  const created = store.waitForCreated('svc-team-7', 'ws-42-editor', (p) => p === undefined || p.status?.phase === 'Running');
  let createdSettled = false;
  void created.then(() => (createdSettled = true));
  await Promise.resolve();
  assert.equal(createdSettled, false);
  store.apply('add', pod({ phase: 'Pending' }, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u2', resourceVersion: '20' } }));
  const next = store.nextChange('svc-team-7', 'ws-42-editor');
  store.apply('update', pod({ phase: 'Running' }, { metadata: { name: 'ws-42-editor', namespace: 'svc-team-7', uid: 'u2', resourceVersion: '21' } }));
  assert.equal((await created)?.status?.phase, 'Running');
  assert.equal((await next)?.metadata?.resourceVersion, '21');
  const controller = new AbortController();
  const never = store.waitFor('svc-team-7', 'other', (p) => p !== undefined, controller.signal);
  controller.abort(new Error('gave up'));
  await assert.rejects(never, /gave up/);
  const closed = store.waitFor('svc-team-7', 'other', (p) => p !== undefined);
  store.close(new Error('the Kubernetes driver is closed'));
  await assert.rejects(closed, /closed/);
});

test('a replica\'s Pod and Secrets pass the Kubernetes schemas; the Pod has its index written in and reads its own config', () => {
  const replicaPod = replicaPodManifest(input, apiService, 2, settings);
  assert.deepEqual(manifestErrors(replicaPod), []);
  assert.equal(replicaPod.metadata?.name, 'ws-42-api-2');
  assert.equal(replicaPod.metadata?.labels?.['svc.dev/replica'], '2');
  const env = replicaPod.spec!.containers[0].env!;
  assert.deepEqual(env.find((e) => e.name === 'SVC_REPLICA_INDEX'), { name: 'SVC_REPLICA_INDEX', value: '2' });
  assert.deepEqual(env.find((e) => e.name === 'SVC_REPLICA_LOG'), { name: 'SVC_REPLICA_LOG', value: 'stdout' });
  assert.equal(replicaPod.spec!.volumes!.find((v) => v.name === 'replica-config')?.secret?.secretName, 'ws-42-api-2-config');
  assert.deepEqual(replicaPod.spec!.hostAliases, [{ ip: '10.96.0.12', hostnames: ['api'] }]);
  assert.equal(replicaPod.spec!.securityContext?.runAsUser, 1_000_123);
  assert.equal(replicaPod.spec!.securityContext?.runAsGroup, 0);
  const config = { service: 'api', index: 2, steps: [], env: {}, ports: [], needs: [] } as unknown as ReplicaConfig;
  const secret = replicaConfigSecret(input, { ...apiService.spec, index: 2 }, config);
  assert.deepEqual(manifestErrors(secret), []);
  assert.equal(secret.metadata?.name, 'ws-42-api-2-config');
  assert.deepEqual(JSON.parse(secret.stringData!['config.json']), config);
  assert.deepEqual(manifestErrors(agentTokenSecret({ id: 7 }, 42, 'token')), []);
});

test('the agent takes its replica index from SVC_REPLICA_INDEX (a StatefulSet\'s ordinal) over config.json, and refuses a bad one', () => {
  const config = { service: 'api', index: 0 } as ReplicaConfig;
  assert.equal(replicaConfigWithIndex(config, { SVC_REPLICA_INDEX: '3' }).index, 3);
  assert.equal(replicaConfigWithIndex(config, {}).index, 0);
  assert.throws(() => replicaConfigWithIndex(config, { SVC_REPLICA_INDEX: 'two' }), /whole number/);
});

test('a replica\'s log is read from its container output; the lines of an agent restart replace the run before', () => {
  const lines: string[] = [];
  const writer = createStdoutLogWriter({ out: (line) => lines.push(line), now: () => new Date('2026-01-01T00:00:00Z') });
  writer.write('system', 'Starting replica 0 of api');
  writer.write('stdout', 'listening');
  const output = `${lines.join('')}node: some stray line\n${JSON.stringify({ seq: 1, at: '2026-01-01T00:01:00.000Z', stream: 'system', text: 'again' })}\n`;
  assert.deepEqual(parseLogOutput(lines.join('')).map((l) => l.text), ['Starting replica 0 of api', 'listening']);
  assert.deepEqual(parseLogOutput(output).map((l) => l.text), ['again']);
});

test('a landscape file read through the editor agent: found, missing, not a plain file, too large, not UTF-8', () => {
  assert.deepEqual(landscapeReadOf({ exitCode: 0, stdout: Buffer.from('name: demo\n'), stderr: '' }), { state: 'found', text: 'name: demo\n' });
  assert.deepEqual(landscapeReadOf({ exitCode: 3, stdout: Buffer.alloc(0), stderr: '' }), { state: 'missing' });
  assert.equal(landscapeReadOf({ exitCode: 4, stdout: Buffer.alloc(0), stderr: '' }).state, 'unreadable');
  assert.equal((landscapeReadOf({ exitCode: 0, stdout: Buffer.alloc(4 * 1024 * 1024 + 1), stderr: '' }) as { limitBytes?: number }).limitBytes, 4 * 1024 * 1024);
  assert.deepEqual(landscapeReadOf({ exitCode: 0, stdout: Buffer.from([0xff, 0xfe]), stderr: '' }), { state: 'unreadable', reason: 'it is not UTF-8' });
});

test('svc server --runtime kubernetes needs the agent and base images; kube settings without it are refused', () => {
  const config = loadServerConfig(['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1', '--kube-storage-class', 'fast'], {});
  assert.equal(config.runtime, 'kubernetes');
  assert.deepEqual(config.kubernetes, { systemNamespace: 'svc', agentImage: 'a:1', baseImage: 'b:1', storageClass: 'fast', volumeAccessMode: 'ReadWriteOnce', archiveClaim: 'svc-archives', archiveClaimGib: 100, installation: 'svc', requestPercent: 100 });
  assert.equal(loadServerConfig([], {}).runtime, 'local');
  const shared = loadServerConfig(['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1', '--kube-installation', 'blue', '--kube-request-percent', '25'], {});
  assert.deepEqual([shared.kubernetes?.installation, shared.kubernetes?.requestPercent], ['blue', 25]);
  assert.throws(() => loadServerConfig(['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1', '--kube-installation', 'Blue_1'], {}), /kube installation must be a DNS label/);
  assert.throws(() => loadServerConfig(['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1', '--kube-request-percent', '0'], {}), /from 1 to 100/);
  assert.throws(() => loadServerConfig(['--runtime', 'kubernetes', '--kube-base-image', 'b:1'], {}), (e: Error) => e instanceof ConfigError && /--kube-agent-image/.test(e.message));
  assert.throws(() => loadServerConfig(['--kube-storage-class', 'fast'], {}), /needs --runtime kubernetes/);
  assert.throws(() => loadServerConfig(['--runtime', 'nomad'], {}), /local or kubernetes/);
});

// ---- the volume Jobs' scripts, run with /bin/sh as the Job's container runs them ----

let scratch: string;
let repository: BareRepository;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-jobs-'));
  repository = await createBareRepository({ 'README.md': '# Demo\n', 'svc.yml': 'name: demo\n' }, { feature: { 'feature.txt': 'feature\n' } });
});

after(async () => {
  await rm(scratch, { recursive: true, force: true });
  await repository.remove();
});

/** Runs the Job's container command with the volume's root at `volume` and the archives at `archives` in place of /data and /archives. */
async function runJobScript(kind: 'clone' | 'prepare' | 'usage' | 'archive' | 'restore', volume: string, archives: string, source?: { url: string; ref?: string }): Promise<string> {
  const job = volumeJobManifest(input, settings, { kind, attempt: 1, source });
  const [file, ...args] = job.spec!.template.spec!.containers[0].command!.map((word) => word.replaceAll(/\/data(?![\w-])/g, volume).replace('/archives/', `${archives}/`));
  const { stdout } = await run(file, args, { env: { ...process.env, HOME: scratch, GIT_TERMINAL_PROMPT: '0' } });
  return stdout;
}

test('the clone Job clones beside a lost+found the file system keeps at the volume\'s root, and checks out the ref', async () => {
  const volume = path.join(scratch, 'clone-volume');
  await mkdir(path.join(volume, 'lost+found'), { recursive: true });
  await runJobScript('clone', volume, scratch, { url: repository.url, ref: 'feature' });
  const code = path.join(volume, 'app');
  assert.equal(await readFile(path.join(code, 'svc.yml'), 'utf8'), 'name: demo\n');
  assert.equal(await readFile(path.join(code, 'feature.txt'), 'utf8'), 'feature\n');
  await assert.rejects(stat(path.join(code, '.svc-clone')));
  assert.ok((await stat(path.join(volume, 'home'))).isDirectory(), 'the volume\'s layout: home/ beside app/');
  const { stdout } = await run('git', ['-C', code, 'status', '--porcelain', '--untracked-files=no']);
  assert.equal(stdout, '');
});

test('the archive Job reports the archive\'s sha256 and size; restore refills an empty volume; usage and prepare answer', async () => {
  const volume = path.join(scratch, 'archive-volume');
  const archives = path.join(scratch, 'archives');
  await mkdir(path.join(volume, 'app', 'src'), { recursive: true });
  await mkdir(archives);
  await writeFile(path.join(volume, 'app', 'src', 'app.js'), 'console.log(1);\n'.repeat(1000));
  assert.equal((await runJobScript('prepare', volume, archives)).trim(), '');
  assert.match((await runJobScript('usage', volume, archives)).trim(), /^\d+$/);
  const [sha256, bytes] = (await runJobScript('archive', volume, archives)).trim().split('\n').at(-1)!.split(' ');
  const packed = await readFile(path.join(archives, '42.tar.gz'));
  assert.equal(sha256, createHash('sha256').update(packed).digest('hex'));
  assert.equal(Number(bytes), packed.length);
  const restored = path.join(scratch, 'restored-volume');
  await mkdir(restored);
  await runJobScript('restore', restored, archives);
  assert.equal(await readFile(path.join(restored, 'app', 'src', 'app.js'), 'utf8'), 'console.log(1);\n'.repeat(1000));
});

// ---- the configuration and an API server that does not answer ----

test('without KUBECONFIG, ~/.kube/config or a pod\'s service account there is no cluster, and the driver says so', () => {
  assert.throws(() => loadKubeConfig({ HOME: scratch }), /no Kubernetes cluster is configured: set KUBECONFIG, or run svc in a pod of the cluster/);
});

test('an API server that does not answer stops the driver\'s start with the reason (no silent start that waits forever)', async () => {
  const closed = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const file = path.join(scratch, 'kubeconfig.yaml');
  await writeFile(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: here',
    `clusters: [{ name: here, cluster: { server: "https://127.0.0.1:${closed}" } }]`,
    'contexts: [{ name: here, context: { cluster: here, user: svc } }]',
    'users: [{ name: svc, user: { token: not-a-real-token } }]', '',
  ].join('\n'));
  const cluster = new Cluster(loadKubeConfig({ KUBECONFIG: file, HOME: scratch }));
  await assert.rejects(
    createKubernetesDriver({ cluster, settings, plans: builtInPlans, dataDir: scratch }),
    new RegExp(`the Kubernetes API server at https://127\\.0\\.0\\.1:${closed} did not answer svc: .*ECONNREFUSED`),
  );
  await cluster.close();
});
