// `container` services running for real through the server: images made in the test from busybox (no registry yet:
// the server gets them from an ImageSource the test injects, test/helpers/images.ts), pinned at Sync and run in
// pods of their own on the workspace's service network. A container web server routed at `/` serving a mount of
// the volume and reached by name from a `steps` service that needs it; exit 0, a crash, a missing and a
// non-executable entrypoint with their statuses and exact messages; runAsUser refused for a team an administrator
// did not allow and honoured once allowed; a Sync refused (501) by an installation without an image source.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { busyboxRootfs, TestImageSource } from './helpers/images.ts';
import { startLandscapeWorkspace, type LandscapeWorkspace } from './helpers/landscape-workspace.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: container
    image: test/web:1
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080, mode: http-2xx }
    mounts:
      - from: site
        to: /www
  client:
    type: steps
    needs: [web]
    steps:
      - run: node ask.js
      - run: exec sleep 600
  once:
    type: container
    image: test/busybox:1
    command: [/bin/sh, -c, 'echo "$GREETING from $(id -u):$(id -g) in $(pwd)"']
    env:
      GREETING: \${{ env.GREETING }}
  crash:
    type: container
    image: test/busybox:1
    command: [/bin/sh, -c, 'echo crashing; exit 3']
  missing:
    type: container
    image: test/busybox:1
    command: [/bin/no-such-server]
  plain:
    type: container
    image: test/busybox:1
    args: [/opt/plain.sh]
`;

/** A profile whose container runs as root: only for teams an administrator allowed. */
const rootedYml = `schema: svc/v1
services:
  rooted:
    type: container
    image: test/busybox:1
    runAsUser: 0
    command: [/bin/sh, -c, 'echo "as $(id -u):$(id -g) $(id -un)"; exec sleep 600']
`;

const askJs = `fetch('http://web:8080/').then((r) => r.text()).then((t) => console.log('client saw ' + t.trim()), (e) => { console.error(String(e.cause ?? e)); process.exit(1); });\n`;

let lw: LandscapeWorkspace;
let server: TestServer;
let bare: TestServer;
let images: TestImageSource;
let scratch: string;
let owner: ApiClient;
let team: number;
let ws: number;
let driver: RuntimeDriver;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-landscape-containers-'));
  await chmod(scratch, 0o755); // the image store is readable by every workspace's UID
  images = new TestImageSource();
  const busybox = await busyboxRootfs(path.join(scratch, 'busybox'), { 'www/index.html': 'from the image\n', 'opt/plain.sh': '#!/bin/sh\necho never\n' });
  images.add('test/web:1', busybox, { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080', '-h', '/www'], WorkingDir: '/www', ExposedPorts: { '8080/tcp': {} } });
  images.add('test/busybox:1', busybox, { Cmd: ['/bin/sh'], Env: ['PATH=/bin', 'GREETING=from the image'], WorkingDir: '/opt', User: 'nobody' });
  lw = await startLandscapeWorkspace({
    team: 'Containers',
    workspace: 'boxes',
    files: { 'svc.yml': svcYml, 'svc.rooted.yml': rootedYml, 'ask.js': askJs, 'site/index.html': 'from the volume\n' },
    imageSource: images,
  });
  ({ server, owner, team, ws, driver } = lw);
  await owner.put(`/workspaces/${ws}/variables/GREETING`, { value: 'hello' });
});

after(async () => {
  await lw?.close();
  await bare?.close();
  await rm(scratch, { recursive: true, force: true });
});

test('Sync pins each image once and starts the container services; the web server is served at / and reached by name', async () => {
  assert.equal((await lw.sync()).state, 'succeeded');
  assert.deepEqual(images.requests.map((r) => [r.image, r.teamId, r.workspaceId]).sort(), [['test/busybox:1', team, ws], ['test/web:1', team, ws]]);
  const web = await lw.reaches('web', 'running');
  assert.deepEqual([web.type, web.replicas], ['container', { ready: 1, desired: 1 }]);
  assert.equal((await lw.reaches('client', 'internal')).detail, 'Running; no routes or public ports: reachable inside the workspace only');
  assert.deepEqual(await lw.linesOf('client', 'stdout'), ['client saw from the volume']);
  assert.deepEqual((await lw.linesOf('client', 'system')).filter((t: string) => /web/.test(t)), ['Waiting for web (up to 5m0s)', 'web answered, starting']);
  const digest = (await images.prepare({ image: 'test/web:1', teamId: team, workspaceId: ws, service: 'web' })).digest;
  assert.ok((await lw.linesOf('web', 'system')).includes(`Starting /bin/httpd -f -p 8080 -h /www (image test/web:1, ${digest})`));
  const shown = (await owner.get(`/workspaces/${ws}/landscape`)).body;
  assert.equal(shown.dev_url.state, 'served');
  const page = await rawRequest(Number(new URL(server.url).port), `GET / HTTP/1.1\r\nHost: w${ws}.localhost\r\nSvc-Authorization: Bearer ${owner.auth.token}\r\nConnection: close`);
  assert.deepEqual([page.status, page.body], [200, 'from the volume\n']);
});

test("a container whose process exits 0 is finished; it ran with the service's env over the image's, as the workspace UID, group 0", async () => {
  const once = await lw.reaches('once', 'finished');
  assert.equal(once.detail, 'The server exited with code 0: the service finished');
  const uid = (await server.server.database.pool.query<{ uid: number }>('SELECT uid FROM workspaces WHERE id = $1', [ws])).rows[0].uid;
  assert.deepEqual(await lw.linesOf('once', 'stdout'), [`hello from ${uid}:0 in /opt`]);
});

test('a crash restarts with backoff and gives up; a missing entrypoint exits 127, a file that is not executable 126: exact messages and notes', async () => {
  assert.equal((await lw.reaches('crash', 'failure')).detail, 'Giving up: exited with 3; 5 failures in 2m0s');
  const crash = await lw.linesOf('crash', 'system');
  assert.equal(crash.filter((t: string) => /^Server exited with code 3; restarting in/.test(t)).length, 4);
  assert.equal(crash.at(-1), 'Giving up: exited with 3; 5 failures in 2m0s');
  assert.equal((await lw.reaches('missing', 'failure')).detail, 'Giving up: exited with 127; 5 failures in 2m0s');
  assert.ok((await lw.linesOf('missing', 'system')).includes('Exit code 127: the command is missing from the image'));
  assert.equal((await lw.reaches('plain', 'failure')).detail, 'Giving up: exited with 126; 5 failures in 2m0s');
  assert.ok((await lw.linesOf('plain', 'system')).includes('Exit code 126: the file is not executable for the workspace user (its UID, group 0)'));
});

test('an image that cannot be made ready fails the Sync with a problem naming it; what runs is unchanged', async () => {
  const before = await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 });
  const yml = svcYml.replace('image: test/web:1', 'image: test/web:2');
  await writeFile(path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', 'svc.yml'), yml);
  const failed = await lw.sync();
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error.type, 'urn:svc:problem:unavailable');
  assert.equal(failed.error.detail, 'The image test/web:2 could not be resolved: no image test/web:2 in the test\'s images');
  assert.equal(failed.error.image, 'test/web:2');
  const web = (await driver.replicaStates({ id: ws, uid: 0, storageGib: 0 })).find((r) => r.service === 'web');
  assert.deepEqual(web, before.find((r) => r.service === 'web'));
  assert.equal((await lw.serviceOf('web')).status, 'running');
  await writeFile(path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', 'svc.yml'), svcYml);
});

test('runAsUser is refused at Plan and Sync for a team an administrator has not allowed; once allowed it runs as that user', async () => {
  assert.deepEqual((await owner.get(`/teams/${team}/container-settings`)).body, { run_as_user_allowed: false });
  const plan = await owner.get(`/workspaces/${ws}/landscape/plan?profile=rooted`);
  assertProblem(plan, 403, 'run-as-user-not-allowed');
  assert.deepEqual(plan.body.services, ['rooted']);
  assert.deepEqual(plan.body.errors, [{ pointer: '/services/rooted/runAsUser', message: 'is not allowed for this team; a cluster administrator can allow it', line: 6, column: 16 }]);
  assertProblem(await owner.post(`/workspaces/${ws}/landscape/sync`, { profile: 'rooted', plan_hash: '0'.repeat(64) }), 403, 'run-as-user-not-allowed');
  assertProblem(await owner.put(`/teams/${team}/container-settings`, { run_as_user_allowed: true }), 403, 'forbidden');
  const allowed = await server.admin.put(`/teams/${team}/container-settings`, { run_as_user_allowed: true });
  assert.equal(allowed.status, 200, allowed.text);
  assert.deepEqual(allowed.body, { run_as_user_allowed: true });
  assert.equal((await lw.sync('rooted')).state, 'succeeded');
  await lw.reaches('rooted', 'internal');
  await until(async () => ((await lw.linesOf('rooted', 'stdout')).length > 0 ? true : undefined), 'rooted to print');
  assert.deepEqual(await lw.linesOf('rooted', 'stdout'), ['as 0:0 root']);
});

test('an installation without an image source refuses a Sync of container services with 501; Plan still works', async () => {
  bare = await startTestServer({ imageSource: false });
  const person = await createPerson(bare.admin, 'no-images@example.com');
  const org = (await person.key.post('/orgs', { name: 'No images' })).body.id;
  const otherTeam = (await person.key.post('/teams', { org_id: org, name: 'No images' })).body.id;
  const stopped = await stoppedWorkspace(bare.server.database.pool, bare.server.config.dataDir, { teamId: otherTeam, createdBy: person.id, name: 'plain' });
  await writeFile(path.join(stopped.volume, 'svc.yml'), svcYml.replace('${{ env.GREETING }}', 'hi'));
  const plan = await person.key.get(`/workspaces/${stopped.id}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const refused = await person.key.post(`/workspaces/${stopped.id}/landscape/sync`, { plan_hash: plan.body.hash });
  assertProblem(refused, 501, 'not-available');
  assert.equal(refused.body.detail, 'This installation cannot fetch container images yet, so the landscape cannot be synced: web (test/web:1), once (test/busybox:1), crash (test/busybox:1), missing (test/busybox:1), plain (test/busybox:1). Use steps services instead.');
  assert.deepEqual(refused.body.container_services, ['web', 'once', 'crash', 'missing', 'plain']);
});
