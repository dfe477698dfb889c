// Images for `steps` services and workspaces through the server (issue 15, item 5): a workspace created with a
// `base_image` runs its editor pod on the image's root with the volume at /data/app, the digest pinned at its first
// start and kept when the tag moves; a steps service's `image` is pinned at Sync like a container's and its steps see
// the image's files and reach another service by name; `nixWritable` gives a writable /nix. Images are made in the
// test from busybox and handed to the server by an ImageSource the test injects (test/helpers/images.ts).
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { busyboxRootfs, TestImageSource } from './helpers/images.ts';
import { startLandscapeWorkspace, type LandscapeWorkspace } from './helpers/landscape-workspace.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports: [{ port: 8080 }]
  asker:
    type: steps
    image: test/steps:1
    needs: [web]
    env:
      MINE: service
    steps:
      - run: cat /etc/os-release; echo "home=$HOME from=$FROM_IMAGE mine=$MINE"; wget -qO- http://web:8080/
      - run: exec sleep 600
  writer:
    type: steps
    image: test/steps:1
    nixWritable: true
    steps:
      - run: touch /nix/from-writer && echo "/nix writable"
`;

const webJs = `require('node:http').createServer((req, res) => res.end('from web\\n')).listen(8080, '0.0.0.0');\n`;

let lw: LandscapeWorkspace;
let server: TestServer;
let bare: TestServer | undefined;
let images: TestImageSource;
let scratch: string;
let owner: ApiClient;
let team: number;
let ws: number;
let failedWs: number | undefined;
let driver: RuntimeDriver;
let stepsRootfs: string;
let baseRootfs: string;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-step-images-'));
  await chmod(scratch, 0o755); // the image store is readable by every workspace's UID
  images = new TestImageSource();
  stepsRootfs = await busyboxRootfs(path.join(scratch, 'steps'), { 'etc/os-release': 'NAME="steps image"\n' });
  baseRootfs = await busyboxRootfs(path.join(scratch, 'base'), { 'etc/os-release': 'NAME="base image"\n' });
  images.add('test/steps:1', stepsRootfs, { Env: ['PATH=/bin', 'FROM_IMAGE=steps'] }, `sha256:${'1'.repeat(64)}`);
  images.add('test/base:1', baseRootfs, { Env: ['PATH=/bin'] }, `sha256:${'2'.repeat(64)}`);
  lw = await startLandscapeWorkspace({ team: 'Step images', workspace: 'imaged', files: { 'svc.yml': svcYml, 'web.js': webJs }, create: { base_image: 'test/base:1' }, imageSource: images });
  ({ server, owner, team, ws, driver } = lw);
});

after(async () => {
  await lw?.close([failedWs]);
  await bare?.close();
  await rm(scratch, { recursive: true, force: true });
});

const pinsOf = async () => (await server.server.database.pool.query<{ images: Record<string, { digest: string }> }>('SELECT images FROM landscapes WHERE workspace_id = $1', [ws])).rows[0].images;
const basePin = async () => (await server.server.database.pool.query<{ base_image_pin: { image: string; digest: string } | null }>('SELECT base_image_pin FROM workspaces WHERE id = $1', [ws])).rows[0].base_image_pin;

/** The root of the editor pod as the host sees it (its PID 1's). */
async function editorRoot(id: number): Promise<string> {
  const record = JSON.parse(await readFile(path.join(server.server.config.dataDir, 'pods', `${id}.json`), 'utf8')) as { initPid: number };
  return `/proc/${record.initPid}/root`;
}

test("a workspace with a base_image runs its editor pod on the image's root with the volume at /data/app; the digest is pinned", async () => {
  const workspace = (await owner.get(`/workspaces/${ws}`)).body;
  assert.deepEqual([workspace.state, workspace.base_image], ['running', 'test/base:1']);
  assert.deepEqual(images.requests.map((r) => [r.image, r.teamId, r.workspaceId, r.service]), [['test/base:1', team, ws, 'ide']]);
  assert.deepEqual(await basePin(), { image: 'test/base:1', digest: `sha256:${'2'.repeat(64)}`, rootfs: baseRootfs, config: { Env: ['PATH=/bin'] } });
  const root = await editorRoot(ws);
  assert.equal(await readFile(`${root}/etc/os-release`, 'utf8'), 'NAME="base image"\n');
  assert.equal(await readFile(`${root}/data/app/svc.yml`, 'utf8'), svcYml);
});

test("Sync pins the steps services' image once; their steps see the image's files, reach web by name, and /nix is writable with nixWritable", async () => {
  assert.equal((await lw.sync()).state, 'succeeded');
  assert.deepEqual(images.requests.slice(1).map((r) => [r.image, r.service]), [['test/steps:1', 'asker']]);
  const pins = await pinsOf();
  assert.deepEqual(Object.keys(pins).sort(), ['asker', 'writer']);
  assert.equal(pins.asker.digest, `sha256:${'1'.repeat(64)}`);
  await lw.reaches('asker', 'internal');
  await until(async () => ((await lw.linesOf('asker', 'stdout')).length === 3 ? true : undefined), 'asker to print');
  assert.deepEqual(await lw.linesOf('asker', 'stdout'), ['NAME="steps image"', 'home=/data/home from=steps mine=service', 'from web']);
  assert.ok((await lw.linesOf('asker', 'system')).includes(`Running the steps in image test/steps:1 (sha256:${'1'.repeat(64)}) with /bin/sh`));
  await lw.reaches('writer', 'finished');
  assert.deepEqual(await lw.linesOf('writer', 'stdout'), ['/nix writable']);
});

test("svc exec runs in the image's root with its shell: in the editor pod on the base image, in a steps replica on its image", async () => {
  const env = { SVC_URL: server.url, SVC_TOKEN: owner.auth.token!, XDG_CONFIG_HOME: scratch };
  const editor = await runSvc(['exec', String(ws), '--', 'sh', '-c', 'cat /etc/os-release; pwd; test -e /usr || echo "no /usr of the host"'], env);
  assert.deepEqual([editor.code, editor.stdout], [0, 'NAME="base image"\n/data/app\nno /usr of the host\n'], editor.stderr);
  const replica = await runSvc(['exec', String(ws), '--service', 'asker', '--', 'sh', '-c', 'cat /etc/os-release; echo "$MINE"'], env);
  assert.deepEqual([replica.code, replica.stdout], [0, 'NAME="steps image"\nservice\n'], replica.stderr);
});

test('a moved tag changes nothing until the next Sync, which restarts the service on the new digest; the base image stays pinned across a restart', async () => {
  const moved = `sha256:${'3'.repeat(64)}`;
  images.add('test/steps:1', stepsRootfs, { Env: ['PATH=/bin', 'FROM_IMAGE=moved'] }, moved);
  images.add('test/base:1', stepsRootfs, { Env: ['PATH=/bin'] }, `sha256:${'4'.repeat(64)}`);
  assert.equal((await pinsOf()).asker.digest, `sha256:${'1'.repeat(64)}`);
  assert.equal((await lw.sync()).state, 'succeeded');
  assert.equal((await pinsOf()).asker.digest, moved);
  await until(async () => ((await lw.linesOf('asker', 'stdout')).includes('home=/data/home from=moved mine=service') ? true : undefined), 'asker to restart on the moved tag');
  const stopped = await owner.post(`/workspaces/${ws}/stop`, {});
  assert.equal(stopped.status, 200, stopped.text);
  const started = await owner.post(`/workspaces/${ws}/start`, {});
  assert.equal(started.status, 202, started.text);
  assert.equal((await operationFinished(owner, started.body.id)).state, 'succeeded');
  assert.equal((await basePin())!.digest, `sha256:${'2'.repeat(64)}`);
  assert.equal(await readFile(`${await editorRoot(ws)}/etc/os-release`, 'utf8'), 'NAME="base image"\n');
});

test('a base_image that cannot be made ready leaves the workspace in Error saying why; a bad reference is refused at once', async () => {
  assertProblem(await owner.post('/workspaces', { team_id: team, name: 'badref', base_image: 'Not An Image' }), 422, 'validation');
  const created = await owner.post('/workspaces', { team_id: team, name: 'nope', storage_gib: 1, base_image: 'test/nope:1' });
  assert.equal(created.status, 202, created.text);
  failedWs = Number(created.body.target.split('/')[2]);
  const operation = await operationFinished(owner, created.body.id);
  assert.equal(operation.state, 'failed');
  const workspace = (await owner.get(`/workspaces/${failedWs}`)).body;
  assert.equal(workspace.state, 'error');
  assert.equal(workspace.status_detail, "The IDE does not start: the base image test/nope:1 could not be made ready: no image test/nope:1 in the test's images");
});

test('an installation without an image source refuses a base_image (501) and a Sync of steps services with an image (501)', async () => {
  bare = await startTestServer({ imageSource: false });
  const person = await createPerson(bare.admin, 'no-step-images@example.com');
  const org = (await person.key.post('/orgs', { name: 'No step images' })).body.id;
  const otherTeam = (await person.key.post('/teams', { org_id: org, name: 'No step images' })).body.id;
  const refused = await person.key.post('/workspaces', { team_id: otherTeam, name: 'imaged', base_image: 'test/base:1' });
  assertProblem(refused, 501, 'not-available');
  assert.equal(refused.body.detail, "This installation cannot fetch container images yet, so base_image test/base:1 cannot run. Leave base_image out to use the installation's (debian).");
  const stopped = await stoppedWorkspace(bare.server.database.pool, bare.server.config.dataDir, { teamId: otherTeam, createdBy: person.id, name: 'plain' });
  await writeFile(path.join(stopped.volume, 'svc.yml'), svcYml);
  const plan = await person.key.get(`/workspaces/${stopped.id}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const sync = await person.key.post(`/workspaces/${stopped.id}/landscape/sync`, { plan_hash: plan.body.hash });
  assertProblem(sync, 501, 'not-available');
  assert.equal(sync.body.detail, 'This installation cannot fetch container images yet, so the landscape cannot be synced: asker (test/steps:1), writer (test/steps:1). Use steps services without an image instead.');
  assert.deepEqual([sync.body.container_services, sync.body.image_services], [[], ['asker', 'writer']]);
});
