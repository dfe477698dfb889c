// Every kind of pod runs under the seccomp filter (issue 33, item 8): a nested user namespace (`unshare -r`, which
// gave uid 0 in the pod) is refused in the editor pod, a steps replica and a container replica, while ordinary work
// still runs: a shell, git, node and its child processes, npm running a script. Workspace ids are random in a block
// of their own (test/helpers/driver-pods.ts).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { execInPod, replicaSpec, startPodBench, type PodBench } from './helpers/driver-pods.ts';
import { busyboxRootfs } from './helpers/images.ts';
import { until } from './helpers/wait.ts';

let pods: PodBench;
const skip = process.arch !== 'x64' && 'the seccomp filter is x86_64 only';

before(async () => {
  pods = await startPodBench({ name: 'pod-seccomp', editorBlock: 2_000, cycleFrom: 140_000, uidBase: 4_500_000, count: 2 });
});

after(async () => {
  await pods?.close();
});

const UNSHARE = ['bash', '-c', 'unshare -r id -u; echo "exit $?"'];

test('the editor pod refuses a nested user namespace; a shell, git, node child processes and npm scripts still run', { skip }, async () => {
  const ws = pods.workspace(0);
  await pods.volumeWith(ws, { 'package.json': JSON.stringify({ name: 'p', version: '1.0.0', scripts: { hello: 'node -e "console.log(\'npm ran \' + process.pid)" | cut -d" " -f1,2' } }) });
  await pods.driver.startEditor(ws, () => undefined);
  const editor = { kind: 'editor' } as const;
  const refused = await execInPod(pods.driver, ws, editor, UNSHARE);
  assert.equal(refused.stdout, 'exit 1\n');
  assert.match(refused.stderr, /unshare failed: Operation not permitted/);

  const git = await execInPod(pods.driver, ws, editor, ['bash', '-c', 'cd /tmp && git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m one && git log --format=%s']);
  assert.deepEqual([git.exitCode, git.stdout], [0, 'one\n'], git.stderr);
  const node = await execInPod(pods.driver, ws, editor, ['node', '-e', "const { execFileSync } = require('node:child_process'); console.log(execFileSync('sh', ['-c', 'echo child of node']).toString().trim())"]);
  assert.deepEqual([node.exitCode, node.stdout], [0, 'child of node\n'], node.stderr);
  const npm = await execInPod(pods.driver, ws, editor, ['npm', 'run', '--silent', 'hello']);
  assert.deepEqual([npm.exitCode, npm.stdout], [0, 'npm ran\n'], npm.stderr);
});

test('a steps replica and a container replica refuse a nested user namespace too', { skip }, async () => {
  const ws = pods.workspace(1);
  await pods.volumeWith(ws, {});
  const rootfs = await busyboxRootfs(path.join(pods.scratch, 'images', 'busybox'));
  await pods.driver.startReplica(ws, replicaSpec('worker', { steps: [{ run: 'exec sleep 600' }] }));
  await pods.driver.startReplica(ws, replicaSpec('box', {
    container: { image: 'test/busybox:1', digest: 'sha256:1111', rootfs, config: { Entrypoint: ['/bin/sh', '-c'], Cmd: ['unshare -r id -u; echo "exit $?"; exec sleep 600'], Env: ['PATH=/bin'] } },
  }));
  await pods.reaches(ws, 'worker', 'running');
  await pods.reaches(ws, 'box', 'running');
  const steps = await execInPod(pods.driver, ws, { kind: 'replica', service: 'worker', index: 0 }, UNSHARE);
  assert.equal(steps.stdout, 'exit 1\n');
  assert.match(steps.stderr, /Operation not permitted/);
  // the container's own command tried it (exec into a container pod needs a bash the image may not have)
  await until(async () => ((await pods.logTexts(ws, 'box', 'stdout')).includes('exit 1') ? true : undefined), 'the container tried', 20_000);
  assert.deepEqual(await pods.logTexts(ws, 'box', 'stdout'), ['exit 1']);
  assert.match((await pods.logTexts(ws, 'box', 'stderr')).join('\n'), /Operation not permitted/);
});
