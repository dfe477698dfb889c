import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { imageRootArgs, podPasswd, readImageRoot } from './container-root.ts';

async function withRoot(check: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-container-root-'));
  try {
    await check(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

test("the pod's root binds each top-level entry of the image read-only, recreates links, and provides /etc's own files", async () => {
  await withRoot(async (root) => {
    for (const dir of ['usr/bin', 'etc/ssl', 'var/tmp', 'proc', 'tmp', 'run']) await mkdir(path.join(root, dir), { recursive: true });
    await symlink('usr/bin', path.join(root, 'bin'));
    await writeFile(path.join(root, 'etc/hosts'), '127.0.0.1 image\n');
    await writeFile(path.join(root, 'etc/os-release'), 'ID=test\n');
    await symlink('/proc/self/mounts', path.join(root, 'etc/mtab'));
    const image = await readImageRoot(root);
    assert.equal(image.varTmp, true);
    const files = { hostsFile: '/data/pods/1/hosts', passwdFile: '/data/pods/1/web-0.passwd', resolvConf: '/etc/resolv.conf' };
    assert.deepEqual(imageRootArgs(image, files), [
      '--tmpfs', '/',
      '--symlink', 'usr/bin', '/bin',
      '--ro-bind', path.join(root, 'usr'), '/usr',
      '--ro-bind', path.join(root, 'var'), '/var',
      '--tmpfs', '/etc',
      '--symlink', '/proc/self/mounts', '/etc/mtab',
      '--ro-bind', path.join(root, 'etc/os-release'), '/etc/os-release',
      '--ro-bind', path.join(root, 'etc/ssl'), '/etc/ssl',
      '--ro-bind', '/data/pods/1/hosts', '/etc/hosts',
      '--ro-bind', '/data/pods/1/web-0.passwd', '/etc/passwd',
      '--ro-bind', '/etc/resolv.conf', '/etc/resolv.conf',
      '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', '--tmpfs', '/var/tmp',
    ]);
  });
});

test("the pod's passwd is the image's with a line for the pod's UID when the image has none", async () => {
  await withRoot(async (root) => {
    assert.equal(await podPasswd(root, 3001), 'root:x:0:0:root:/root:/sbin/nologin\nworkspace:x:3001:0:workspace user:/tmp:/sbin/nologin\n');
    assert.equal(await podPasswd(root, 0), 'workspace:x:0:0:workspace user:/tmp:/sbin/nologin\n');
    await mkdir(path.join(root, 'etc'));
    await writeFile(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnginx:x:101:101::/var/cache/nginx:/sbin/nologin');
    assert.equal(await podPasswd(root, 101), 'root:x:0:0:root:/root:/bin/sh\nnginx:x:101:101::/var/cache/nginx:/sbin/nologin\n');
    assert.equal(await podPasswd(root, 0), 'root:x:0:0:root:/root:/bin/sh\nnginx:x:101:101::/var/cache/nginx:/sbin/nologin\n');
    assert.match(await podPasswd(root, 3001), /\nnginx:x:101:101::\/var\/cache\/nginx:\/sbin\/nologin\nworkspace:x:3001:0:workspace user:\/tmp:\/sbin\/nologin\n$/);
  });
});
