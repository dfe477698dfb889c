// A managed PostgreSQL on a real cluster through the Kubernetes driver, by the seam the lifecycle uses
// (src/managed/instances.ts): Sync's ensure creates its StatefulSet, claim and Service and answers once it serves;
// a row written survives Teardown (the StatefulSet scaled to zero, the claim kept) and the next Sync; removal deletes
// the claim with the data. Runs when KUBECONFIG and the images are set (source the test cluster's environment);
// otherwise one skipped test says why. Team 937xxx (its namespace) is this file's own.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { builtInPlans } from '../src/capacity/plans.ts';
import type { NormalManagedService } from '../src/landscape/index.ts';
import { managedCatalog } from '../src/managed/catalog.ts';
import { instancesOf } from '../src/managed/instances.ts';
import { effectivePlan } from '../src/managed/lifecycle.ts';
import type { RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { labelKeys, managedClaimName, managedObjectName, teamNamespace } from '../src/runtime/kubernetes/names.ts';
import { containerSecurity } from '../src/runtime/kubernetes/pod-parts.ts';
import { pollUntil } from '../src/runtime/local/processes.ts';
import { managedProcessRef } from '../src/runtime/managed-process.ts';
import { redisCommand } from '../src/managed/redis-client.ts';
import { testClusterMissing } from './helpers/test-cluster.ts';

const skip = testClusterMissing(['SVC_TEST_KUBE_MANAGED_IMAGE']);
const env = process.env;
const teamId = 937_000 + (process.pid % 1000);
const workspace: WorkspaceRef = { id: 937_000 + (process.pid % 1000), teamId, uid: 3_137_000 + (process.pid % 1000), storageGib: 1 };
const password = 'kept-across-teardown';
const request = {
  // no plan: no CPU request, so the test's pods get the shared test node whatever other suites hold of its 2 CPUs
  // (the plan's requests and limits are test/kubernetes-managed-parts.test.ts's)
  id: 1, name: 'db', version: '16', uid: workspace.uid, plan: undefined,
  service: { type: 'managed', provider: 'postgres', plan: 'small', config: { database: 'shop', user: 'shop' }, secrets: { password }, resources: {} } as unknown as NormalManagedService,
};
const row = { number: 1, name: 'db', provider: 'postgres', team_id: teamId, workspace_id: workspace.id };

let driver: RuntimeDriver | undefined;
let clusterIp: string | undefined;
let scratch: string | undefined;
const cluster = skip ? undefined : new Cluster(loadKubeConfig());
after(async () => {
  await driver?.close();
  // the team's namespace goes with whatever the test left in it
  if (cluster) await cluster.remove('v1', 'Namespace', undefined, teamNamespace({ id: teamId }));
  if (cluster) await cluster.remove('v1', 'Namespace', undefined, `${teamNamespace({ id: teamId })}-probe`);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * A pod in `namespace` labelled as workspace `workspaceId`'s that opens TCP connections to ip:5432; exit code 0 when
 * it connected, else not 0. The policies are kube-router's to apply on its own watch: a pod may be reached in the
 * first seconds, before its rules are in; so refused (1) is only said after 5 failed tries in a row (within 30 s).
 */
async function probe(namespace: string, workspaceId: number, ip: string, name: string): Promise<number | undefined> {
  const once = `timeout 2 bash -c 'echo > /dev/tcp/${ip}/5432' 2> /dev/null`;
  const script = name === 'own'
    ? `for i in $(seq 1 20); do ${once} && exit 0; sleep 0.5; done; exit 1`
    : `fails=0; for i in $(seq 1 60); do if ${once}; then fails=0; else fails=$((fails+1)); fi; [ "$fails" -ge 5 ] && exit 1; sleep 0.5; done; exit 0`;
  const podName = `probe-${name}`;
  await cluster!.ensure({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: podName, namespace, labels: { [labelKeys.workspace]: String(workspaceId) } },
    spec: {
      restartPolicy: 'Never', automountServiceAccountToken: false,
      securityContext: { runAsUser: workspace.uid, runAsGroup: 0, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'probe', image: env.SVC_TEST_KUBE_BASE_IMAGE!, command: ['bash', '-c', script], securityContext: containerSecurity() }],
    },
  } as never);
  let code: number | undefined;
  await pollUntil(async () => {
    const pod = await cluster!.read<{ apiVersion: string; kind: string; status?: { containerStatuses?: Array<{ state?: { terminated?: { exitCode: number } } }> } }>('v1', 'Pod', namespace, podName);
    code = pod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode;
    return code !== undefined;
  }, 120_000, 200);
  await cluster!.remove('v1', 'Pod', namespace, podName);
  return code;
}

if (skip) test(`managed services on the kubernetes driver not run: ${skip}`, { skip }, () => undefined);
else {
  test("a managed PostgreSQL's row survives Teardown (scaled to zero, claim kept) and Sync; removal deletes the claim", async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-managed-'));
    driver = await createKubernetesDriver({
      cluster: new Cluster(loadKubeConfig()),
      settings: {
        systemNamespace: env.SVC_TEST_KUBE_NAMESPACE ?? 'svc', agentImage: env.SVC_TEST_KUBE_AGENT_IMAGE!, baseImage: env.SVC_TEST_KUBE_BASE_IMAGE!, managedImage: env.SVC_TEST_KUBE_MANAGED_IMAGE!,
        storageClass: env.SVC_TEST_KUBE_STORAGE_CLASS, volumeAccessMode: 'ReadWriteOnce', archiveClaim: 'svc-archives', archiveClaimGib: 1,
      },
      plans: builtInPlans,
      dataDir: scratch,
      startTimeoutMs: 180_000,
    });
    const host = { dataDir: scratch, toolsDir: env.SVC_TOOLS_DIR ?? '/var/cache/svc/tools', log: () => undefined };
    const instances = instancesOf({ driver, host }, 'postgres');
    assert.ok(instances, 'the kubernetes driver runs managed postgres with a managed image');
    const namespace = teamNamespace({ id: teamId });
    const ref = managedProcessRef(workspace, 'db');
    const connect = async () => {
      const address = await driver!.managedProcesses!.address(ref);
      assert.ok(address, 'it runs at a Pod IP');
      const client = new pg.Client({ host: address, port: 5432, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 10_000 });
      await client.connect();
      return client;
    };

    // Sync: created, serving, its database made
    assert.deepEqual(await instances.ensure(workspace, request), { host: 'db', port: 5432, database: 'shop', user: 'shop', version: '16' });
    const service = await cluster!.read<{ spec?: { clusterIP?: string } } & { apiVersion: string; kind: string }>('v1', 'Service', namespace, managedObjectName(workspace.id, 'db'));
    assert.ok(service?.spec?.clusterIP, 'its name on the workspace network has a cluster IP');
    assert.ok(service.spec.clusterIP);
    clusterIp = service.spec.clusterIP;
    const client = await connect();
    await client.query('CREATE TABLE kept (value text)');
    await client.query('INSERT INTO kept VALUES ($1)', ['written before teardown']);
    await client.end();

    // a dump over the network (pg_dump at the Pod IP), then a restore that puts the instance back as it was
    const placed = await instances.placed(workspace, request);
    const dumpFile = path.join(scratch, 'db.dump');
    assert.equal((await instances.dump!(placed, dumpFile)).format, 'pg_dump custom format');
    const later = await connect();
    await later.query('INSERT INTO kept VALUES ($1)', ['written after the dump']);
    await later.end();
    await instances.restore!(placed, dumpFile);
    const restored = await connect();
    assert.deepEqual((await restored.query('SELECT value FROM kept')).rows, [{ value: 'written before teardown' }]);
    await restored.end();

    // Teardown: scaled to zero, the claim kept
    await instances.stop(row);
    const set = await cluster!.read<{ spec?: { replicas?: number } } & { apiVersion: string; kind: string }>('apps/v1', 'StatefulSet', namespace, managedObjectName(workspace.id, 'db'));
    assert.equal(set?.spec?.replicas, 0);
    assert.equal(await instances.isRunning(row), false);
    assert.ok(await cluster!.read('v1', 'PersistentVolumeClaim', namespace, managedClaimName(workspace.id, 'db')), 'the claim stays');

    // the next Sync: the same data
    await instances.ensure(workspace, request);
    assert.equal(await instances.isRunning(row), true);
    const again = await connect();
    assert.deepEqual((await again.query('SELECT value FROM kept')).rows, [{ value: 'written before teardown' }]);
    await again.end();

    // removed from the landscape: the StatefulSet and the claim go
    await instances.remove(workspace, row);
    assert.equal(await cluster!.read('apps/v1', 'StatefulSet', namespace, managedObjectName(workspace.id, 'db')), undefined);
    const claimGone = await pollUntil(async () => (await cluster!.read('v1', 'PersistentVolumeClaim', namespace, managedClaimName(workspace.id, 'db'))) === undefined, 60_000, 250);
    assert.ok(claimGone, 'the claim is deleted with the instance');
  });

  test("only the workspace's own pods reach its instance: another workspace's pod is refused by the team's policies", async (t) => {
    assert.ok(driver && clusterIp, 'the PostgreSQL test opened the driver');
    const host = { dataDir: scratch!, toolsDir: env.SVC_TOOLS_DIR ?? '/var/cache/svc/tools', log: () => undefined };
    await instancesOf({ driver, host }, 'postgres')!.ensure(workspace, request);
    const elsewhere = `${teamNamespace({ id: teamId })}-probe`;
    await cluster!.ensure({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: elsewhere } } as never);
    const namespace = teamNamespace({ id: teamId });
    const [own, other, foreign] = await Promise.all([
      probe(namespace, workspace.id, clusterIp, 'own'), probe(namespace, workspace.id + 1, clusterIp, 'other'), probe(elsewhere, workspace.id, clusterIp, 'foreign'),
    ]);
    await instancesOf({ driver, host }, 'postgres')!.remove(workspace, row);
    assert.equal(own, 0, "the workspace's own pod connects by the Service");
    // the team namespace denies every ingress by default (namespace.ts): a pod of another namespace reaching it means
    // the cluster enforces no NetworkPolicy at all, which this test cannot change
    if (foreign === 0) return t.skip('this cluster enforces no NetworkPolicy (a pod of another namespace reached a pod under default-deny-ingress): is kube-router running?');
    assert.notEqual(other, 0, "another workspace's pod of the same team is refused");
  });

  test("a managed Redis's key survives Teardown and Sync (its snapshot on the claim); a restore is refused, not faked", async () => {
    assert.ok(driver, 'the PostgreSQL test opened the driver');
    const host = { dataDir: scratch!, toolsDir: env.SVC_TOOLS_DIR ?? '/var/cache/svc/tools', log: () => undefined };
    const instances = instancesOf({ driver, host }, 'redis');
    assert.ok(instances?.dump, 'dumps are redis-cli --rdb over the network');
    assert.equal(instances.restore, undefined, 'a restore replaces files the server cannot reach');
    const cache = {
      id: 2, name: 'cache', version: '7', uid: workspace.uid, plan: undefined,
      service: { type: 'managed', provider: 'redis', plan: 'small', config: {}, secrets: { password: 'redis-kept-password' }, resources: {} } as unknown as NormalManagedService,
    };
    const cacheRow = { number: 2, name: 'cache', provider: 'redis', team_id: teamId, workspace_id: workspace.id };
    assert.deepEqual(await instances.ensure(workspace, cache), { host: 'cache', port: 6379, version: '7' });
    const target = async () => ({ address: (await driver!.managedProcesses!.address(managedProcessRef(workspace, 'cache')))!, port: 6379, password: 'redis-kept-password' });
    assert.equal(await redisCommand(await target(), ['SET', 'greeting', 'kept']), 'OK');
    await instances.stop(cacheRow); // SIGTERM: Redis saves its snapshot on the claim
    assert.equal(await instances.isRunning(cacheRow), false);
    await instances.ensure(workspace, cache);
    assert.equal(await redisCommand(await target(), ['GET', 'greeting']), 'kept');
    await instances.remove(workspace, cacheRow);
    const claimGone = await pollUntil(async () => (await cluster!.read('v1', 'PersistentVolumeClaim', teamNamespace({ id: teamId }), managedClaimName(workspace.id, 'cache'))) === undefined, 60_000, 250);
    assert.ok(claimGone);
  });

  test('a managed NATS serves its client port and monitoring endpoint, pauses and resumes', async () => {
    assert.ok(driver, 'the PostgreSQL test opened the driver');
    const host = { dataDir: scratch!, toolsDir: env.SVC_TOOLS_DIR ?? '/var/cache/svc/tools', log: () => undefined };
    const instances = instancesOf({ driver, host }, 'nats');
    assert.ok(instances);
    // the plan's JetStream limits, without its CPU request (see above)
    const plan = effectivePlan(managedCatalog(), 'nats', 'small', {})!;
    const { cpu: _cpu, ...resources } = plan.resources;
    const bus = {
      id: 3, name: 'bus', version: '2', uid: workspace.uid, plan: { ...plan, resources },
      service: { type: 'managed', provider: 'nats', plan: 'small', config: {}, secrets: { password: 'nats-kept-password' }, resources: {} } as unknown as NormalManagedService,
    };
    const busRow = { number: 3, name: 'bus', provider: 'nats', team_id: teamId, workspace_id: workspace.id };
    assert.equal((await instances.ensure(workspace, bus)).port, 4222);
    const address = await driver.managedServiceAddress!(workspace, 'bus');
    assert.equal((await fetch(`http://${address}:8222/healthz`)).status, 200, 'the monitoring endpoint the router serves');
    await instances.stop(busRow);
    assert.equal(await instances.isRunning(busRow), false);
    await instances.ensure(workspace, bus);
    assert.equal(await instances.isRunning(busRow), true);
    await instances.remove(workspace, busRow);
  });
}
