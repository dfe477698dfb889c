// scripts/bundle-code-server.mjs on a code-server package made up for the test (the real one is checked by
// editor-code-server.test.ts when it is installed): one file beside it that needs neither its modules nor their
// packages, whose modules still see their own __dirname, and that is made once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../scripts/bundle-code-server.mjs', import.meta.url));

/** A tools directory with a code-server whose main module requires a package of the tools' node_modules and says where it is. */
async function fakeTools(tools: string): Promise<string> {
  const outNode = path.join(tools, 'node_modules/code-server/out/node');
  await mkdir(outNode, { recursive: true });
  await mkdir(path.join(tools, 'node_modules/greeting'), { recursive: true });
  await writeFile(path.join(tools, 'node_modules/code-server/package.json'), '{ "name": "code-server", "version": "1.2.3" }');
  await writeFile(path.join(tools, 'node_modules/greeting/package.json'), '{ "name": "greeting", "main": "index.js" }');
  await writeFile(path.join(tools, 'node_modules/greeting/index.js'), "module.exports = 'hello';");
  await writeFile(path.join(outNode, 'cli.js'), 'exports.parse = () => ({}); exports.readConfigFile = async () => ({}); exports.setDefaults = async () => ({});');
  await writeFile(path.join(outNode, 'wrapper.js'), 'exports.wrapper = { preventExit() {}, onDispose() {} };');
  await writeFile(path.join(outNode, 'main.js'), "exports.runCodeServer = async () => ({}); exports.where = () => ({ greeting: require('greeting'), dirname: __dirname, filename: __filename });");
  return outNode;
}

async function bundle(tools: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [script, tools]);
  return stdout;
}

test("code-server's Node side is bundled into one file beside it, whose modules keep their own __dirname, and only once", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-cs-bundle-'));
  try {
    const tools = path.join(dir, 'tools');
    const outNode = await fakeTools(tools);
    assert.match(await bundle(tools), /bundled code-server's Node side into .*code-server-bundle\/server\.cjs/);
    const manifest = JSON.parse(await readFile(path.join(tools, 'code-server-bundle/server.json'), 'utf8')) as { codeServerVersion: string };
    assert.equal(manifest.codeServerVersion, '1.2.3');

    // The tools directory moved (a pod sees it elsewhere), the package it required gone: the bundle has it in itself.
    const moved = path.join(dir, 'mounted-elsewhere');
    await promisify(execFile)('mv', [tools, moved]);
    await rm(path.join(moved, 'node_modules/greeting'), { recursive: true });
    const loaded = createRequire(import.meta.url)(path.join(moved, 'code-server-bundle/server.cjs')) as { main: { where(): Record<string, string> } };
    assert.deepEqual(loaded.main.where(), {
      greeting: 'hello',
      dirname: path.join(moved, path.relative(tools, outNode)),
      filename: path.join(moved, path.relative(tools, outNode), 'main.js'),
    });

    assert.match(await bundle(moved), /code-server's Node side is bundled in/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
