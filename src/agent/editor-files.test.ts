import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { listTree, MAX_FILE_BYTES, readWorkspaceFile, resolveInside, writeWorkspaceFile } from './editor-files.ts';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-files-'));
  await mkdir(path.join(root, 'src/lib'), { recursive: true });
  await mkdir(path.join(root, '.git/objects'), { recursive: true });
  await mkdir(path.join(root, 'node_modules/left-pad'), { recursive: true });
  await writeFile(path.join(root, 'README.md'), '# Hi\n');
  await writeFile(path.join(root, 'src/main.ts'), 'main\n');
  await writeFile(path.join(root, 'src/lib/a.ts'), 'a\n');
  await writeFile(path.join(root, '.git/HEAD'), 'ref\n');
  await writeFile(path.join(root, 'node_modules/left-pad/index.js'), '\n');
  await symlink('/etc/passwd', path.join(root, 'passwd-link'));
});
after(() => rm(root, { recursive: true, force: true }));

test('paths resolve inside the workspace; anything that leaves it is refused', () => {
  assert.equal(resolveInside('/data/app', 'src/main.ts'), '/data/app/src/main.ts');
  assert.equal(resolveInside('/data/app', 'src/../README.md'), '/data/app/README.md');
  for (const bad of ['', '.', '..', '../etc/passwd', 'src/../../x', '/etc/passwd', 'a\0b']) {
    assert.equal(resolveInside('/data/app', bad), undefined, JSON.stringify(bad));
  }
});

test('the tree lists directories first, then files, and does not descend into .git or node_modules', async () => {
  const { entries, truncated } = await listTree(root);
  assert.equal(truncated, false);
  assert.deepEqual(entries, [
    { path: '.git', type: 'dir' },
    { path: 'node_modules', type: 'dir' },
    { path: 'src', type: 'dir' },
    { path: 'src/lib', type: 'dir' },
    { path: 'src/lib/a.ts', type: 'file' },
    { path: 'src/main.ts', type: 'file' },
    { path: 'README.md', type: 'file' },
  ]);
  assert.deepEqual(await listTree(root, 2), { entries: entries.slice(0, 2), truncated: true });
});

test('reading gives the text of a regular file; missing files, symlinks, and huge files are refused', async () => {
  assert.deepEqual(await readWorkspaceFile(root, 'src/main.ts'), { ok: true, text: 'main\n' });
  assert.deepEqual(await readWorkspaceFile(root, 'nope.txt'), { ok: false, status: 404, message: 'No such file.' });
  assert.deepEqual(await readWorkspaceFile(root, 'passwd-link'), { ok: false, status: 404, message: 'No such file.' });
  assert.equal((await readWorkspaceFile(root, '../x')).ok, false);
  await writeFile(path.join(root, 'big.bin'), Buffer.alloc(MAX_FILE_BYTES + 1));
  assert.deepEqual(await readWorkspaceFile(root, 'big.bin'), { ok: false, status: 413, message: 'The file is too large to edit here.' });
  await rm(path.join(root, 'big.bin'));
});

test('saving replaces the file keeping its mode, creates new files and their directories, and refuses other paths', async () => {
  await writeFile(path.join(root, 'run.sh'), 'old\n', { mode: 0o755 });
  assert.deepEqual(await writeWorkspaceFile(root, 'run.sh', 'new\n'), { ok: true });
  assert.equal(await readFile(path.join(root, 'run.sh'), 'utf8'), 'new\n');
  assert.equal((await stat(path.join(root, 'run.sh'))).mode & 0o777, 0o755);
  assert.deepEqual(await writeWorkspaceFile(root, 'docs/new/notes.md', 'n\n'), { ok: true });
  assert.equal(await readFile(path.join(root, 'docs/new/notes.md'), 'utf8'), 'n\n');
  assert.deepEqual(await writeWorkspaceFile(root, 'src', 'x'), { ok: false, message: 'The path is not a regular file.' });
  assert.deepEqual(await writeWorkspaceFile(root, 'passwd-link', 'x'), { ok: false, message: 'The path is not a regular file.' });
  assert.deepEqual(await writeWorkspaceFile(root, '../escape.txt', 'x'), { ok: false, message: 'The path is outside the workspace.' });
});
