// Container images pulled by the server itself (its image store in the data directory) from a real registry
// (Debian's docker-registry on loopback, images built offline: test/helpers/oci.ts), pinned at Sync: Plan shows
// `image -> digest`; a container web server routed at `/` and a `steps` service that needs it; a tag moved after
// Sync changes nothing that runs until the next Sync, which restarts the service on the new digest; an unknown tag
// and a private image without credentials fail the Sync with image-unavailable and change nothing; the team's
// credentials pull it; two workspaces syncing the same new image at once fetch each layer once; garbage
// collection keeps what landscapes pin; an unreachable registry fails the Sync too; images from the registry whose
// entrypoint is missing (127), not executable (126), that exit 0, crash, or expect a fixed user (rule 6), with
// needs and replicas between containers and a steps service on an image; a base_image from the private registry.
import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { RESOLVE_CACHE_MS } from '../src/images/index.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { EventStream } from './helpers/events.ts';
import { pushImage, startRegistry, type TestRegistry } from './helpers/oci.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces, stoppedWorkspace } from './helpers/workspaces.ts';

const busybox = { 'bin/busybox': { busybox: true as const }, 'bin/sh': { symlink: 'busybox' }, 'bin/httpd': { symlink: 'busybox' }, 'bin/sleep': { symlink: 'busybox' } };
const httpd = { entrypoint: ['/bin/httpd'], cmd: ['-f', '-p', '8080', '-h', '/www'] };
const credentials = { username: 'puller', password: 'pull-secret' };

let registry: TestRegistry;
let privateRegistry: TestRegistry;
let server: TestServer;
let driver: RuntimeDriver;
let owner: ApiClient;
let ownerId: number;
let team: number;
let repository: BareRepository;
let ws: number;
let web1: string;
/** host:port of a registry listed as insecure that nothing listens on. */
let closedRegistry: string;
let baseWs: number | undefined;

const svcYml = (image: string) => `schema: svc/v1
services:
  web:
    type: container
    image: ${image}
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080, mode: http-2xx }
  client:
    type: steps
    needs: [web]
    steps:
      - run: node ask.js
      - run: exec sleep 600
`;
const askJs = `fetch('http://web:8080/').then((r) => r.text()).then((t) => console.log('client saw ' + t.trim()), (e) => { console.error(String(e.cause ?? e)); process.exit(1); });\n`;

before(async () => {
  registry = await startRegistry();
  privateRegistry = await startRegistry({ basicAuth: credentials });
  web1 = await pushImage(registry, 'test/web:1', { layers: [busybox, { 'www/index.html': 'version 1\n' }], ...httpd });
  await pushImage(privateRegistry, 'team/secret:1', { layers: [busybox], cmd: ['/bin/sh', '-c', 'echo private image; exec sleep 600'], credentials });
  closedRegistry = `127.0.0.1:${await freeLoopbackPort()}`;
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_INSECURE_REGISTRIES: `${registry.host},${privateRegistry.host},${closedRegistry}` },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, replicaTimings: { backoffBaseMs: 10, backoffMaxMs: 40, probeIntervalMs: 100 } })),
  });
  const person = await createPerson(server.admin, 'images@example.com');
  owner = person.key;
  ownerId = person.id;
  const org = (await owner.post('/orgs', { name: 'Images' })).body.id;
  team = (await owner.post('/teams', { org_id: org, name: 'Images' })).body.id;
  const privateYml = `schema: svc/v1\nservices:\n  secret:\n    type: container\n    image: ${privateRegistry.host}/team/secret:1\n`;
  repository = await createBareRepository({ 'svc.yml': svcYml(`${registry.host}/test/web:1`), 'svc.private.yml': privateYml, 'ask.js': askJs });
  const created = await owner.post('/workspaces', { team_id: team, name: 'pulled', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(owner, created.body.id)).state, 'succeeded');
});

after(async () => {
  await removeWorkspaces(driver, [ws, baseWs]);
  await server?.close();
  await repository?.remove();
  await registry?.close();
  await privateRegistry?.close();
});

const landscapeOf = async (id = ws) => (await owner.get(`/workspaces/${id}/landscape`)).body;
const serviceOf = async (name: string) => (await landscapeOf()).services.find((s: { name: string }) => s.name === name);
const linesOf = async (service: string, stream: string) =>
  (await owner.get(`/workspaces/${ws}/landscape/services/${service}/logs`)).body.lines.filter((l: { stream: string }) => l.stream === stream).map((l: { text: string }) => l.text);
const reaches = (name: string, status: string) => until(async () => ((await serviceOf(name))?.status === status ? serviceOf(name) : undefined), `${name} to be ${status}`);
const page = async () => {
  const answer = await rawRequest(Number(new URL(server.url).port), `GET / HTTP/1.1\r\nHost: w${ws}.localhost\r\nSvc-Authorization: Bearer ${owner.auth.token}\r\nConnection: close`);
  return `${answer.status} ${answer.body}`;
};
const planOf = async (id = ws, profile?: string) => {
  const plan = await owner.get(`/workspaces/${id}/landscape/plan${profile ? `?profile=${profile}` : ''}`);
  assert.equal(plan.status, 200, plan.text);
  return plan.body;
};
async function sync(id = ws, profile?: string) {
  const plan = await planOf(id, profile);
  const started = await owner.post(`/workspaces/${id}/landscape/sync`, { plan_hash: plan.hash, ...(profile ? { profile } : {}) });
  assert.equal(started.status, 202, started.text);
  return { plan, operation: await operationFinished(owner, started.body.id) };
}
const deployedRow = async (id = ws) => (await server.server.database.pool.query('SELECT hash, synced_at, images FROM landscapes WHERE workspace_id = $1', [id])).rows[0];
const volumeFile = (name: string) => path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', name);

test('Plan shows image -> digest; Sync pulls it, the container web server is served at / and the steps service that needs it reaches it', async () => {
  const { plan, operation } = await sync();
  assert.deepEqual(plan.images, [{ service: 'web', image: `${registry.host}/test/web:1`, digest: web1 }]);
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation.error));
  const web = await reaches('web', 'running');
  assert.deepEqual(web.image, { reference: `${registry.host}/test/web:1`, digest: web1 });
  assert.equal((await reaches('client', 'internal')).type, 'steps');
  await until(async () => ((await linesOf('client', 'stdout')).length > 0 ? true : undefined), 'the client to print');
  assert.deepEqual(await linesOf('client', 'stdout'), ['client saw version 1']);
  assert.ok((await linesOf('web', 'system')).includes(`Starting /bin/httpd -f -p 8080 -h /www (image ${registry.host}/test/web:1, ${web1})`));
  assert.equal(await page(), '200 version 1\n');
  const rootfs = path.join(server.server.config.dataDir, 'images', 'images', 'sha256', web1.slice(7), 'rootfs');
  assert.equal(await readFile(path.join(rootfs, 'www/index.html'), 'utf8'), 'version 1\n');
  assert.equal((await stat(server.server.config.dataDir)).mode & 0o011, 0o011, 'pods pass through the data directory to the image store');
});

test('a tag moved after Sync changes nothing that runs, even across a restart, until the next Sync, which restarts on the new digest', async () => {
  const web2 = await pushImage(registry, 'test/web:1', { layers: [busybox, { 'www/index.html': 'version 2\n' }], ...httpd });
  assert.notEqual(web2, web1);
  assert.equal(await page(), '200 version 1\n');
  assert.equal((await owner.post(`/workspaces/${ws}/landscape/services/web/stop`)).status, 200);
  assert.equal((await owner.post(`/workspaces/${ws}/landscape/services/web/start`)).status, 200);
  await reaches('web', 'running');
  assert.equal(await page(), '200 version 1\n', 'a restart runs the pinned digest, not what the tag names now');
  assert.deepEqual((await planOf()).images, [{ service: 'web', image: `${registry.host}/test/web:1`, digest: web1, deployed_digest: web1 }], 'Plan answers are reused briefly');

  server.clock.advance(RESOLVE_CACHE_MS);
  const plan = await planOf();
  assert.deepEqual(plan.images, [{ service: 'web', image: `${registry.host}/test/web:1`, digest: web2, deployed_digest: web1 }]);
  assert.equal(plan.changed, true);
  assert.deepEqual(plan.services, [
    { name: 'web', action: 'change', type: 'container', changes: ['/services/web/image'], environment: [], restarts: true, reason: `the image ${registry.host}/test/web:1 names ${web2.slice(0, 19)} now; ${web1.slice(0, 19)} runs` },
  ]);
  assert.deepEqual(plan.unchanged, ['client']);
  const { operation } = await sync();
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation.error));
  await until(async () => ((await page()) === '200 version 2\n' ? true : undefined), 'the new digest to be served');
  assert.deepEqual((await reaches('web', 'running')).image, { reference: `${registry.host}/test/web:1`, digest: web2 });
  assert.ok((await linesOf('web', 'system')).includes(`Starting /bin/httpd -f -p 8080 -h /www (image ${registry.host}/test/web:1, ${web2})`));

  const collected = await server.server.collectImages!({ graceMs: 0 });
  assert.deepEqual(collected.removedImages, [web1], 'the image no landscape pins any more goes');
  assert.equal(await page(), '200 version 2\n');
  assert.ok((await stat(path.join(server.server.config.dataDir, 'images', 'images', 'sha256', web2.slice(7), 'rootfs'))).isDirectory());
});

test('an unknown tag or an unreachable registry fails the Sync with image-unavailable naming the image and the registry answer; nothing changes', async () => {
  const before = { row: await deployedRow(), replicas: await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 }) };
  await writeFile(volumeFile('svc.yml'), svcYml(`${registry.host}/test/web:404`));
  const { plan, operation } = await sync();
  assert.equal(plan.images[0].digest, null);
  assert.equal(plan.images[0].problem.type, 'urn:svc:problem:image-unavailable');
  assert.equal(operation.state, 'failed');
  assert.equal(operation.error.type, 'urn:svc:problem:image-unavailable');
  assert.equal(operation.error.image, `${registry.host}/test/web:404`);
  assert.equal(operation.error.registry, registry.host);
  assert.equal(operation.error.reason, 'unknown');
  assert.equal(operation.error.registry_answer.status, 404);
  assert.equal(operation.error.registry_answer.code, 'MANIFEST_UNKNOWN');
  assert.match(operation.error.detail, /test\/web:404: the registry has no image test\/web:404 \(the registry answered 404 MANIFEST_UNKNOWN/);
  assert.deepEqual(await deployedRow(), before.row);
  assert.deepEqual(await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 }), before.replicas);
  assert.equal(await page(), '200 version 2\n');

  await writeFile(volumeFile('svc.yml'), svcYml(`${closedRegistry}/test/web:1`));
  const unreachable = await sync();
  assert.equal(unreachable.plan.images[0].problem.reason, 'unreachable');
  assert.equal(unreachable.operation.state, 'failed');
  assert.equal(unreachable.operation.error.type, 'urn:svc:problem:image-unavailable');
  assert.equal(unreachable.operation.error.image, `${closedRegistry}/test/web:1`);
  assert.equal(unreachable.operation.error.registry, closedRegistry);
  assert.equal(unreachable.operation.error.reason, 'unreachable');
  assert.equal(unreachable.operation.error.detail, `${closedRegistry}/test/web:1: the registry ${closedRegistry} cannot be reached over HTTP: ECONNREFUSED connect ECONNREFUSED ${closedRegistry}`);
  assert.deepEqual(await deployedRow(), before.row);

  // the same registry under a name the operator did not list (SVC_INSECURE_REGISTRIES) is asked over HTTPS only
  const unlisted = `localhost:${registry.host.split(':')[1]}`;
  await writeFile(volumeFile('svc.yml'), svcYml(`${unlisted}/test/web:1`));
  const overHttps = await sync();
  assert.equal(overHttps.operation.state, 'failed');
  assert.deepEqual([overHttps.operation.error.registry, overHttps.operation.error.reason], [unlisted, 'unreachable']);
  assert.match(overHttps.operation.error.detail, /cannot be reached over HTTPS: ERR_SSL_WRONG_VERSION_NUMBER wrong version number; svc speaks plain HTTP only to registries an operator lists in --insecure-registries$/);
  assert.deepEqual(await deployedRow(), before.row);
  assert.deepEqual(await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 }), before.replicas);
  assert.equal(await page(), '200 version 2\n');
  await writeFile(volumeFile('svc.yml'), svcYml(`${registry.host}/test/web:1`));
});

test("a private image is refused without credentials (nothing changes) and pulled with the team's credentials for its registry", async () => {
  const before = await deployedRow();
  const refused = await sync(ws, 'private');
  assert.equal(refused.plan.images[0].problem.reason, 'unauthorized');
  assert.equal(refused.operation.state, 'failed');
  assert.equal(refused.operation.error.type, 'urn:svc:problem:image-unavailable');
  assert.equal(refused.operation.error.reason, 'unauthorized');
  assert.equal(refused.operation.error.registry_answer.status, 401);
  assert.deepEqual(await deployedRow(), before);

  const added = await owner.post(`/teams/${team}/registry-credentials`, { registry: privateRegistry.host, ...credentials });
  assert.equal(added.status, 201, added.text);
  const { plan, operation } = await sync(ws, 'private');
  assert.match(plan.images[0].digest, /^sha256:[a-f0-9]{64}$/);
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation.error));
  await reaches('secret', 'internal');
  await until(async () => ((await linesOf('secret', 'stdout')).length > 0 ? true : undefined), 'the private image to print');
  assert.deepEqual(await linesOf('secret', 'stdout'), ['private image']);
});

test('two workspaces syncing the same new image at once each get it, and each layer is fetched from the registry once', async () => {
  const digest = await pushImage(registry, 'test/shared:1', { layers: [{ ...busybox, 'etc/shared': 'one\n' }, { 'www/index.html': 'shared\n' }], ...httpd });
  const manifest = await (await fetch(`http://${registry.host}/v2/test/shared/manifests/${digest}`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } })).json();
  const layers: string[] = manifest.layers.map((l: { digest: string }) => l.digest);
  assert.equal(layers.length, 2);
  const yml = `schema: svc/v1\nservices:\n  box:\n    type: container\n    image: ${registry.host}/test/shared:1\n`;
  const ids: number[] = [];
  for (const name of ['one', 'two']) {
    const made = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: ownerId, name });
    await writeFile(path.join(made.volume, 'svc.yml'), yml);
    ids.push(made.id);
  }
  const plans = await Promise.all(ids.map((id) => planOf(id)));
  const started = await Promise.all(ids.map((id, i) => owner.post(`/workspaces/${id}/landscape/sync`, { plan_hash: plans[i].hash })));
  const operations = await Promise.all(started.map((answer) => operationFinished(owner, answer.body.id)));
  assert.deepEqual(operations.map((o) => o.state), ['succeeded', 'succeeded'], JSON.stringify(operations.map((o) => o.error)));
  for (const id of ids) assert.deepEqual((await deployedRow(id)).images.box.digest, digest);
  for (const layer of layers) assert.equal(await registry.blobGets(layer), 1, `layer ${layer} fetched once`);
});

test('a Plan of a new image by a caller who may Sync starts its pull: the store has it before any Sync, nothing runs or is pinned; the Sync uses it and fetches nothing again', async () => {
  const digest = await pushImage(registry, 'test/early:1', { layers: [{ ...busybox, 'etc/early': 'early\n' }, { 'www/index.html': 'early\n' }], ...httpd });
  const manifest = await (await fetch(`http://${registry.host}/v2/test/early/manifests/${digest}`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } })).json();
  const blobs: string[] = [manifest.config.digest, ...manifest.layers.map((l: { digest: string }) => l.digest)];
  const made = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: ownerId, name: 'early' });
  await writeFile(path.join(made.volume, 'svc.yml'), `schema: svc/v1\nservices:\n  box:\n    type: container\n    image: ${registry.host}/test/early:1\n`);
  const plan = await planOf(made.id);
  assert.deepEqual(plan.images, [{ service: 'box', image: `${registry.host}/test/early:1`, digest }]);
  const record = path.join(server.server.config.dataDir, 'images', 'images', 'sha256', digest.slice(7), 'image.json');
  await until(async () => (await stat(record).then(() => true, () => undefined)), 'the image pulled after the Plan alone');
  assert.equal(await deployedRow(made.id), undefined, 'nothing is deployed or pinned by a Plan');
  assert.deepEqual(await driver.replicaStates({ id: made.id, uid: 0, storageGib: 0 }), [], 'nothing runs');

  const started = await owner.post(`/workspaces/${made.id}/landscape/sync`, { plan_hash: plan.hash });
  assert.equal((await operationFinished(owner, started.body.id)).state, 'succeeded');
  assert.equal((await deployedRow(made.id)).images.box.digest, digest);
  for (const blob of blobs) assert.equal(await registry.blobGets(blob), 1, `blob ${blob} fetched once`);
  assert.equal(await registry.manifestGets('test/early', '1'), 1, 'the tag resolved once (Plan answers are reused briefly)');
  assert.equal(await registry.manifestGets('test/early', digest), 1, 'the manifest by digest: only the test asked for it; the pull used the one the Plan fetched');
  await removeWorkspaces(driver, [made.id]);
});

test('images from the registry: a missing entrypoint exits 127, one not executable 126, exit 0 finishes, a crash gives up (and who needs it stops waiting); needs between containers, replicas, a steps service on an image; a fixed user gets the note', async () => {
  const tools = { ...busybox, 'bin/mkdir': { symlink: 'busybox' }, 'bin/id': { symlink: 'busybox' }, 'bin/wget': { symlink: 'busybox' } };
  const files = { 'opt/ok.sh': { content: '#!/bin/sh\necho "ok as $(id -u):$(id -g)"\n', mode: 0o755 }, 'opt/plain.sh': { content: '#!/bin/sh\necho never\n', mode: 0o644 } };
  await pushImage(registry, 'test/exits:1', { layers: [tools, files], cmd: ['/opt/ok.sh'] });
  await pushImage(registry, 'test/fixed:1', { layers: [tools], user: 'nginx', entrypoint: ['/bin/mkdir'], cmd: ['-p', '/var/cache/app'] });
  const image = `${registry.host}/test/exits:1`;
  const yml = `schema: svc/v1
services:
  missing: { type: container, image: ${image}, command: [/bin/no-such-server] }
  plain: { type: container, image: ${image}, args: [/opt/plain.sh] }
  once: { type: container, image: ${image} }
  crash: { type: container, image: ${image}, command: [/bin/sh, -c, 'echo crashing; exit 3'], ports: [{ port: 9000 }] }
  fixed: { type: container, image: ${registry.host}/test/fixed:1 }
  patient: { type: container, image: ${image}, needs: [crash], command: [/bin/sh, -c, 'echo started anyway; exec sleep 600'] }
  server: { type: container, image: ${registry.host}/test/web:1, replicas: 2, ports: [{ port: 8080 }] }
  stepper: { type: steps, image: ${image}, steps: [{ run: 'echo "steps in $(ls /opt | tr "\\n" " ")as $(id -u)"' }] }
  caller: { type: container, image: ${image}, needs: [server], command: [/bin/sh, -c, 'wget -qO- http://server:8080/; exec sleep 600'] }
`;
  await writeFile(volumeFile('svc.exits.yml'), yml);
  const events = await EventStream.open(owner);
  const { operation } = await sync(ws, 'exits');
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation.error));
  const uid = (await server.server.database.pool.query<{ uid: number }>('SELECT uid FROM workspaces WHERE id = $1', [ws])).rows[0].uid;

  assert.equal((await reaches('once', 'finished')).detail, 'The server exited with code 0: the service finished');
  assert.deepEqual(await linesOf('once', 'stdout'), [`ok as ${uid}:0`]);
  assert.equal((await reaches('missing', 'failure')).detail, 'Giving up: exited with 127; 5 failures in 2m0s');
  assert.ok((await linesOf('missing', 'system')).includes('Exit code 127: the command is missing from the image'));
  assert.equal((await reaches('plain', 'failure')).detail, 'Giving up: exited with 126; 5 failures in 2m0s');
  assert.ok((await linesOf('plain', 'system')).includes('Exit code 126: the file is not executable for the workspace user (its UID, group 0)'));
  assert.equal((await reaches('crash', 'failure')).detail, 'Giving up: exited with 3; 5 failures in 2m0s');
  const crash = await linesOf('crash', 'system');
  assert.equal(crash.filter((t: string) => /^Server exited with code 3; restarting in \d+ms$/.test(t)).length, 4);
  assert.equal(crash.at(-1), 'Giving up: exited with 3; 5 failures in 2m0s');
  assert.equal((await linesOf('crash', 'stdout')).length, 5);
  // the Sync, then the statuses as they changed (the crash giving up, at least), as for steps services
  await events.until('landscape.updated', (d) => d.workspace_id === ws);
  await events.until('landscape.updated', (d) => d.workspace_id === ws);
  events.close();

  await reaches('patient', 'internal');
  assert.deepEqual((await linesOf('patient', 'system')).filter((t: string) => /crash/.test(t)), ['Waiting for crash (up to 5m0s)', 'Not waiting any more for crash because the needed service is failing']);
  assert.deepEqual(await linesOf('patient', 'stdout'), ['started anyway']);
  assert.deepEqual((await reaches('server', 'internal')).replicas, { ready: 2, desired: 2 });
  await reaches('caller', 'internal');
  assert.deepEqual((await linesOf('caller', 'system')).filter((t: string) => /server\b/.test(t) && !t.startsWith('Starting /bin/sh')), ['Waiting for server (up to 5m0s)', 'server answered, starting']);
  await until(async () => ((await linesOf('caller', 'stdout')).length > 0 ? true : undefined), 'the caller to print');
  assert.deepEqual(await linesOf('caller', 'stdout'), ['version 2'], 'a container reaches another by name once it answers');

  await reaches('stepper', 'finished');
  assert.deepEqual(await linesOf('stepper', 'stdout'), [`steps in ok.sh plain.sh as ${uid}`], "a steps service's image from the registry is its root");
  assert.ok((await linesOf('stepper', 'system')).some((t: string) => t.startsWith(`Running the steps in image ${image} (sha256:`)));

  await reaches('fixed', 'failure');
  const note = `The image expects to run as user nginx; here it runs as UID ${uid} with group 0 and its files are read-only: what it writes must be ` +
    'in /tmp, /run, /var/tmp or a mount, and writable by group 0 (or a cluster administrator allows the team runAsUser)';
  assert.ok((await linesOf('fixed', 'system')).includes(note), (await linesOf('fixed', 'system')).join('\n'));
  assert.match((await linesOf('fixed', 'stderr'))[0], /mkdir: can't create directory '\/var\/': Read-only file system/, 'the image has no /var: the read-only root refuses it');
});

test("a workspace's base_image from the team's private registry: pulled with its credentials, pinned, the editor pod's root", async () => {
  const image = `${privateRegistry.host}/team/secret:1`;
  const created = await owner.post('/workspaces', { team_id: team, name: 'based', storage_gib: 1, base_image: image });
  assert.equal(created.status, 202, created.text);
  baseWs = Number(created.body.target.split('/')[2]);
  const started = await operationFinished(owner, created.body.id);
  assert.equal(started.state, 'succeeded', JSON.stringify(started.error));
  const pin = (await server.server.database.pool.query('SELECT base_image_pin FROM workspaces WHERE id = $1', [baseWs])).rows[0].base_image_pin;
  assert.equal(pin.image, image);
  assert.match(pin.digest, /^sha256:[a-f0-9]{64}$/);
  assert.equal(pin.rootfs, path.join(server.server.config.dataDir, 'images', 'images', 'sha256', pin.digest.slice(7), 'rootfs'));
  const record = JSON.parse(await readFile(path.join(server.server.config.dataDir, 'pods', `${baseWs}.json`), 'utf8')) as { initPid: number };
  assert.deepEqual((await readdir(`/proc/${record.initPid}/root/bin`)).sort(), ['busybox', 'httpd', 'sh', 'sleep'], "the editor pod's root is the image's");
});
