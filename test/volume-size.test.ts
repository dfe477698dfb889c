// A volume's size is enforced by the loop backend (docs/runtime.md, "Volume size"): the volume is an ext4 file system
// of `storage_gib` in a sparse image, loop-mounted at the volume's directory. A write past it fails with ENOSPC inside
// the workspace, what was written before stays, the workspace keeps running. The mount comes back after it went (a
// reboot), grows with the size, and goes with the archive and the deletion. Needs root and loop devices.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runCommand } from '../src/runtime/local/processes.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { isMounted, loopUnavailable, mountVolumeImage, volumeImageFile } from '../src/runtime/local/volume-images.ts';
import { volumeDir } from '../src/runtime/local/volumes.ts';
import type { WorkspaceRef } from '../src/runtime/driver.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const skip = (await loopUnavailable(process.getuid?.() === 0)) ?? false;
const GIB = 2 ** 30;

let server: TestServer;
let owner: ApiClient;
let ws: number;
let ref: WorkspaceRef;
let dataDir: string;
let svcEnv: Record<string, string>;
let home: string;

before(async () => {
  if (skip) return;
  server = await startTestServer({ env: { SVC_VOLUME_BACKEND: 'loop' } }); // as an installation sets it
  dataDir = server.server.config.dataDir;
  owner = (await createPerson(server.admin, 'volume-size@example.com')).key;
  const org = (await owner.post('/orgs', { name: 'Volumes' })).body.id;
  const team = (await owner.post('/teams', { org_id: org, name: 'Volumes' })).body.id;
  const created = await owner.post('/workspaces', { team_id: team, name: 'small', storage_gib: 1 });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  const done = await operationFinished(owner, created.body.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done));
  const { uid } = (await server.server.database.pool.query<{ uid: number }>('SELECT uid FROM workspaces WHERE id = $1', [ws])).rows[0];
  ref = { id: ws, uid, storageGib: 1 };
  home = await mkdtemp(path.join(os.tmpdir(), 'svc-volume-size-'));
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: owner.auth.token!, XDG_CONFIG_HOME: home };
});

after(async () => {
  if (skip) return;
  if (ws) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

const inWorkspace = (script: string) => runSvc(['exec', String(ws), '--', 'sh', '-c', script], svcEnv);

test('a write past the volume size fails with ENOSPC in the workspace; the files before it stay and the workspace keeps running', { skip }, async () => {
  const shown = (await owner.get(`/workspaces/${ws}`)).body;
  assert.equal(shown.disk_usage.enforced, true);
  assert.equal(shown.disk_usage.limit_bytes, GIB);
  assert.equal(await isMounted(volumeDir({ dataDir, asRoot: true }, ws)), true);
  // the image is sparse: the host's disk holds what was written, not the volume's size
  assert.ok((await stat(volumeImageFile({ dataDir }, ws))).blocks * 512 < GIB / 4);

  const kept = await inWorkspace('head -c 32M /dev/urandom > kept && sha256sum kept');
  assert.equal(kept.code, 0, kept.stderr);
  // most of the volume taken at once (fallocate writes nothing), then the write that goes past its end: 900 + 200 MiB
  const full = await inWorkspace('fallocate -l 900M taken && head -c 200M /dev/zero > big');
  assert.notEqual(full.code, 0);
  assert.match(full.stderr, /No space left on device/);
  const after = await inWorkspace('sha256sum kept; rm taken big; echo written > after && cat after');
  assert.equal(after.code, 0, after.stderr);
  assert.equal(after.stdout, `${kept.stdout}written\n`);
  assert.equal((await owner.get(`/workspaces/${ws}`)).body.state, 'running');
});

test('a volume whose mount went (a reboot) is mounted again by the next driver with its files; a larger size grows it at its mount', { skip }, async () => {
  const dir = volumeDir({ dataDir, asRoot: true }, ws);
  const write = await inWorkspace('echo survives > reboot');
  assert.equal(write.code, 0, write.stderr);
  const unmount = await runCommand('umount', [dir]); // the pod keeps its own view; the host's is what a reboot loses
  assert.equal(unmount.code, 0, unmount.stderr);
  assert.equal(await isMounted(dir), false);

  const next = createLocalDriver({ dataDir, volumeBackend: 'loop' });
  await next.createVolume(ref); // idempotent: waits for the remount at the driver's start
  assert.equal(await isMounted(dir), true);
  assert.equal(await readFile(path.join(dir, 'app', 'reboot'), 'utf8'), 'survives\n');

  // a larger size, while no pod holds the volume: grown before it is mounted (online growth of a mounted one needs
  // CAP_SYS_RESOURCE, which a container may lack; then it waits for the volume's next mount)
  await server.server.driver.stopWorkspace(ref);
  assert.equal((await runCommand('umount', [dir])).code, 0);
  await mountVolumeImage({ dataDir }, ws, dir, 2);
  assert.equal(await isMounted(dir), true);
  const df = await runCommand('df', ['--output=size', '--block-size=1', dir]);
  const size = Number(df.stdout.trim().split('\n')[1]);
  assert.ok(size > 1.5 * GIB && size <= 2 * GIB, `the volume holds ${size} bytes after growing to 2 GiB`);
  assert.equal(await readFile(path.join(dir, 'app', 'reboot'), 'utf8'), 'survives\n');
});

test('archiving unmounts the volume and removes its image; restoring mounts a new one with the files; deleting removes it', { skip }, async () => {
  const driver = server.server.driver;
  const dir = volumeDir({ dataDir, asRoot: true }, ws);
  const archive = path.join(dataDir, 'archives', `${ws}.tar.gz`);
  await driver.archiveVolume(ref, archive);
  assert.equal(await isMounted(dir), false);
  await assert.rejects(stat(volumeImageFile({ dataDir }, ws)), { code: 'ENOENT' });
  await assert.rejects(stat(dir), { code: 'ENOENT' });

  await driver.restoreVolume(ref, archive);
  assert.equal(await isMounted(dir), true);
  assert.equal(await readFile(path.join(dir, 'app', 'reboot'), 'utf8'), 'survives\n');
  const { uid } = await stat(dir);
  assert.equal(uid, ref.uid);

  await driver.deleteVolume(ref);
  assert.equal(await isMounted(dir), false);
  await assert.rejects(stat(volumeImageFile({ dataDir }, ws)), { code: 'ENOENT' });
  await assert.rejects(stat(dir), { code: 'ENOENT' });
});
