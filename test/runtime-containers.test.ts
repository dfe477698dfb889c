// `container` service replicas of the local runtime driver against real bubblewrap, real processes and real images
// (busybox root filesystems made in the test, test/helpers/images.ts): the image's root read-only as the pod's `/`,
// a web server reached by name from a `steps` replica that needs it, mounts of the volume, the image's Env and
// WorkingDir, the workspace's UID with group 0 (or runAsUser), and the statuses and notes of spec 3.2.
// Workspace ids are random in a block of their own, so that this file never meets another's pods or networks.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { ContainerRun, LogLine, ReplicaObservation, ReplicaSpec, RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { RuntimeFailure } from '../src/runtime/driver.ts';
import type { ImageConfig } from '../src/runtime/image.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { busyboxRootfs } from './helpers/images.ts';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
// ids whose editor /30 (id mod 16384) lies in 14000..15999 and whose uids lie far from other test files'
const base = 16384 * (60_000 + Math.floor(Math.random() * 20_000)) + 14_000 + Math.floor(Math.random() * 1900);
const ids = Array.from({ length: 6 }, (_, i) => base + i);
const workspace = (n: number): WorkspaceRef => ({ id: ids[n], uid: 3_500_000 + (ids[n] % 1_000_000), storageGib: 1 });
const fast = { backoffBaseMs: 10, backoffMaxMs: 40, giveUpWindowMs: 2000, probeIntervalMs: 50 };

let scratch: string;
let dataDir: string;
let driver: RuntimeDriver;
/** The test's image: busybox, a page, a script that is not executable, one that is. */
let rootfs: string;

const webConfig: ImageConfig = { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080', '-h', '/www'], Env: ['PATH=/bin', 'FROM_IMAGE=image', 'SHARED=image'], WorkingDir: '/www' };

function container(fields: Partial<ContainerRun> = {}, config: ImageConfig = webConfig): ContainerRun {
  return { image: 'test/busybox:1', digest: 'sha256:1111', rootfs, config, ...fields };
}

function spec(service: string, fields: Partial<ReplicaSpec>): ReplicaSpec {
  return { service, index: 0, steps: [], env: {}, ports: [], mounts: [], needs: [], ...fields };
}

async function waitUntil<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const stateOf = async (ws: WorkspaceRef, service: string): Promise<ReplicaObservation | undefined> =>
  (await driver.replicaStates(ws)).find((r) => r.service === service && r.index === 0);

function reaches(ws: WorkspaceRef, service: string, status: ReplicaObservation['status']): Promise<ReplicaObservation> {
  return waitUntil(async () => {
    const state = await stateOf(ws, service);
    return state?.status === status && (status !== 'running' || state.ready) ? state : undefined;
  }, `${service} is ${status}`);
}

async function logTexts(ws: WorkspaceRef, service: string, stream?: LogLine['stream']): Promise<string[]> {
  const { lines } = await driver.replicaLogs(ws, service, 0);
  return lines.filter((line) => !stream || line.stream === stream).map((line) => line.text);
}

/** A volume with `files`, owned by the workspace UID. */
async function volumeWith(ws: WorkspaceRef, files: Record<string, string>): Promise<string> {
  await driver.createVolume(ws);
  const dir = path.join(dataDir, 'volumes', String(ws.id));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
    if (asRoot) await run('chown', ['-R', `${ws.uid}:0`, path.join(dir, name.split('/')[0])]);
  }
  return dir;
}

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-runtime-containers-'));
  await run('chmod', ['755', scratch]);
  dataDir = path.join(scratch, 'data');
  await mkdir(dataDir);
  rootfs = await busyboxRootfs(path.join(scratch, 'images', 'busybox'), { 'www/index.html': 'from the image\n', 'opt/plain.sh': '#!/bin/sh\necho never\n', 'opt/ok.sh': '#!/bin/sh\necho ok\n' }, ['opt/ok.sh']);
  driver = createLocalDriver({ dataDir, editorTimeoutMs: 30_000, replicaTimings: fast });
});

after(async () => {
  for (let n = 0; n < ids.length; n++) {
    await driver.stopWorkspace(workspace(n)).catch(() => undefined);
    await driver.deleteVolume(workspace(n)).catch(() => undefined);
  }
  await driver.close();
  await rm(scratch, { recursive: true, force: true });
});

test('a container web server serves a mount of the volume; a steps replica that needs it reaches it by name', { skip: !asRoot && 'needs root (own network namespaces)' }, async () => {
  const ws = workspace(0);
  await volumeWith(ws, {
    'site/index.html': 'from the volume\n',
    'ask.cjs': "fetch('http://web:8080/').then((r) => r.text()).then((t) => console.log(`saw ${t.trim()}`), (e) => { console.error(String(e.cause ?? e)); process.exit(1); });\n",
  });
  const health = { port: 8080, path: '/', mode: 'http-2xx' as const };
  const asker = spec('asker', { steps: [{ run: 'node ask.cjs' }, { run: 'exec sleep 600' }], needs: [{ name: 'web', port: 8080, healthPath: '/', healthMode: 'http-2xx' }] });
  await driver.startReplica(ws, asker);
  await waitUntil(async () => ((await logTexts(ws, 'asker', 'system')).includes('Waiting for web (up to 5m0s)') ? true : undefined), 'asker waits');
  const address = await driver.startReplica(ws, spec('web', { container: container(), ports: [8080], health, mounts: [{ from: 'site', to: '/www' }] }));
  assert.deepEqual(await reaches(ws, 'web', 'running'), { service: 'web', index: 0, status: 'running', ready: true, restarts: 0, address });
  assert.equal(await (await fetch(`http://${address.host}:8080/`)).text(), 'from the volume\n');
  await reaches(ws, 'asker', 'running');
  assert.deepEqual((await logTexts(ws, 'asker', 'system')).filter((t) => /web/.test(t)), ['Waiting for web (up to 5m0s)', 'web answered, starting']);
  assert.deepEqual(await logTexts(ws, 'asker', 'stdout'), ['saw from the volume']);
  assert.deepEqual((await logTexts(ws, 'web', 'system')).slice(0, 2), ['Starting replica 0 of web', 'Starting /bin/httpd -f -p 8080 -h /www (image test/busybox:1, sha256:1111)']);
});

test("the pod's root is the image's, read-only; /tmp, /run and /var/tmp are writable; the process is the workspace UID with group 0", async () => {
  const ws = workspace(1);
  await volumeWith(ws, {});
  const script = [
    'echo "uid=$(id -u) gid=$(id -g) pwd=$(pwd) home=$HOME from=$FROM_IMAGE shared=$SHARED"',
    'ls /', 'cat /www/index.html', 'id -un',
    'touch /bin/x 2>/dev/null || echo "/bin read-only"', 'touch /etc/x 2>/dev/null || echo "/etc read-only"', 'touch /new 2>/dev/null || echo "/ read-only"',
    'touch /tmp/x /run/x /var/tmp/x && echo "tmp, run and var/tmp writable"',
    'test -e /data/app || echo "no volume"',
  ].join('; ');
  await driver.startReplica(ws, spec('box', { container: container({ command: ['/bin/sh', '-c', script] }), env: { SHARED: 'service' } }));
  await reaches(ws, 'box', 'finished');
  const out = await logTexts(ws, 'box', 'stdout');
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
  const ws = workspace(1);
  await driver.startReplica(ws, spec('rooted', { container: container({ runAsUser: 0, command: ['/bin/sh', '-c', 'echo "$(id -u):$(id -g) $(id -un)"'] }) }));
  await reaches(ws, 'rooted', 'finished');
  assert.deepEqual(await logTexts(ws, 'rooted', 'stdout'), ['0:0 root']);
});

test('an entrypoint that is missing exits 127, one that is not executable 126: notes, then Failed with the exact message', async () => {
  const ws = workspace(2);
  await volumeWith(ws, {});
  await driver.startReplica(ws, spec('missing', { container: container({}, { Entrypoint: ['/bin/no-such-server'], Cmd: ['--port', '80'] }) }));
  await driver.startReplica(ws, spec('plain', { container: container({}, { Cmd: ['/opt/plain.sh'] }) }));
  const missing = await reaches(ws, 'missing', 'failure');
  assert.equal(missing.detail, 'Giving up: exited with 127; 5 failures in 2s');
  assert.equal(missing.restarts, 4);
  const missingLog = await logTexts(ws, 'missing', 'system');
  assert.equal(missingLog.filter((t) => t === 'Exit code 127: the command is missing from the image').length, 5);
  assert.equal(missingLog.at(-1), 'Giving up: exited with 127; 5 failures in 2s');
  assert.equal((await reaches(ws, 'plain', 'failure')).detail, 'Giving up: exited with 126; 5 failures in 2s');
  assert.ok((await logTexts(ws, 'plain', 'system')).includes('Exit code 126: the file is not executable for the workspace user (its UID, group 0)'));
});

test('a process that exits 0 finishes; one that crashes restarts with backoff and gives up; a permission error adds the note on the image user', async () => {
  const ws = workspace(3);
  await volumeWith(ws, {});
  await driver.startReplica(ws, spec('once', { container: container({}, { Cmd: ['/opt/ok.sh'] }) }));
  await driver.startReplica(ws, spec('crash', { container: container({ command: ['/bin/sh', '-c', 'echo crashing; exit 3'] }) }));
  await driver.startReplica(ws, spec('fixed', { container: container({}, { User: 'nginx', Entrypoint: ['/bin/mkdir'], Cmd: ['-p', '/var/cache/app'] }) }));
  const once = await reaches(ws, 'once', 'finished');
  assert.equal(once.detail, 'The server exited with code 0: the service finished');
  assert.deepEqual(await logTexts(ws, 'once', 'stdout'), ['ok']);
  const crash = await reaches(ws, 'crash', 'failure');
  assert.equal(crash.detail, 'Giving up: exited with 3; 5 failures in 2s');
  const crashLog = await logTexts(ws, 'crash', 'system');
  assert.deepEqual(crashLog.filter((t) => t.startsWith('Server exited')), [10, 20, 40, 40].map((ms) => `Server exited with code 3; restarting in ${ms}ms`));
  assert.equal((await logTexts(ws, 'crash', 'stdout')).length, 5);
  await reaches(ws, 'fixed', 'failure');
  const note = `The image expects to run as user nginx; here it runs as UID ${ws.uid} with group 0 and its files are read-only: what it writes must be ` +
    'in /tmp, /run, /var/tmp or a mount, and writable by group 0 (or a cluster administrator allows the team runAsUser)';
  assert.equal((await logTexts(ws, 'fixed', 'system')).filter((t) => t === note).length, 1);
  assert.match((await logTexts(ws, 'fixed', 'stderr'))[0], /mkdir: can't create directory '\/var\/cache\/': Read-only file system/);
});

test('what cannot start is refused: nothing to run, a root filesystem that is gone, a mount over the pod\'s own files', async () => {
  const ws = workspace(4);
  await volumeWith(ws, {});
  const refused = async (replica: ReplicaSpec, reason: RegExp) => {
    const error = await driver.startReplica(ws, replica).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof RuntimeFailure, `expected a RuntimeFailure, got ${String(error)}`);
    assert.match(error.reason, reason);
  };
  await refused(spec('empty', { container: container({}, {}) }), /^the image test\/busybox:1 has no ENTRYPOINT or CMD, and the service sets no command$/);
  await refused(spec('gone', { container: container({ rootfs: path.join(scratch, 'images', 'gone') }) }), /^the root filesystem of image test\/busybox:1 \(sha256:1111\) is not on this machine any more; Sync again to fetch it$/);
  await refused(spec('sneaky', { container: container(), mounts: [{ from: 'x', to: '/etc/hosts' }] }), /^the mount target \/etc\/hosts is reserved in the pod$/);
  await refused(spec('sneaky', { container: container(), mounts: [{ from: 'x', to: '/.svc/agent' }] }), /is reserved in the pod/);
});
