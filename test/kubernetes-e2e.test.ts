// A workspace's life on the real cluster through svc's HTTP API, as a developer lives it (issue 37 item 2), one
// workspace through the steps in order: 1. created from a git repository served to the pods (the clone Job), Running,
// its editor answering through the router on the editor host, `svc exec` (the exec WebSocket) in the editor pod;
// 2. a Sync of `web` (two replicas behind an HTTP health check), a `container` service from the base image and a
// managed PostgreSQL, the dev URL answered by both replicas, each reaching the database and the container by name;
// 3. sleep and a wake by a request to the dev URL, a replica pod deleted with kubectl made again, a wake on the
// cordoned node reading "Waiting for a node: <the scheduler's reason>" (the workspace's reads do not wait on the
// node either), the editor pod drained (evicted) putting the running workspace to sleep "since its pod was evicted";
// 4. svc stopped during a Sync and started again on the same
// database and data directory (the durable Sync finishes), then delete and purge leaving no object labelled with the
// workspace. Runs when the test cluster is configured (test/helpers/test-cluster.ts); otherwise one skipped test
// says why. An installation of this file's own, its namespaces deleted at the end.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { builtInPlans } from '../src/capacity/plans.ts';
import { loadServerConfig } from '../src/core/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../src/runtime/kubernetes/driver.ts';
import { labelKeys } from '../src/runtime/kubernetes/names.ts';
import { TestImageSource } from './helpers/images.ts';
import { ApiClient, createPerson } from './helpers/client.ts';
import { adminDatabaseUrl } from './helpers/database.ts';
import { createBareRepository, serveOverHttp, type BareRepository, type ServedRepository } from './helpers/git.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, TEST_VOLUME_BACKEND, type TestServer } from './helpers/server.ts';
import { removeTestInstallation, testClusterMissing, testClusterSettings, testInstallation } from './helpers/test-cluster.ts';
import { operationFinished, until } from './helpers/wait.ts';

const run = promisify(execFile);
const skip = testClusterMissing();
const kubectl = (...args: string[]) => run(process.env.SVC_KUBECTL ?? '/var/cache/svc/tools/kubernetes-1.34.4/bin/kubectl', args);
/** The test cluster's containerd (scripts/test-cluster/common.sh), where its images were imported. */
const containerd = process.env.SVC_CONTAINERD_ADDRESS ?? '/run/svc-test-cluster/containerd.sock';
const installation = testInstallation('e2e');

// web: two replicas behind a health check, asking the database (PostgreSQL's answer to an SSLRequest: N or S) and the
// container service `api` (the base image, node from the agent's bundle) on the workspace network
const svcYml = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    secrets:
      password: \${{ secrets.DB_PASSWORD }}
  api:
    type: container
    image: ${process.env.SVC_TEST_KUBE_BASE_IMAGE}
    command: [/opt/svc/bin/node, /data/app/api.js]
    ports:
      - port: 9000
  web:
    type: steps
    replicas: 2
    needs: [api]
    steps:
      - run: exec /opt/svc/bin/node web.js
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080, path: /health, mode: http-2xx }
    env:
      DATABASE_URL: \${{ services.db.dsn }}
`;
const webJs = `const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const dsn = new URL(process.env.DATABASE_URL);
const askDb = () => new Promise((resolve) => {
  const socket = net.connect(Number(dsn.port || 5432), dsn.hostname, () => socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])));
  socket.once('data', (data) => { resolve(data.toString('latin1', 0, 1)); socket.destroy(); });
  socket.on('error', (error) => resolve('error ' + error.message));
});
const askApi = () => new Promise((resolve) => {
  http.get('http://api:9000/', { agent: false }, (response) => { let text = ''; response.on('data', (c) => (text += c)); response.on('end', () => resolve(response.statusCode === 200 ? text : response.statusCode + ' ' + text)); })
    .on('error', (error) => resolve('error ' + error.message));
});
http.createServer(async (req, res) => {
  if (req.url === '/health') return res.end('ok');
  res.end(os.hostname() + ': db ' + dsn.hostname + ' answered ' + (await askDb()) + '; ' + (await askApi()) + '\\n');
}).listen(8080, '0.0.0.0');
`;
const apiJs = `require('node:http').createServer((req, res) => res.end('api on ' + require('node:os').hostname())).listen(9000, '0.0.0.0');\n`;
const files: Record<string, string> = {
  'svc.yml': svcYml,
  'web.js': webJs,
  'api.js': apiJs,
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
let digestName = '';
let images: TestImageSource | undefined;
/** The server started again on the same database and data directory (step 4), closed before the first's close. */
let restarted: RunningServer | undefined;
let restartedDriver: RuntimeDriver | undefined;

/**
 * The base image as an image source answers it: its digest as containerd holds it. The cluster has no registry, so
 * the pinned name (`<repository>@<digest>`, what a pull at that digest would have recorded) is added to containerd for
 * the kubelet to find it, and removed at the end.
 */
async function baseImageSource(): Promise<TestImageSource> {
  const image = process.env.SVC_TEST_KUBE_BASE_IMAGE!;
  const listed = await run('ctr', ['-a', containerd, '-n', 'k8s.io', 'images', 'ls', `name==${image}`]);
  const digest = /\s(sha256:[0-9a-f]{64})\s/.exec(listed.stdout)?.[1];
  assert.ok(digest, `the base image in containerd: ${listed.stdout}`);
  digestName = `${image.slice(0, image.lastIndexOf(':'))}@${digest}`;
  await run('ctr', ['-a', containerd, '-n', 'k8s.io', 'images', 'tag', '--force', image, digestName]);
  const source = new TestImageSource();
  source.add(image, scratch, { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], Cmd: ['/bin/bash'] }, digest);
  return source;
}

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
  images = await baseImageSource();
  server = await startTestServer({ driver: () => kube, imageSource: images });
  const person = await createPerson(server.admin, 'kube-e2e@example.com');
  dev = person.key;
  repository = await createBareRepository(files);
  served = await serveOverHttp(repository, process.env.SVC_TEST_CLUSTER_HOST!);
});

after(async () => {
  if (skip) return;
  if (restarted) {
    // the first server is closed already: the second closes, then its database and data directory go as TestServer's would
    await restarted.close();
    await restartedDriver?.close();
    const admin = new pg.Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(restarted.config.databaseUrl!).pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
    await rm(restarted.config.dataDir, { recursive: true, force: true });
  } else await server?.close();
  await driver?.close();
  await served?.close();
  await repository?.remove();
  await removeTestInstallation(installation);
  if (digestName) await run('ctr', ['-a', containerd, '-n', 'k8s.io', 'images', 'rm', digestName]).catch(() => undefined);
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

/** The workspace's team namespace (the installation's). */
const namespaceOfWs = async () => `${installation}-team-${(await dev.get(`/workspaces/${ws}`)).body.team_id}`;
/** The workspace's pods as `name uid phase`. */
const podLines = async (namespace: string) =>
  (await kubectl('-n', namespace, 'get', 'pods', '-l', `svc.dev/workspace=${ws}`, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.metadata.uid} {.status.phase}{"\\n"}{end}')).stdout.trim().split('\n').filter(Boolean);
/** Those of the editor and the replicas that have not ended. */
const livePods = async (namespace: string) => (await podLines(namespace)).filter((line) => /-(editor|web-\d|api-\d) /.test(line) && !/ (Succeeded|Failed)$/.test(line));
async function putToSleep(): Promise<void> {
  const slept = await until(async () => {
    const answer = await dev.post(`/workspaces/${ws}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
  assert.equal(slept.body.state, 'sleeping');
  const namespace = await namespaceOfWs();
  await until(async () => ((await livePods(namespace)).length === 0 ? true : undefined), 'the editor and replica pods to be gone');
}
/** The dev URL's answer once web reaches api too: a Service made moments ago may not be in kube-proxy's rules yet. */
const devAnswer = () => until(async () => {
  const answer = await routed(`w${ws}.${domain()}`, '/');
  return answer.status === 200 && answer.text.includes('; api on ') ? answer : undefined;
}, 'the dev URL to answer', 240_000);
const workspaceRuns = () => until(async () => ((await dev.get(`/workspaces/${ws}`)).body.state === 'running' ? true : undefined), 'the workspace to run', 240_000);

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

  test('2. Sync: web (two replicas, a health check), a container service and a managed PostgreSQL; the dev URL answered from the pods', async () => {
    assert.ok(ws, 'the workspace of step 1');
    assert.equal((await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'kube e2e password' })).status < 300, true);
    const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
    assert.equal(plan.status, 200, plan.text);
    const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
    assert.equal(sync.status, 202, sync.text);
    const synced = await operationFinished(dev, sync.body.id, 300_000);
    assert.equal(synced.state, 'succeeded', JSON.stringify(synced));
    // web waits for its needs (api, and db's initdb in its pod): minutes on a loaded 2-core machine; the last answer
    // says where it stood when it did not get there
    let landscape: any;
    await until(async () => {
      landscape = (await dev.get(`/workspaces/${ws}/landscape`)).body;
      return landscape.dev_url.state === 'served' ? true : undefined;
    }, 'the dev URL to be served', 360_000).catch((error: Error) => {
      const states = (landscape?.services ?? []).map((s: any) => `${s.name}: ${s.status} ${s.detail ?? ''}`).join('; ');
      throw new Error(`${error.message} (dev URL ${JSON.stringify(landscape?.dev_url)}; ${states})`);
    });
    const services = Object.fromEntries((await dev.get(`/workspaces/${ws}/landscape`)).body.services.map((s: any) => [s.name, s]));
    assert.deepEqual(Object.keys(services).sort(), ['api', 'db', 'web']);

    // both replicas answer through the router, each reaching the database and the container service by name
    const seen = new Set<string>();
    await until(async () => {
      const answer = await routed(`w${ws}.${domain()}`, '/');
      if (answer.status !== 200) return undefined;
      if (!answer.text.includes('api on')) throw new Error(`${answer.text} ${JSON.stringify((await dev.get(`/workspaces/${ws}/landscape`)).body.services.find((s: any) => s.name === 'api'))} ${JSON.stringify((await dev.get(`/workspaces/${ws}/landscape/services/api/logs`)).body)}`);
      assert.match(answer.text, new RegExp(`^ws-${ws}-web-[01]: db db answered [NS]; api on ws-${ws}-api-0\\n$`));
      seen.add(answer.text.split(':')[0]);
      return seen.size === 2 ? true : undefined;
    }, 'both replicas of web to answer on the dev URL', 120_000);
  });

  test('3. asleep (no pod left), woken by a request to the dev URL and answered from the pods', async () => {
    assert.ok(ws, 'the workspace of step 1');
    await putToSleep();
    assert.match((await devAnswer()).text, new RegExp(`^ws-${ws}-web-[01]: db db answered [NS]; api on ws-${ws}-api-0\\n$`));
    await workspaceRuns();
  });

  test('3. a replica pod deleted behind svc\'s back is made again', async () => {
    assert.ok(ws, 'the workspace of step 1');
    const namespace = await namespaceOfWs();
    const web0 = async () => (await podLines(namespace)).find((line) => line.startsWith(`ws-${ws}-web-0 `));
    await until(async () => ((await web0())?.endsWith(' Running') ? true : undefined), 'web-0 to run');
    const before = (await web0())!.split(' ')[1];
    await kubectl('-n', namespace, 'delete', 'pod', `ws-${ws}-web-0`, '--wait=false');
    await until(async () => {
      const line = await web0();
      return line && line.split(' ')[1] !== before && line.endsWith(' Running') ? true : undefined;
    }, 'web-0 to run again in a new pod', 180_000);
    await until(async () => {
      const web = (await dev.get(`/workspaces/${ws}/landscape`)).body.services.find((s: any) => s.name === 'web');
      return web?.replicas?.ready === 2 ? true : undefined;
    }, 'both replicas of web to be ready again', 180_000);
  });

  // The node is cordoned only until the reason is read: other files' pods on the shared node wait that long at most.
  test('3. the node cordoned (one node, shared: only until the reason is read): a wake waits for a node and says why', async () => {
    assert.ok(ws, 'the workspace of step 1');
    await putToSleep();
    const node = (await kubectl('get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}')).stdout.trim();
    await kubectl('cordon', node);
    let waiting = '';
    try {
      void routed(`w${ws}.${domain()}`, '/').catch(() => undefined);
      waiting = await until(async () => {
        const detail = (await dev.get(`/workspaces/${ws}`)).body.status_detail as string;
        return /^Waiting for a node: /.test(detail) ? detail : undefined;
      }, 'the wake to wait for a node', 120_000);
    } finally {
      await kubectl('uncordon', node);
    }
    assert.match(waiting, /^Waiting for a node: .*(unschedulable|untolerated taint)/);
    await workspaceRuns();
    await devAnswer();
  });

  test('3. the node drained of the editor pod (the eviction API, as kubectl drain does): the running workspace sleeps, its pod evicted', async () => {
    assert.ok(ws, 'the workspace of step 1');
    await workspaceRuns();
    const node = (await kubectl('get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}')).stdout.trim();
    // only this workspace's editor pod is drained; the node is cordoned by the drain until the eviction is done
    try {
      await kubectl('drain', node, `--pod-selector=${labelKeys.workspace}=${ws},${labelKeys.component}=editor`, '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--timeout=120s');
    } finally {
      await kubectl('uncordon', node);
    }
    const slept = await until(async () => {
      const row = (await dev.get(`/workspaces/${ws}`)).body;
      return row.state === 'sleeping' ? row : undefined;
    }, 'the workspace to sleep after the drain', 120_000);
    assert.equal(slept.status_detail, 'Asleep since its pod was evicted');
    await devAnswer(); // a request wakes it again, on the node that takes pods again
    await workspaceRuns();
  });

  test('4. svc stopped during a Sync and started again on the same database: the durable Sync finishes', async () => {
    assert.ok(ws, 'the workspace of step 1');
    const before = (await dev.get(`/workspaces/${ws}/landscape/plan`)).body.hash;
    const edited = await svc('exec', String(ws), '--', 'sh', '-c', "sed -i 's/replicas: 2/replicas: 3/' svc.yml");
    assert.equal(edited.code, 0, edited.stderr);
    const plan = await until(async () => {
      const answer = await dev.get(`/workspaces/${ws}/landscape/plan`);
      return answer.status === 200 && answer.body.hash !== before ? answer : undefined;
    }, 'a plan with the third replica');
    const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
    assert.equal(sync.status, 202, sync.text);
    const first = server!.server;
    const config = first.config;
    // stopped at once: the third replica's pod takes seconds to start, so the Sync is pending or running here
    const stateAtStop = (await dev.get(`/operations/${sync.body.id}`)).body.state;
    await first.close();
    assert.ok(['pending', 'running'].includes(stateAtStop), `the Sync was ${stateAtStop} when svc stopped`);

    restartedDriver = await openDriver();
    const kube = restartedDriver;
    const again = loadServerConfig(
      ['--listen', '127.0.0.1:0', '--data-dir', config.dataDir, '--rate-limit', '0'],
      { DATABASE_URL: config.databaseUrl, SVC_TOOLS_DIR: path.join(config.dataDir, 'no-tools'), SVC_DATA_PLANE: process.env.SVC_DATA_PLANE, SVC_VOLUME_BACKEND: TEST_VOLUME_BACKEND, SVC_FIRST_TEAM: 'false' },
    );
    restarted = await startServer({ ...again, logLevel: 'silent' }, { clock: server!.clock, logger: false, driver: kube, imageSource: images });
    // the rest of the file speaks to the new server
    server = { ...server!, url: restarted.url, server: restarted };
    dev = new ApiClient(restarted.url, dev.auth);
    const synced = await operationFinished(dev, sync.body.id, 300_000);
    assert.equal(synced.state, 'succeeded', JSON.stringify(synced));
    await until(async () => {
      const web = (await dev.get(`/workspaces/${ws}/landscape`)).body.services.find((s: any) => s.name === 'web');
      return web?.replicas?.ready === 3 ? true : undefined;
    }, 'three replicas of web to be ready', 180_000);
    await devAnswer();
  });

  test('4. delete and purge: no object of the workspace left on the cluster', async () => {
    assert.ok(ws, 'the workspace of step 1');
    const current = await dev.get(`/workspaces/${ws}`);
    const deleted = await dev.delete(`/workspaces/${ws}`, { headers: { 'if-match': current.headers.get('etag')! } });
    assert.equal(deleted.status, 202, deleted.text);
    assert.equal((await operationFinished(dev, deleted.body.id, 300_000)).state, 'succeeded');
    const purged = await dev.post(`/workspaces/${ws}/purge`);
    assert.equal(purged.status, 202, purged.text);
    const purge = await operationFinished(dev, purged.body.id, 300_000);
    assert.equal(purge.state, 'succeeded', JSON.stringify(purge));
    const kinds = 'pods,jobs,statefulsets,services,secrets,persistentvolumeclaims,networkpolicies';
    let left = '';
    await until(async () => {
      left = (await kubectl('get', kinds, '-A', '-l', `${labelKeys.installation}=${installation},${labelKeys.workspace}=${ws}`, '-o', 'name')).stdout.trim();
      return left === '' ? true : undefined;
    }, 'every object of the workspace to be gone', 180_000).catch(() => undefined);
    assert.equal(left, '', 'objects left behind');
  });
}
