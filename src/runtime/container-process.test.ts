import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ContainerRun } from './driver.ts';
import { containerProcessOf, DEFAULT_CONTAINER_PATH } from './container-process.ts';

const run = (fields: Partial<ContainerRun> = {}): ContainerRun => ({
  image: 'demo/web:1',
  digest: 'sha256:abc',
  rootfs: '/images/abc',
  config: { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080'], Env: ['PATH=/bin', 'GREETING=image', 'EMPTY=', 'broken'], WorkingDir: '/www', User: 'www' },
  ...fields,
});

test('the image ENTRYPOINT and CMD run when the service sets neither command nor args', () => {
  const process = containerProcessOf(run(), {}, 3001);
  assert.deepEqual(process, {
    image: 'demo/web:1', digest: 'sha256:abc', argv: ['/bin/httpd', '-f', '-p', '8080'],
    env: { PATH: '/bin', HOME: '/tmp', GREETING: 'image', EMPTY: '' }, workingDir: '/www', uid: 3001, imageUser: 'www',
  });
});

test('args replace CMD and keep ENTRYPOINT; command replaces ENTRYPOINT and drops CMD unless args is given', () => {
  const argv = (fields: Partial<ContainerRun>) => (containerProcessOf(run(fields), {}, 1) as { argv: string[] }).argv;
  assert.deepEqual(argv({ args: ['-p', '9090'] }), ['/bin/httpd', '-p', '9090']);
  assert.deepEqual(argv({ command: ['/bin/sh', '-c', 'echo hi'] }), ['/bin/sh', '-c', 'echo hi']);
  assert.deepEqual(argv({ command: ['/bin/echo'], args: ['a', 'b'] }), ['/bin/echo', 'a', 'b']);
  assert.deepEqual(argv({ args: [] }), ['/bin/httpd']);
});

test("the service's env wins over the image's Env; PATH and HOME have defaults", () => {
  const process = containerProcessOf(run({ config: { Cmd: ['serve'] } }), { GREETING: 'service', HOME: '/data' }, 1);
  assert.ok(!('refused' in process));
  assert.deepEqual(process.env, { PATH: DEFAULT_CONTAINER_PATH, HOME: '/data', GREETING: 'service' });
  assert.equal(process.workingDir, '/');
  assert.equal(process.imageUser, '');
});

test('runAsUser replaces the workspace UID; a relative WorkingDir is taken from /', () => {
  const process = containerProcessOf(run({ runAsUser: 0, config: { Cmd: ['x'], WorkingDir: 'app/' } }), {}, 3001);
  assert.ok(!('refused' in process));
  assert.equal(process.uid, 0);
  assert.equal(process.workingDir, '/app');
});

test('nothing to run is refused with the reason', () => {
  assert.deepEqual(containerProcessOf(run({ config: {} }), {}, 1), { refused: 'the image demo/web:1 has no ENTRYPOINT or CMD, and the service sets no command' });
  assert.deepEqual(containerProcessOf(run({ config: { Entrypoint: null, Cmd: null } }), {}, 1), { refused: 'the image demo/web:1 has no ENTRYPOINT or CMD, and the service sets no command' });
  assert.deepEqual(containerProcessOf(run({ command: [''] }), {}, 1), { refused: 'the command to run is an empty string' });
});
