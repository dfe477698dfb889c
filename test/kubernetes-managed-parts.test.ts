// Managed instances on the Kubernetes driver, offline: the objects a described PostgreSQL becomes (StatefulSet,
// claim, Secret, Service) pass the Kubernetes schemas and carry the labels the team namespace's policies select;
// and the description's script itself, run with /bin/sh as an unprivileged UID on this machine's PostgreSQL
// binaries as the pod runs it, creates the instance, keeps its data across a stop, and takes a changed password at
// its next start. The cluster run is test/kubernetes-managed.test.ts.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { loadServerConfig } from '../src/core/config.ts';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { managedCatalog } from '../src/managed/catalog.ts';
import { effectivePlan } from '../src/managed/lifecycle.ts';
import { postgresProcess, postgresScript } from '../src/managed/postgres-process.ts';
import { binariesDir } from '../src/managed/postgres-rules.ts';
import { installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { pollUntil } from '../src/runtime/local/processes.ts';
import { managedProcessEnv } from '../src/runtime/managed-process.ts';
import {
  managedClaimManifest, managedPodState, managedSecretManifest, managedServiceManifest, managedStatefulSetManifest, processDigest, PROCESS_DIGEST_ANNOTATION,
} from '../src/runtime/kubernetes/managed.ts';
import { labelKeys } from '../src/runtime/kubernetes/names.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';
import type { KubernetesSettings } from '../src/runtime/kubernetes/settings.ts';
import type { NormalManagedService } from '../src/landscape/index.ts';

const settings: KubernetesSettings & { managedImage: string } = {
  systemNamespace: 'svc', volumeAccessMode: 'ReadWriteOnce', agentImage: 'svc.local/agent:1', baseImage: 'svc.local/base:1',
  managedImage: 'svc.local/managed:1', archiveClaim: 'svc-archives', archiveClaimGib: 10,
};

const service = (password: string): NormalManagedService => ({
  type: 'managed', provider: 'postgres', plan: 'small', config: { database: 'shop', user: 'shop' }, secrets: { password }, resources: {},
} as unknown as NormalManagedService);

const request = (password: string, version = '16') => ({
  id: 7, name: 'db', service: service(password), version, uid: 4321, plan: effectivePlan(managedCatalog(), 'postgres', 'small', {}),
});

test('a described PostgreSQL becomes a StatefulSet, its claim, Secret and Service, all passing the schemas', () => {
  const process = postgresProcess(request('first-password'));
  const input = { team: { id: 31 }, workspaceId: 501, name: 'db', process };
  const manifests = [managedSecretManifest(input), managedClaimManifest(input, settings), managedServiceManifest(input), managedStatefulSetManifest(input, settings, 1), managedStatefulSetManifest(input, settings, 0)];
  for (const manifest of manifests) assert.deepEqual(manifestErrors(manifest), []);
  const [secret, claim, svc, running, paused] = manifests as [ReturnType<typeof managedSecretManifest>, ReturnType<typeof managedClaimManifest>, ReturnType<typeof managedServiceManifest>, ReturnType<typeof managedStatefulSetManifest>, ReturnType<typeof managedStatefulSetManifest>];
  assert.equal(running.metadata?.name, 'ws-501-db');
  assert.equal(running.metadata?.namespace, 'svc-team-31');
  assert.equal(running.spec?.replicas, 1);
  assert.equal(paused.spec?.replicas, 0);
  assert.equal(claim.metadata?.name, 'ws-501-db-data');
  assert.equal(claim.spec?.resources?.requests?.storage, '1024Mi', "the plan's storage");
  assert.equal(svc.metadata?.name, 'ws-501-db', 'the service name the workspace resolves (its labels name the service)');
  assert.equal(svc.metadata?.labels?.[labelKeys.service], 'db');
  assert.deepEqual(svc.spec?.ports?.map((p) => p.port), [5432]);
  // the pod carries the workspace's label, so only the workspace's pods (and svc's router) reach it
  const pod = running.spec!.template;
  assert.equal(pod.metadata?.labels?.[labelKeys.workspace], '501');
  assert.equal(pod.metadata?.labels?.[labelKeys.component], 'managed');
  assert.equal(pod.metadata?.labels?.[labelKeys.replica], undefined, 'never taken for a replica');
  assert.deepEqual(running.spec?.selector.matchLabels, svc.spec?.selector);
  const spec = pod.spec!;
  assert.equal(spec.securityContext?.runAsUser, 4321);
  assert.equal(spec.securityContext?.runAsNonRoot, true);
  assert.equal(spec.containers[0].image, 'svc.local/managed:1');
  assert.deepEqual(spec.containers[0].resources?.limits, { cpu: '500m', memory: '512Mi' });
  assert.deepEqual(spec.containers[0].lifecycle?.preStop?.exec?.command, ['/bin/sh', '-c', 'kill -INT 1'], 'a fast shutdown');
  assert.equal(spec.containers[0].env?.find((e) => e.name === managedProcessEnv.bin)?.value, '/opt/svc-managed/postgres/16/bin');
  // the password is in the Secret only: not in the script, the environment or the annotation
  assert.equal(JSON.stringify(running).includes('first-password'), false);
  assert.match(secret.stringData!.password, /^first-password\n$/);
  assert.match(secret.stringData!.passwd, /^postgres:x:4321:0:/);
  // a changed password is another description: the pod rolls, and its start sets the new one
  const changed = postgresProcess(request('second-password'));
  assert.notEqual(processDigest(changed), processDigest(process));
  assert.equal(pod.metadata?.annotations?.[PROCESS_DIGEST_ANNOTATION], processDigest(process));
});

test("a pod's state: ready at its IP, an old description still rolling, a server that exited with its reason", () => {
  const ready = { metadata: { annotations: { [PROCESS_DIGEST_ANNOTATION]: 'a' } }, status: { podIP: '10.9.0.4', conditions: [{ type: 'Ready', status: 'True' }] } };
  assert.deepEqual(managedPodState(ready as never, 'a'), { state: 'ready', address: '10.9.0.4' });
  assert.equal(managedPodState(ready as never, 'b').state, 'starting');
  assert.deepEqual(managedPodState(undefined), { state: 'absent' });
  const crashed = { metadata: {}, status: { containerStatuses: [{ name: 'server', restartCount: 1, lastState: { terminated: { exitCode: 1, reason: 'Error' } }, state: { waiting: { reason: 'ContainerCreating' } } }] } };
  assert.deepEqual(managedPodState(crashed as never), { state: 'failed', reason: 'the server exited with 1 (Error)' });
});

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const scriptSkip = process.getuid?.() !== 0
  ? 'needs root: the script runs as another UID'
  : (await installedPostgresMajors(toolsDir)).includes(16) ? false : `PostgreSQL 16 is not installed in ${toolsDir}; run scripts/setup-postgres.sh`;

const dirs: string[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

test("the description's script initialises, keeps its data across a stop, and takes a changed password", { skip: scriptSkip }, async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-script-'));
  dirs.push(root);
  await chmod(root, 0o755);
  const data = path.join(root, 'data-root');
  const secrets = path.join(root, 'secrets');
  await mkdir(data);
  const nobody = 65534; // has a passwd entry here, as the pod's mounted /etc/passwd gives the workspace UID one
  await chown(data, nobody, 0);
  const port = await freeLoopbackPort();
  const run = async (password: string) => {
    const described = postgresProcess({ ...request(password), uid: nobody });
    await rm(secrets, { recursive: true, force: true });
    await mkdir(secrets, { mode: 0o755 });
    for (const [name, text] of Object.entries(described.secretFiles)) {
      await writeFile(path.join(secrets, name), text, { mode: 0o400 });
      await chown(path.join(secrets, name), nobody, 0);
    }
    const script = postgresScript({ major: 16, user: 'shop', port });
    const child = spawn('setpriv', ['--reuid', String(nobody), '--regid', '0', '--clear-groups', '/bin/sh', '-c', script], {
      cwd: data,
      env: { PATH: '/usr/bin:/bin', ...described.env, [managedProcessEnv.bin]: path.join(binariesDir(toolsDir, 16), 'bin'), [managedProcessEnv.data]: data, [managedProcessEnv.secrets]: secrets },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const connect = () => new pg.Client({ host: '127.0.0.1', port, user: 'shop', password, database: 'postgres', connectionTimeoutMillis: 2000 });
    const up = await pollUntil(async () => {
      if (child.exitCode !== null) return true;
      const client = connect();
      client.on('error', () => undefined);
      try {
        await client.connect();
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    }, 60_000, 100);
    assert.ok(up && child.exitCode === null, `the server did not start: ${output}`);
    const stop = async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT'); // what the pod's preStop sends
      await exited;
    };
    return { connect, stop };
  };
  const first = await run('first-password');
  const client = first.connect();
  await client.connect();
  await client.query('CREATE TABLE kept (value text)');
  await client.query('INSERT INTO kept VALUES ($1)', ['row one']);
  await client.end();
  await first.stop();
  const second = await run('second-password');
  const again = second.connect();
  await again.connect();
  assert.deepEqual((await again.query('SELECT value FROM kept')).rows, [{ value: 'row one' }]);
  await again.end();
  await second.stop();
});

test('--kube-managed-image (or SVC_KUBE_MANAGED_IMAGE) names the managed image; it needs --runtime kubernetes', () => {
  const base = ['--runtime', 'kubernetes', '--kube-agent-image', 'a:1', '--kube-base-image', 'b:1'];
  assert.equal(loadServerConfig([...base, '--kube-managed-image', 'm:1'], {}).kubernetes?.managedImage, 'm:1');
  assert.equal(loadServerConfig(base, { SVC_KUBE_MANAGED_IMAGE: 'm:2' }).kubernetes?.managedImage, 'm:2');
  assert.equal(loadServerConfig(base, {}).kubernetes?.managedImage, undefined, 'optional: managed services are then refused at Sync');
  assert.throws(() => loadServerConfig(['--kube-managed-image', 'm:1'], {}), /--kube-managed-image needs --runtime kubernetes/);
});
