import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile, chmod, chown, lchown } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { reownTree, reownedMode } from './volume-owner.ts';

test('a re-owned entry: group bits equal to the user bits, setgid on directories, none on files', () => {
  assert.equal(reownedMode(0o700, true), 0o2770);
  assert.equal(reownedMode(0o644, false), 0o664);
  assert.equal(reownedMode(0o755, false), 0o775);
  assert.equal(reownedMode(0o6755, false), 0o775);
  assert.equal(reownedMode(0o1777, true), 0o3777);
  assert.equal(reownedMode(0o600, false), 0o660);
});

const asRoot = process.getuid?.() === 0;

test('reownTree hands every entry to the UID with group 0, leaves symlink targets alone, names what it cannot change', { skip: !asRoot && 'needs root' }, async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-reown-'));
  const outside = path.join(root, 'outside');
  const volume = path.join(root, 'volume');
  try {
    await writeFile(outside, 'host file\n', { mode: 0o600 });
    await mkdir(path.join(volume, 'src', 'deep'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(volume, 'src', 'deep', 'main.c'), 'int main;\n', { mode: 0o640 });
    await writeFile(path.join(volume, 'run.sh'), '#!/bin/sh\n', { mode: 0o4750 });
    await symlink(outside, path.join(volume, 'escape'));
    await writeFile(path.join(volume, 'locked'), 'x\n');
    await chown(volume, 4242, 4242);
    await chmod(volume, 0o750);
    await chmod(path.join(volume, 'run.sh'), 0o4750);
    execFileSync('chattr', ['+i', path.join(volume, 'locked')]);
    const result = await reownTree(volume, '/data/app', 300123);
    assert.deepEqual(result.unchanged, [{ path: '/data/app/locked', reason: 'operation not permitted (immutable or append-only file?)' }]);
    assert.equal(result.entries, 6);
    const of = async (rel: string) => {
      const s = await lstat(path.join(volume, rel));
      return { uid: s.uid, gid: s.gid, mode: s.mode & 0o7777 };
    };
    assert.deepEqual(await of('.'), { uid: 300123, gid: 0, mode: 0o2770 });
    assert.deepEqual(await of('src'), { uid: 300123, gid: 0, mode: 0o2770 });
    assert.deepEqual(await of('src/deep/main.c'), { uid: 300123, gid: 0, mode: 0o660 });
    assert.deepEqual(await of('run.sh'), { uid: 300123, gid: 0, mode: 0o770 });
    assert.equal((await of('escape')).uid, 300123, 'the link itself is re-owned');
    const host = await lstat(outside);
    assert.deepEqual([host.uid, host.gid, host.mode & 0o777], [0, 0, 0o600], 'the file it points to is not');
    assert.equal((await of('locked')).uid, 0);
  } finally {
    execFileSync('chattr', ['-i', path.join(volume, 'locked')]);
    await rm(root, { recursive: true, force: true });
  }
});

test("a managed instance's data: owner changed, modes kept, root's files and symlink targets left alone", { skip: !asRoot && 'needs root' }, async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-reown-managed-'));
  const instance = path.join(root, 'instance');
  const outside = path.join(root, 'outside');
  try {
    await writeFile(outside, 'host file\n', { mode: 0o600 });
    await mkdir(path.join(instance, 'data', 'base'), { recursive: true, mode: 0o700 });
    await chmod(instance, 0o755);
    await writeFile(path.join(instance, 'data', 'base', '1'), 'rows\n', { mode: 0o600 });
    await writeFile(path.join(instance, 'postgres.log'), 'log\n', { mode: 0o600 });
    await symlink(outside, path.join(instance, 'data', 'escape'));
    for (const rel of ['data', 'data/base', 'data/base/1']) await chown(path.join(instance, rel), 4242, 0);
    await chmod(path.join(instance, 'data'), 0o700);
    await lchown(path.join(instance, 'data', 'escape'), 4242, 0);
    await chown(outside, 4242, 0);
    const result = await reownTree(instance, '/managed/db', 300124, undefined, { keepModes: true, skipRootOwned: true });
    assert.deepEqual(result.unchanged, []);
    const of = async (file: string) => {
      const s = await lstat(file);
      return [s.uid, s.gid, s.mode & 0o7777];
    };
    assert.deepEqual(await of(instance), [0, 0, 0o755], "the instance's directory stays root's");
    assert.deepEqual(await of(path.join(instance, 'postgres.log')), [0, 0, 0o600]);
    assert.deepEqual(await of(path.join(instance, 'data')), [300124, 0, 0o700], 'PostgreSQL asks for u=rwx');
    assert.deepEqual(await of(path.join(instance, 'data', 'base', '1')), [300124, 0, 0o600]);
    assert.equal((await lstat(path.join(instance, 'data', 'escape'))).uid, 300124);
    assert.equal((await lstat(outside)).uid, 4242, 'the link is not followed');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
