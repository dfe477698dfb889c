// `steps` replicas and editor pods from images in the local runtime driver, against real bubblewrap and processes:
// a steps service's `image` and a workspace's `base_image` (busybox root filesystems made in the test,
// test/helpers/images.ts) as the pod's root, with the volume at /data/app and the agent bound in; the steps and
// stage steps run by the image's shell; /nix read-only unless `nixWritable`, read-write in the editor pod.
// Workspace ids are random in a block of their own (test/helpers/driver-pods.ts).
import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { PinnedRoot } from '../src/runtime/driver.ts';
import { RuntimeFailure } from '../src/runtime/driver.ts';
import { asRoot, replicaSpec as spec, run, startPodBench, type PodBench } from './helpers/driver-pods.ts';
import { busyboxRootfs } from './helpers/images.ts';
import { until } from './helpers/wait.ts';

const OS_RELEASE = 'PRETTY_NAME="Test Busybox 1"\n';

let pods: PodBench;
let image: PinnedRoot;

before(async () => {
  // ids whose editor /30 (id mod 16384) lies in 10000..11999 and whose uids lie far from other test files'
  pods = await startPodBench({ name: 'runtime-images', editorBlock: 10_000, cycleFrom: 80_000, uidBase: 3_700_000, count: 5 });
  const rootfs = await busyboxRootfs(path.join(pods.scratch, 'images', 'busybox'), { 'etc/os-release': OS_RELEASE, 'www/index.html': 'from the web image\n', 'data/in-image.txt': 'hidden\n' });
  image = { image: 'test/steps:1', digest: 'sha256:5555', rootfs, config: { Env: ['PATH=/bin', 'FROM_IMAGE=image'] } };
});

after(async () => {
  await pods?.close();
});

test("a steps replica from an image: its steps see the image's files through its shell, the volume at /data/app, and reach a service by name", { skip: !asRoot && 'needs root (own network namespaces)' }, async () => {
  const ws = pods.workspace(0);
  await pods.volumeWith(ws, { 'hello.txt': 'from the volume\n' });
  const web = { image: 'test/web:1', digest: 'sha256:6666', rootfs: image.rootfs, config: { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080', '-h', '/www'] } };
  await pods.driver.startReplica(ws, spec('web', { container: web, ports: [8080] }));
  const script = [
    'cat /etc/os-release', 'cat hello.txt', 'echo "pwd=$(pwd) home=$HOME from=$FROM_IMAGE mine=$MINE uid=$(id -u) gid=$(id -g)"',
    'test -e /usr || echo "no /usr of the host"', 'test -e /data/in-image.txt || echo "/data is the pod\'s"',
    'touch /bin/x 2>/dev/null || echo "/bin read-only"', 'touch made-here && echo "volume writable"',
  ].join('; ');
  const root = spec('asker', { root: image, env: { MINE: 'service' }, steps: [{ run: script }, { run: 'wget -qO- http://web:8080/ && exec sleep 600' }], needs: [{ name: 'web', port: 8080 }] });
  await pods.driver.startReplica(ws, root);
  await pods.reaches(ws, 'asker', 'running');
  await until(async () => ((await pods.logTexts(ws, 'asker', 'stdout')).includes('from the web image') ? true : undefined), 'asker reached web');
  assert.deepEqual(await pods.logTexts(ws, 'asker', 'stdout'), [
    OS_RELEASE.trim(), 'from the volume', `pwd=/data/app home=/data/home from=image mine=service uid=${ws.uid} gid=0`,
    'no /usr of the host', "/data is the pod's", '/bin read-only', 'volume writable', 'from the web image',
  ]);
  assert.ok((await pods.logTexts(ws, 'asker', 'system')).includes('Running the steps in image test/steps:1 (sha256:5555) with /bin/sh'));
  assert.ok((await stat(path.join(pods.dataDir, 'volumes', String(ws.id), 'app', 'made-here'))).isFile());
});

test('/nix is the workspace\'s own directory: read-only in steps replicas unless nixWritable, from an image or not', async () => {
  const ws = pods.workspace(1);
  await pods.volumeWith(ws, {});
  const tryWrite = (name: string) => `touch /nix/${name} 2>/dev/null && echo "/nix writable" || echo "/nix read-only"`;
  await pods.driver.startReplica(ws, spec('ro', { root: image, steps: [{ run: tryWrite('ro') }] }));
  await pods.driver.startReplica(ws, spec('rw', { root: image, nixWritable: true, steps: [{ run: tryWrite('rw') }] }));
  await pods.driver.startReplica(ws, spec('host', { steps: [{ run: tryWrite('host') }] }));
  await pods.driver.startReplica(ws, spec('hostrw', { nixWritable: true, steps: [{ run: tryWrite('hostrw') }] }));
  for (const [service, seen] of [['ro', '/nix read-only'], ['rw', '/nix writable'], ['host', '/nix read-only'], ['hostrw', '/nix writable']]) {
    await pods.reaches(ws, service, 'finished');
    assert.deepEqual(await pods.logTexts(ws, service, 'stdout'), [seen], service);
  }
  const nix = path.join(pods.dataDir, 'nix', String(ws.id));
  assert.deepEqual((await run('ls', [nix])).stdout.split('\n').filter(Boolean).sort(), ['hostrw', 'rw']);
  if (asRoot) assert.equal((await stat(nix)).uid, ws.uid);
});

test('what cannot start is refused: an image without a shell, nixWritable over an image\'s own /nix, a mount over /nix or the volume', async () => {
  const ws = pods.workspace(2);
  await pods.volumeWith(ws, {});
  const bare = path.join(pods.scratch, 'images', 'bare');
  await mkdir(path.join(bare, 'etc'), { recursive: true });
  await writeFile(path.join(bare, 'etc', 'os-release'), OS_RELEASE);
  await run('chmod', ['-R', 'a+rX', bare]);
  await pods.refused(ws, spec('bare', { root: { ...image, image: 'test/bare:1', rootfs: bare }, steps: [{ run: 'true' }] }), /^the image test\/bare:1 has no shell \(\/bin\/bash or \/bin\/sh\) to run the steps with$/);
  const withNix = await busyboxRootfs(path.join(pods.scratch, 'images', 'with-nix'), { 'nix/store/marker': 'from the image\n' });
  const nixImage = { ...image, image: 'test/nix:1', rootfs: withNix };
  await pods.refused(ws, spec('nixrw', { root: nixImage, nixWritable: true, steps: [{ run: 'true' }] }), /^the image test\/nix:1 has its own \/nix, which the local runtime mounts read-only: nixWritable cannot be honoured$/);
  await pods.driver.startReplica(ws, spec('nixro', { root: nixImage, steps: [{ run: 'cat /nix/store/marker' }] }));
  await pods.reaches(ws, 'nixro', 'finished');
  assert.deepEqual(await pods.logTexts(ws, 'nixro', 'stdout'), ['from the image']);
  await pods.refused(ws, spec('over', { root: image, steps: [{ run: 'true' }], mounts: [{ from: 'x', to: '/nix/store' }] }), /is reserved in the pod/);
  await pods.refused(ws, spec('over', { root: image, steps: [{ run: 'true' }], mounts: [{ from: 'x', to: '/data/app' }] }), /is reserved in the pod/);
  await pods.refused(ws, spec('gone', { root: { ...image, rootfs: path.join(pods.scratch, 'images', 'gone') }, steps: [{ run: 'true' }] }), /^the root filesystem of image test\/steps:1 \(sha256:5555\) is not on this machine any more; Sync again to fetch it$/);
});

test("an editor pod from the workspace's base image: the built-in editor answers, the pod's root is the image's with the volume at /data/app; stage steps run there too", async () => {
  const ws = pods.workspace(3, { baseImage: { ...image, image: 'test/base:1' } });
  await pods.volumeWith(ws, { 'svc.yml': 'schema: svc/v1\n' });
  const address = await pods.driver.startEditor(ws, () => undefined);
  assert.equal((await fetch(`http://${address.host}:${address.port}/`)).status, 200);
  const record = JSON.parse(await readFile(path.join(pods.dataDir, 'pods', `${ws.id}.json`), 'utf8')) as { initPid: number };
  const podRoot = `/proc/${record.initPid}/root`;
  assert.equal(await readFile(`${podRoot}/etc/os-release`, 'utf8'), OS_RELEASE);
  assert.equal(await readFile(`${podRoot}/data/app/svc.yml`, 'utf8'), 'schema: svc/v1\n');
  const script = 'cat /etc/os-release; echo "pwd=$(pwd) home=$HOME from=$FROM_IMAGE"; touch /nix/from-stage && echo "/nix writable"; test -e /usr || echo "no /usr of the host"';
  const step = await pods.driver.runStageStep(ws, 'prepare-1-1', { run: script, env: { STAGE: 'yes' } });
  assert.deepEqual(await step.exited, { exitCode: 0 });
  const lines = (await pods.driver.stageStepLogs(ws, 'prepare-1-1')).lines.filter((l) => l.stream === 'stdout').map((l) => l.text);
  assert.deepEqual(lines, [OS_RELEASE.trim(), 'pwd=/data/app home=/data/home from=image', '/nix writable', 'no /usr of the host']);
  assert.ok((await stat(path.join(pods.dataDir, 'nix', String(ws.id), 'from-stage'))).isFile());
  await pods.driver.stopWorkspace(ws);
  assert.equal((await pods.driver.editorState(ws)).state, 'absent');
});

test('an editor pod whose base image has no shell, or whose root filesystem is gone, does not start and says why', async () => {
  const bare = path.join(pods.scratch, 'images', 'bare');
  const ws = pods.workspace(4, { baseImage: { ...image, image: 'test/bare:1', rootfs: bare } });
  await pods.volumeWith(ws, {});
  const error = await pods.driver.startEditor(ws, () => undefined).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof RuntimeFailure);
  assert.deepEqual([error.stage, error.reason], ['ide', 'the base image test/bare:1 has no shell (/bin/bash or /bin/sh), which the editor and terminals run in']);
  const gone = pods.workspace(4, { baseImage: { ...image, rootfs: path.join(pods.scratch, 'images', 'gone') } });
  const failure = await pods.driver.startEditor(gone, () => undefined).then(() => undefined, (e: unknown) => e);
  assert.ok(failure instanceof RuntimeFailure);
  assert.equal(failure.reason, 'the root filesystem of image test/steps:1 (sha256:5555) is not on this machine any more; starting the workspace again fetches it');
});
