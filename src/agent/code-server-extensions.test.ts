import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ALL_BUILTIN_EXTENSIONS_MARK, builtInExtensionsArgs, TRIMMED_BUILTIN_EXTENSIONS } from './code-server-extensions.ts';

/** A tools directory with code-server's package in it, and a workspace's code-server data directory. */
async function inTools(body: (tools: { packageDir: string; dataDir: string; trimmed: string }) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-extensions-'));
  try {
    const packageDir = path.join(dir, 'tools/node_modules/code-server');
    const dataDir = path.join(dir, 'app/.svc/code-server');
    await mkdir(packageDir, { recursive: true });
    await mkdir(dataDir, { recursive: true });
    await body({ packageDir, dataDir, trimmed: path.join(dir, 'tools', TRIMMED_BUILTIN_EXTENSIONS) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('code-server gets the trimmed built-in extensions when setup-editor-extensions.sh made them beside it', () =>
  inTools(async ({ packageDir, dataDir, trimmed }) => {
    await mkdir(trimmed);
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, ['--auth', 'none']), ['--builtin-extensions-dir', await realpath(trimmed)]);
  }),
);

test("code-server gets the directory the trimmed set's link points to (its scanner lists nothing under a link)", () =>
  inTools(async ({ packageDir, dataDir, trimmed }) => {
    const made = path.join(path.dirname(trimmed), '.code-server-builtin-extensions.abc123');
    await mkdir(made);
    await symlink(path.basename(made), trimmed);
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, []), ['--builtin-extensions-dir', await realpath(made)]);
  }),
);

test('without the trimmed directory code-server keeps all of its own built-in extensions', () =>
  inTools(async ({ packageDir, dataDir }) => {
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, []), []);
  }),
);

test('a workspace that asks for all built-in extensions (its all-built-in-extensions file) gets them all', () =>
  inTools(async ({ packageDir, dataDir, trimmed }) => {
    await mkdir(trimmed);
    await writeFile(path.join(dataDir, ALL_BUILTIN_EXTENSIONS_MARK), '');
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, []), []);
  }),
);

test('a --builtin-extensions-dir given on the command line wins over the trimmed set', () =>
  inTools(async ({ packageDir, dataDir, trimmed }) => {
    await mkdir(trimmed);
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, ['--builtin-extensions-dir', '/elsewhere']), []);
    assert.deepEqual(builtInExtensionsArgs(packageDir, dataDir, ['--builtin-extensions-dir=/elsewhere']), []);
  }),
);
