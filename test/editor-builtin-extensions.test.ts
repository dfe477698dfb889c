// The built-in extensions a workspace's code-server starts with: scripts/setup-editor-extensions.sh makes the trimmed
// set editor/built-in-extensions.txt lists beside code-server, and docs/runtime.md lists the same set.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const script = path.join(root, 'scripts/setup-editor-extensions.sh');
const listFile = path.join(root, 'editor/built-in-extensions.txt');

const namesOfList = (text: string) => text.split('\n').map((line) => line.replace(/#.*/, '').trim()).filter(Boolean);

/** A tools directory whose code-server has these built-in extensions (and the shared node_modules). */
async function fakeTools(dir: string, extensions: string[]): Promise<string> {
  const tools = path.join(dir, 'tools');
  const builtIn = path.join(tools, 'node_modules/code-server/lib/vscode/extensions');
  await mkdir(path.join(builtIn, 'node_modules/typescript'), { recursive: true });
  for (const name of extensions) await installExtension(tools, name);
  return tools;
}

/** An extension as an install makes it: a new directory (setup-editor-yaml.sh replaces svc-yaml so). */
async function installExtension(tools: string, name: string): Promise<void> {
  const dir = path.join(tools, 'node_modules/code-server/lib/vscode/extensions', name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(path.join(dir, 'dist'), { recursive: true });
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name }));
  await writeFile(path.join(dir, 'dist/extension.js'), '');
}

async function setup(tools: string, list: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('bash', [script], { env: { ...process.env, SVC_TOOLS_DIR: tools, SVC_BUILTIN_EXTENSIONS_LIST: list } });
}

async function inScratch(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-builtin-extensions-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the trimmed set holds the listed extensions as directories of the installed files, and the shared node_modules', () =>
  inScratch(async (dir) => {
    const tools = await fakeTools(dir, ['git', 'theme-defaults', 'theme-monokai', 'copilot']);
    const list = path.join(dir, 'list.txt');
    await writeFile(list, '# kept\ngit\ntheme-defaults  # the default themes\n\ngone\n');
    const run = await setup(tools, list);
    assert.match(run.stderr, /code-server has no built-in extension gone; left out/);
    const trimmed = path.join(tools, 'code-server-builtin-extensions');
    assert.deepEqual((await readdir(trimmed)).sort(), ['git', 'node_modules', 'theme-defaults']);
    assert.ok((await lstat(path.join(trimmed, 'git'))).isDirectory(), 'an extension is a directory: the scanner skips links');
    const installed = path.join(tools, 'node_modules/code-server/lib/vscode/extensions');
    assert.equal((await stat(path.join(trimmed, 'git/dist/extension.js'))).ino, (await stat(path.join(installed, 'git/dist/extension.js'))).ino);
    assert.equal(await readlink(path.join(trimmed, 'node_modules')), '../node_modules/code-server/lib/vscode/extensions/node_modules');
    assert.ok((await stat(path.join(trimmed, 'node_modules/typescript'))).isDirectory());
  }),
);

test('setup again changes nothing, and makes the set again when an extension was installed again or the list changed', () =>
  inScratch(async (dir) => {
    const tools = await fakeTools(dir, ['git', 'svc-yaml', 'theme-monokai']);
    const list = path.join(dir, 'list.txt');
    await writeFile(list, 'git\nsvc-yaml\n');
    await setup(tools, list);
    const trimmed = path.join(tools, 'code-server-builtin-extensions');
    const first = await readlink(trimmed);
    assert.match((await setup(tools, list)).stdout, /2 built-in extensions in/);
    assert.equal(await readlink(trimmed), first, 'nothing made again');

    await installExtension(tools, 'svc-yaml');
    await setup(tools, list);
    const installed = path.join(tools, 'node_modules/code-server/lib/vscode/extensions');
    assert.equal((await stat(path.join(trimmed, 'svc-yaml/package.json'))).ino, (await stat(path.join(installed, 'svc-yaml/package.json'))).ino);

    await writeFile(list, 'git\nsvc-yaml\ntheme-monokai\n');
    await setup(tools, list);
    assert.deepEqual((await readdir(trimmed)).sort(), ['git', 'node_modules', 'svc-yaml', 'theme-monokai']);
    const made = (await readdir(tools)).filter((name) => name.startsWith('.code-server-builtin-extensions'));
    assert.deepEqual(made, [await readlink(trimmed)], 'the sets made before are gone');
  }),
);

test('docs/runtime.md lists the built-in extensions editor/built-in-extensions.txt keeps', async () => {
  const docs = await readFile(path.join(root, 'docs/runtime.md'), 'utf8');
  const line = docs.split('\n').find((text) => text.startsWith('**Kept**'));
  assert.ok(line, 'docs/runtime.md has a line starting with **Kept**');
  const documented = [...line.matchAll(/`([\w.-]+)`/g)].map((match) => match[1]);
  assert.deepEqual(documented.sort(), namesOfList(await readFile(listFile, 'utf8')).sort());
});
