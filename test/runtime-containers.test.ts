// `container` service replicas of the local runtime driver against real bubblewrap, real processes and real images
// (busybox root filesystems made in the test, test/helpers/images.ts): the image's root read-only as the pod's `/`,
// a web server reached by name from a `steps` replica that needs it, mounts of the volume, the image's Env and
// WorkingDir, the workspace's UID with group 0 (or runAsUser), and the statuses and notes of spec 3.2.
// Workspace ids are random in a block of their own (test/helpers/driver-pods.ts).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { ContainerRun } from '../src/runtime/driver.ts';
import type { ImageConfig } from '../src/runtime/image.ts';
import { asRoot, replicaSpec as spec, startPodBench, type PodBench } from './helpers/driver-pods.ts';
import { busyboxRootfs } from './helpers/images.ts';
import { until } from './helpers/wait.ts';

let pods: PodBench;
/** The test's image: busybox, a page, a script that is not executable, one that is. */
let rootfs: string;

const webConfig: ImageConfig = { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080', '-h', '/www'], Env: ['PATH=/bin', 'FROM_IMAGE=image', 'SHARED=image'], WorkingDir: '/www' };

function container(fields: Partial<ContainerRun> = {}, config: ImageConfig = webConfig): ContainerRun {
  return { image: 'test/busybox:1', digest: 'sha256:1111', rootfs, config, ...fields };
}

before(async () => {
  // ids whose editor /30 (id mod 16384) lies in 14000..15999 and whose uids lie far from other test files'
  pods = await startPodBench({ name: 'runtime-containers', editorBlock: 14_000, cycleFrom: 60_000, uidBase: 3_500_000, count: 6 });
  rootfs = await busyboxRootfs(path.join(pods.scratch, 'images', 'busybox'), { 'www/index.html': 'from the image\n', 'opt/plain.sh': '#!/bin/sh\necho never\n', 'opt/ok.sh': '#!/bin/sh\necho ok\n' }, ['opt/ok.sh']);
});

after(async () => {
  await pods?.close();
});

test('a container web server serves a mount of the volume; a steps replica that needs it reaches it by name', { skip: !asRoot && 'needs root (own network namespaces)' }, async () => {
  const ws = pods.workspace(0);
  await pods.volumeWith(ws, {
    'site/index.html': 'from the volume\n',
    'ask.cjs': "fetch('http://web:8080/').then((r) => r.text()).then((t) => console.log(`saw ${t.trim()}`), (e) => { console.error(String(e.cause ?? e)); process.exit(1); });\n",
  });
  const health = { port: 8080, path: '/', mode: 'http-2xx' as const };
  const asker = spec('asker', { steps: [{ run: 'node ask.cjs' }, { run: 'exec sleep 600' }], needs: [{ name: 'web', port: 8080, healthPath: '/', healthMode: 'http-2xx' }] });
  await pods.driver.startReplica(ws, asker);
  await until(async () => ((await pods.logTexts(ws, 'asker', 'system')).includes('Waiting for web (up to 5m0s)') ? true : undefined), 'asker waits');
  const address = await pods.driver.startReplica(ws, spec('web', { container: container(), ports: [8080], health, mounts: [{ from: 'site', to: '/www' }] }));
  assert.deepEqual(await pods.reaches(ws, 'web', 'running'), { service: 'web', index: 0, status: 'running', ready: true, restarts: 0, address });
  assert.equal(await (await fetch(`http://${address.host}:8080/`)).text(), 'from the volume\n');
  await pods.reaches(ws, 'asker', 'running');
  assert.deepEqual((await pods.logTexts(ws, 'asker', 'system')).filter((t) => /web/.test(t)), ['Waiting for web (up to 5m0s)', 'web answered, starting']);
  assert.deepEqual(await pods.logTexts(ws, 'asker', 'stdout'), ['saw from the volume']);
  assert.deepEqual((await pods.logTexts(ws, 'web', 'system')).slice(0, 2), ['Starting replica 0 of web', 'Starting /bin/httpd -f -p 8080 -h /www (image test/busybox:1, sha256:1111)']);
});

test("the pod's root is the image's, read-only; /tmp, /run and /var/tmp are writable; the process is the workspace UID with group 0", async () => {
  const ws = pods.workspace(1);
  await pods.volumeWith(ws, {});
  const script = [
    'echo "uid=$(id -u) gid=$(id -g) pwd=$(pwd) home=$HOME from=$FROM_IMAGE shared=$SHARED"',
    'ls /', 'cat /www/index.html', 'id -un',
    'touch /bin/x 2>/dev/null || echo "/bin read-only"', 'touch /etc/x 2>/dev/null || echo "/etc read-only"', 'touch /new 2>/dev/null || echo "/ read-only"',
    'touch /tmp/x /run/x /var/tmp/x && echo "tmp, run and var/tmp writable"',
    'test -e /data/app || echo "no volume"',
  ].join('; ');
  await pods.driver.startReplica(ws, spec('box', { container: container({ command: ['/bin/sh', '-c', script] }), env: { SHARED: 'service' } }));
  await pods.reaches(ws, 'box', 'finished');
  const out = await pods.logTexts(ws, 'box', 'stdout');
  assert.deepEqual(out, [
    `uid=${ws.uid} gid=0 pwd=/www home=/tmp from=image shared=service`,
    ...['bin', 'dev', 'etc', 'opt', 'proc', 'run', 'tmp', 'var', 'www'],
    'from the image',
    'workspace',
    '/bin read-only', '/etc read-only', '/ read-only',
    'tmp, run and var/tmp writable',
    'no volume',
  ]);
});

test('runAsUser is the UID the process sees; the image config names none', async () => {
  const ws = pods.workspace(1);
  await pods.driver.startReplica(ws, spec('rooted', { container: container({ runAsUser: 0, command: ['/bin/sh', '-c', 'echo "$(id -u):$(id -g) $(id -un)"'] }) }));
  await pods.reaches(ws, 'rooted', 'finished');
  assert.deepEqual(await pods.logTexts(ws, 'rooted', 'stdout'), ['0:0 root']);
});

test('an entrypoint that is missing exits 127, one that is not executable 126: notes, then Failed with the exact message', async () => {
  const ws = pods.workspace(2);
  await pods.volumeWith(ws, {});
  await pods.driver.startReplica(ws, spec('missing', { container: container({}, { Entrypoint: ['/bin/no-such-server'], Cmd: ['--port', '80'] }) }));
  await pods.driver.startReplica(ws, spec('plain', { container: container({}, { Cmd: ['/opt/plain.sh'] }) }));
  const missing = await pods.reaches(ws, 'missing', 'failure');
  assert.equal(missing.detail, 'Giving up: exited with 127; 5 failures in 20s');
  assert.equal(missing.restarts, 4);
  const missingLog = await pods.logTexts(ws, 'missing', 'system');
  assert.equal(missingLog.filter((t) => t === 'Exit code 127: the command is missing from the image').length, 5);
  assert.equal(missingLog.at(-1), 'Giving up: exited with 127; 5 failures in 20s');
  assert.equal((await pods.reaches(ws, 'plain', 'failure')).detail, 'Giving up: exited with 126; 5 failures in 20s');
  assert.ok((await pods.logTexts(ws, 'plain', 'system')).includes('Exit code 126: the file is not executable for the workspace user (its UID, group 0)'));
});

test('a process that exits 0 finishes; one that crashes restarts with backoff and gives up; a permission error adds the note on the image user', async () => {
  const ws = pods.workspace(3);
  await pods.volumeWith(ws, {});
  await pods.driver.startReplica(ws, spec('once', { container: container({}, { Cmd: ['/opt/ok.sh'] }) }));
  await pods.driver.startReplica(ws, spec('crash', { container: container({ command: ['/bin/sh', '-c', 'echo crashing; exit 3'] }) }));
  await pods.driver.startReplica(ws, spec('fixed', { container: container({}, { User: 'nginx', Entrypoint: ['/bin/mkdir'], Cmd: ['-p', '/var/cache/app'] }) }));
  const once = await pods.reaches(ws, 'once', 'finished');
  assert.equal(once.detail, 'The server exited with code 0: the service finished');
  assert.deepEqual(await pods.logTexts(ws, 'once', 'stdout'), ['ok']);
  const crash = await pods.reaches(ws, 'crash', 'failure');
  assert.equal(crash.detail, 'Giving up: exited with 3; 5 failures in 20s');
  const crashLog = await pods.logTexts(ws, 'crash', 'system');
  assert.deepEqual(crashLog.filter((t) => t.startsWith('Server exited')), [10, 20, 40, 40].map((ms) => `Server exited with code 3; restarting in ${ms}ms`));
  assert.equal((await pods.logTexts(ws, 'crash', 'stdout')).length, 5);
  await pods.reaches(ws, 'fixed', 'failure');
  const note = `The image expects to run as user nginx; here it runs as UID ${ws.uid} with group 0 and its files are read-only: what it writes must be ` +
    'in /tmp, /run, /var/tmp or a mount, and writable by group 0 (or a cluster administrator allows the team runAsUser)';
  assert.equal((await pods.logTexts(ws, 'fixed', 'system')).filter((t) => t === note).length, 1);
  assert.match((await pods.logTexts(ws, 'fixed', 'stderr'))[0], /mkdir: can't create directory '\/var\/cache\/': Read-only file system/);
});

test('what cannot start is refused: nothing to run, a root filesystem that is gone, a mount over the pod\'s own files', async () => {
  const ws = pods.workspace(4);
  await pods.volumeWith(ws, {});
  await pods.refused(ws, spec('empty', { container: container({}, {}) }), /^the image test\/busybox:1 has no ENTRYPOINT or CMD, and the service sets no command$/);
  await pods.refused(ws, spec('gone', { container: container({ rootfs: path.join(pods.scratch, 'images', 'gone') }) }), /^the root filesystem of image test\/busybox:1 \(sha256:1111\) is not on this machine any more; Sync again to fetch it$/);
  await pods.refused(ws, spec('sneaky', { container: container(), mounts: [{ from: 'x', to: '/etc/hosts' }] }), /^the mount target \/etc\/hosts is reserved in the pod$/);
  await pods.refused(ws, spec('sneaky', { container: container(), mounts: [{ from: 'x', to: '/.svc/agent' }] }), /is reserved in the pod/);
});
