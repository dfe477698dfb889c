import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ensureVolumeLayout } from './volume-layout.ts';

const owner = { uid: process.getuid?.() ?? 0, asRoot: false };
const fresh = () => mkdtemp(path.join(os.tmpdir(), 'svc-layout-'));

test('a new volume gets app/, home/ and .svc/ once; again it is kept as it is', async () => {
  const volume = await fresh();
  try {
    assert.equal(await ensureVolumeLayout(volume, owner), 'made');
    assert.deepEqual((await readdir(volume)).sort(), ['.svc', 'app', 'home']);
    assert.deepEqual(await readdir(path.join(volume, 'app')), []);
    await writeFile(path.join(volume, 'app', 'README.md'), '# hi\n');
    assert.equal(await ensureVolumeLayout(volume, owner), 'kept');
    assert.deepEqual(await readdir(path.join(volume, 'app')), ['README.md']);
  } finally {
    await rm(volume, { recursive: true, force: true });
  }
});

test('an old volume (the code at its root, svc\'s files in its .svc) has its code moved into app/, an app/ of the code included', async () => {
  const volume = await fresh();
  try {
    await mkdir(path.join(volume, '.git'));
    await mkdir(path.join(volume, 'app'));
    await writeFile(path.join(volume, 'app', 'main.js'), 'x\n');
    await writeFile(path.join(volume, 'README.md'), '# old\n');
    await mkdir(path.join(volume, '.svc', 'code-server'), { recursive: true });
    const calls = await Promise.all([ensureVolumeLayout(volume, owner), ensureVolumeLayout(volume, owner)]);
    assert.deepEqual(calls, ['moved', 'kept'], 'two starts at once move it once');
    assert.deepEqual((await readdir(volume)).sort(), ['.svc', 'app', 'home']);
    assert.deepEqual((await readdir(path.join(volume, 'app'))).sort(), ['.git', 'README.md', 'app']);
    assert.equal(await readFile(path.join(volume, 'app', 'app', 'main.js'), 'utf8'), 'x\n');
    assert.deepEqual((await readdir(path.join(volume, '.svc'))).sort(), ['code-server', 'layout'], 'the editor\'s state stays where it is');
  } finally {
    await rm(volume, { recursive: true, force: true });
  }
});

test('a move cut short after its marker resumes; an app/ made a link is refused', async () => {
  const volume = await fresh();
  try {
    await mkdir(path.join(volume, '.svc'));
    await writeFile(path.join(volume, '.svc', 'layout'), 'app home\n');
    await mkdir(path.join(volume, '.svc-moving-app'));
    await writeFile(path.join(volume, '.svc-moving-app', 'README.md'), '# moving\n');
    assert.equal(await ensureVolumeLayout(volume, owner), 'kept');
    assert.equal(await readFile(path.join(volume, 'app', 'README.md'), 'utf8'), '# moving\n');
    await rm(path.join(volume, 'app'), { recursive: true });
    await symlink('/etc', path.join(volume, 'app'));
    await assert.rejects(ensureVolumeLayout(volume, owner), /the volume's app is not a directory/);
  } finally {
    await rm(volume, { recursive: true, force: true });
  }
});
