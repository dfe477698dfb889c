// The managed-service lifecycle (src/managed/lifecycle.ts, health.ts) with a server's database and the Kubernetes
// driver on a real cluster: Sync's statuses and details as on the local driver (creating -> synchronized), Teardown
// pauses (paused, the StatefulSet at zero), the next Sync resumes (unpausing -> synchronized), the health check reads
// `unknown` when the instance's pod is gone behind svc's back, and a Sync without the service deletes it with its
// claim (deleted). Runs when KUBECONFIG and the images are set; otherwise one skipped test says why. Its team id
// (the namespace) is 938xxx, this file's own.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { builtInPlans } from '../src/capacity/plans.ts';
import { normalizeLandscape, parseLandscape, type NormalManagedService } from '../src/landscape/index.ts';
import { findProvider, managedCatalog } from '../src/managed/catalog.ts';
import { checkManagedHealth } from '../src/managed/health.ts';
import { pauseManagedServices, syncManagedServices, type ManagedLifecycleDeps } from '../src/managed/lifecycle.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { managedClaimName, managedObjectName, teamNamespace } from '../src/runtime/kubernetes/names.ts';
import { pollUntil } from '../src/runtime/local/processes.ts';
import { liveManagedServices } from '../src/store/managed-services.ts';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { createPerson } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { testClusterMissing } from './helpers/test-cluster.ts';

const skip = testClusterMissing(['SVC_TEST_KUBE_MANAGED_IMAGE']);
const env = process.env;
const firstTeamId = 938_000 + (process.pid % 1000);
let server: TestServer | undefined;
let driver: RuntimeDriver | undefined;
let scratch: string | undefined;
let teamId: number | undefined;
const cluster = skip ? undefined : new Cluster(loadKubeConfig());
after(async () => {
  await server?.close();
  await driver?.close();
  if (cluster && teamId !== undefined) await cluster.remove('v1', 'Namespace', undefined, teamNamespace({ id: teamId }));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const landscape = (withDb: boolean, password = 'lifecycle-password') => {
  const text = `schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps:\n      - run: sleep 1\n${withDb ? '  db:\n    type: managed\n    provider: postgres\n    config:\n      database: shop\n' : ''}`;
  const normal = normalizeLandscape(parseLandscape(text).landscape!);
  // the password as Sync fills it in
  if (withDb) Object.assign(normal.services.db as NormalManagedService, { secrets: { password } });
  return normal;
};

/**
 * The catalog with PostgreSQL's plans asking for no CPU: the shared test node's 2 CPUs may be held by other suites'
 * pods, and a plan's requests are test/kubernetes-managed-parts.test.ts's to check.
 */
function catalogWithoutCpu() {
  const catalog = structuredClone(managedCatalog());
  for (const plan of findProvider(catalog, 'postgres')!.plans) delete (plan.resources as Record<string, unknown>).cpu;
  return catalog;
}

if (skip) test(`the managed lifecycle on the kubernetes driver not run: ${skip}`, { skip }, () => undefined);
else {
  test('Sync, Teardown, Sync, a pod gone behind svc, removal: the statuses the local driver shows, on the cluster', async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-lifecycle-'));
    const kube = await createKubernetesDriver({
      cluster: new Cluster(loadKubeConfig()),
      settings: {
        systemNamespace: env.SVC_TEST_KUBE_NAMESPACE ?? 'svc', agentImage: env.SVC_TEST_KUBE_AGENT_IMAGE!, baseImage: env.SVC_TEST_KUBE_BASE_IMAGE!, managedImage: env.SVC_TEST_KUBE_MANAGED_IMAGE!,
        storageClass: env.SVC_TEST_KUBE_STORAGE_CLASS, volumeAccessMode: 'ReadWriteOnce', archiveClaim: 'svc-archives', archiveClaimGib: 1,
      },
      plans: builtInPlans,
      dataDir: scratch,
      startTimeoutMs: 180_000,
    });
    driver = kube;
    server = await startTestServer({ driver: () => kube });
    const pool = server.server.database.pool;
    await pool.query(`ALTER TABLE teams ALTER COLUMN id RESTART WITH ${firstTeamId}`);
    const owner = await createPerson(server.admin, 'managed-kube@example.com');
    const org = (await owner.key.post('/orgs', { name: 'Kube' })).body.id;
    teamId = Number((await owner.key.post('/teams', { org_id: org, name: 'Kube' })).body.id);
    assert.ok(teamId >= firstTeamId, 'a team id of this file');
    const workspace = await insertWorkspace(pool, {
      teamId, name: 'kube-managed', plan: 'dev', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
      idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', createdBy: owner.id, at: new Date(),
    });
    const deps: ManagedLifecycleDeps = {
      pool, driver: kube, catalog: catalogWithoutCpu(), now: () => new Date(),
      host: { dataDir: scratch, toolsDir: env.SVC_TOOLS_DIR ?? '/var/cache/svc/tools', log: () => undefined },
    };
    const namespace = teamNamespace({ id: teamId });
    const statusOf = async () => (await liveManagedServices(pool, workspace.id)).map((row) => row.status);

    const [created] = await syncManagedServices(deps, workspace, landscape(true));
    assert.equal(created.status, 'synchronized', JSON.stringify(created.details));
    assert.deepEqual(created.details, { host: 'db', port: 5432, database: 'shop', user: 'app', version: '17' }, "the catalog's default");

    await pauseManagedServices(deps, workspace);
    assert.deepEqual(await statusOf(), ['paused']);
    const set = await cluster!.read<{ spec?: { replicas?: number } } & { apiVersion: string; kind: string }>('apps/v1', 'StatefulSet', namespace, managedObjectName(workspace.id, 'db'));
    assert.equal(set?.spec?.replicas, 0);
    assert.deepEqual(await checkManagedHealth(deps), [], 'a paused instance is left paused');

    const [resumed] = await syncManagedServices(deps, workspace, landscape(true));
    assert.equal(resumed.status, 'synchronized');
    assert.deepEqual(await checkManagedHealth(deps), [], 'a running instance stays synchronized');

    // a password changed in the vault: the running instance is updated (its pod restarts and takes the new one)
    const [changed] = await syncManagedServices(deps, workspace, landscape(true, 'changed-password'));
    assert.equal(changed.status, 'synchronized', JSON.stringify(changed.details));
    const address = await kube.managedProcesses!.address({ teamId, workspaceId: workspace.id, name: 'db' });
    const client = new pg.Client({ host: address, port: 5432, user: 'app', password: 'changed-password', database: 'shop' });
    await client.connect();
    assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    await client.end();

    // its pod gone behind svc's back (scaled away by someone else): the health check says unknown, as locally
    await cluster!.update<{ apiVersion: string; kind: string; spec?: { replicas?: number } }>('apps/v1', 'StatefulSet', namespace, managedObjectName(workspace.id, 'db'), (object) => {
      object.spec = { ...object.spec, replicas: 0 };
    });
    assert.ok(await pollUntil(async () => !(await kube.managedProcesses!.address({ teamId: teamId!, workspaceId: workspace.id, name: 'db' })), 60_000, 100));
    assert.deepEqual(await checkManagedHealth(deps), [`${created.id}: unknown`]);
    const [again] = await syncManagedServices(deps, workspace, landscape(true));
    assert.equal(again.status, 'synchronized', 'the next Sync brings it back');

    // the service gone from the file: deleted with its claim
    await syncManagedServices(deps, workspace, landscape(false));
    assert.deepEqual(await statusOf(), []);
    const row = await pool.query<{ status: string }>('SELECT status FROM managed_services WHERE id = $1', [created.id]);
    assert.equal(row.rows[0].status, 'deleted');
    assert.ok(await pollUntil(async () => (await cluster!.read('v1', 'PersistentVolumeClaim', namespace, managedClaimName(workspace.id, 'db'))) === undefined, 60_000, 250));
  });
}
