// A workspace's life on the real cluster through svc's HTTP API, as a developer lives it (issue 37 item 2): created
// from a git repository served to the pods (the clone Job), Running, its editor answering through the router on the
// editor host, `svc exec` (the exec WebSocket) running a command in the editor pod. Runs when the test cluster is
// configured (test/helpers/test-cluster.ts); otherwise one skipped test says why. An installation of this file's own,
// its namespaces deleted at the end.
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { builtInPlans } from '../src/capacity/plans.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { labelKeys } from '../src/runtime/kubernetes/names.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, serveOverHttp, type BareRepository, type ServedRepository } from './helpers/git.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeTestInstallation, testClusterMissing, testClusterSettings, testInstallation } from './helpers/test-cluster.ts';
import { operationFinished, until } from './helpers/wait.ts';

const skip = testClusterMissing();
const installation = testInstallation('e2e');

const files: Record<string, string> = {
  'svc.yml': 'schema: svc/v1\n',
  'README.md': '# on the cluster\n',
};

let server: TestServer | undefined;
let driver: RuntimeDriver | undefined;
let scratch = '';
let repository: BareRepository | undefined;
let served: ServedRepository | undefined;
let dev: ApiClient;
let tools = '';
let ws = 0;

async function openDriver(): Promise<RuntimeDriver> {
  return createKubernetesDriver({
    cluster: new Cluster(loadKubeConfig()),
    settings: testClusterSettings(installation),
    plans: builtInPlans,
    dataDir: path.join(scratch, 'kubernetes'),
    startTimeoutMs: 240_000,
  });
}

before(async () => {
  if (skip) return;
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-e2e-'));
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-kube-e2e-cli-'));
  driver = await openDriver();
  const kube = driver;
  server = await startTestServer({ driver: () => kube });
  const person = await createPerson(server.admin, 'kube-e2e@example.com');
  dev = person.key;
  repository = await createBareRepository(files);
  served = await serveOverHttp(repository, process.env.SVC_TEST_CLUSTER_HOST!);
});

after(async () => {
  if (skip) return;
  await server?.close();
  await driver?.close();
  await served?.close();
  await repository?.remove();
  await removeTestInstallation(installation);
  if (scratch) await rm(scratch, { recursive: true, force: true });
  if (tools) await rm(tools, { recursive: true, force: true });
});

/** A request to the router for one of the workspace's hosts (fetch cannot set Host). */
function routed(host: string, urlPath: string): Promise<{ status: number; text: string }> {
  const port = Number(new URL(server!.url).port);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: urlPath, headers: { host, 'svc-authorization': `Bearer ${dev.auth.token}` }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    request.end();
  });
}
const domain = () => server!.server.config.workspaceDomain;

const svc = async (...args: string[]) => runSvc(args, { SVC_URL: server!.url, SVC_TOKEN: dev.auth.token!, XDG_CONFIG_HOME: tools });

if (skip) test(`the end-to-end suite on the kubernetes driver not run: ${skip}`, { skip }, () => undefined);
else {
  test('1. created from a git repository (the clone Job): Running, the editor answers on its host, svc exec runs in the editor pod', async () => {
    const org = (await dev.post('/orgs', { name: 'Kube E2E' })).body.id;
    const team = (await dev.post('/teams', { org_id: org, name: 'Kube E2E' })).body.id;
    const created = await dev.post('/workspaces', { team_id: team, name: 'on-the-cluster', storage_gib: 1, git: { provider: 'git', repo: served!.url } });
    assert.equal(created.status, 202, created.text);
    ws = Number(created.body.target.split('/')[2]);
    const creation = await operationFinished(dev, created.body.id, 300_000);
    assert.equal(creation.state, 'succeeded', JSON.stringify(creation));
    const workspace = (await dev.get(`/workspaces/${ws}`)).body;
    assert.deepEqual([workspace.state, workspace.status_detail], ['running', 'Workspace is running']);
    const cluster = new Cluster(loadKubeConfig());
    try {
      const jobs = await cluster.list<{ metadata?: { name?: string } }>('batch/v1', 'Job', '', `${labelKeys.installation}=${installation},${labelKeys.workspace}=${ws}`);
      assert.ok(jobs.some((job) => job.metadata?.name === `ws-${ws}-clone-1`), `the clone Job: ${JSON.stringify(jobs.map((j) => j.metadata?.name))}`);
    } finally {
      await cluster.close();
    }

    const editor = await until(async () => {
      const answer = await routed(`ide-w${ws}.${domain()}`, '/');
      return answer.status === 200 ? answer : undefined;
    }, 'the editor to answer on its host');
    assert.equal(editor.status, 200);

    const run = await svc('exec', String(ws), '--', 'sh', '-c', 'cat README.md; pwd; hostname; echo err >&2; exit 3');
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.stdout, `# on the cluster\n/data/app\nws-${ws}\n`, "the editor pod's hostname is the workspace's name");
    assert.equal(run.stderr, 'err\n');
  });
}
