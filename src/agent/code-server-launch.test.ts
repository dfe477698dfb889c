import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const launcher = fileURLToPath(new URL('./code-server-launch.ts', import.meta.url));

/** A code-server package, in `dir` as in a tools directory, whose modules are as given; its entry prints what it was started with. */
async function fakeCodeServer(dir: string, modules: Record<string, string>): Promise<string> {
  const packageDir = path.join(dir, 'node_modules/code-server');
  await mkdir(path.join(packageDir, 'out/node'), { recursive: true });
  await writeFile(path.join(packageDir, 'package.json'), '{ "name": "code-server", "version": "0.0.0" }');
  await writeFile(path.join(packageDir, 'out/node/entry.js'), "console.log('entry ' + JSON.stringify(process.argv.slice(2)) + ' parent ' + process.env.CODE_SERVER_PARENT_PID);");
  for (const [name, text] of Object.entries({ 'cli.js': '', 'wrapper.js': '', 'main.js': '', ...modules })) {
    await writeFile(path.join(packageDir, 'out/node', name), text);
  }
  return packageDir;
}

/** Runs `body` with a fresh scratch directory, removed afterwards whatever happens. */
async function inScratch(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-launch-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function launch(packageDir: string, dataDir: string, args: string[]): Promise<string> {
  return (await launchWithLog(packageDir, dataDir, args)).stdout;
}

async function launchWithLog(packageDir: string, dataDir: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', launcher, packageDir, dataDir, ...args], { env: { ...process.env, CODE_SERVER_PARENT_PID: '' } });
}

/** Modules whose server prints `<source> server` and ends the process. */
function modulesSaying(source: string): Record<string, string> {
  return {
    'cli.js': 'exports.parse = (argv) => ({ argv }); exports.readConfigFile = async () => ({}); exports.setDefaults = async (cli) => cli;',
    'wrapper.js': 'exports.wrapper = { preventExit() {}, onDispose() {} };',
    'main.js': `exports.runCodeServer = async () => { console.log('${source} server'); setImmediate(() => process.exit(0)); return { dispose: async () => {} }; };`,
  };
}

/** A bundle in the tools directory `dir` (as scripts/bundle-code-server.mjs writes it), with the manifest given. */
async function fakeBundle(dir: string, manifest: (bytes: number) => object): Promise<void> {
  const bundleDir = path.join(dir, 'code-server-bundle');
  const modules = modulesSaying('bundle');
  const text = `const cli = {}; (function (exports) { ${modules['cli.js']} })(cli);
exports.cli = cli; exports.wrapper = {}; (function (exports) { ${modules['wrapper.js']} })(exports.wrapper);
exports.main = {}; (function (exports) { ${modules['main.js']} })(exports.main);`;
  await mkdir(bundleDir, { recursive: true });
  await writeFile(path.join(bundleDir, 'server.cjs'), text);
  await writeFile(path.join(bundleDir, 'server.json'), JSON.stringify(manifest(Buffer.byteLength(text))));
}

test("the launcher runs code-server's server in its own process, with the arguments code-server's parser made", () =>
  inScratch(async (dir) => {
    const packageDir = await fakeCodeServer(dir, {
      'cli.js': "exports.parse = (argv) => ({ argv }); exports.readConfigFile = async () => ({ config: true }); exports.setDefaults = async (cli, config) => ({ ...cli, ...config });",
      'wrapper.js': 'exports.wrapper = { preventExit() {}, onDispose() {} };',
      'main.js': "exports.runCodeServer = async (args) => { console.log('server ' + JSON.stringify(args) + ' parent ' + (process.env.CODE_SERVER_PARENT_PID === String(process.pid))); setImmediate(() => process.exit(0)); return { dispose: async () => {} }; };",
    });
    const out = await launch(packageDir, path.join(dir, 'app/.svc/code-server'), ['--auth', 'none']);
    assert.equal(out.trim(), 'server {"argv":["--auth","none"],"config":true} parent true');
  }),
);

test('a code-server whose modules are not as expected is started through its own entry', () =>
  inScratch(async (dir) => {
    const packageDir = await fakeCodeServer(dir, {});
    const out = await launch(packageDir, path.join(dir, 'app/.svc/code-server'), ['--auth', 'none', '/data/app']);
    assert.equal(out.trim(), 'entry ["--auth","none","/data/app"] parent undefined');
  }),
);

test("once code-server listens, the launcher asks for its page itself, so VS Code's server loads without waiting for the probe", () =>
  inScratch(async (dir) => {
    const packageDir = await fakeCodeServer(dir, {
      'cli.js': 'exports.parse = (argv) => ({ argv }); exports.readConfigFile = async () => ({}); exports.setDefaults = async (cli) => cli;',
      'wrapper.js': 'exports.wrapper = { preventExit() {}, onDispose() {} };',
      // Its server says which request came first, then ends the process; without one it would wait for ever.
      'main.js': `exports.runCodeServer = async () => {
        const server = require('node:http').createServer((request, response) => { console.log('request ' + request.method + ' ' + request.url); response.end(); setImmediate(() => process.exit(0)); });
        await new Promise((resolve) => server.listen(0, '0.0.0.0', resolve));
        return { server, dispose: async () => {} };
      };`,
    });
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', launcher, packageDir, path.join(dir, 'app/.svc/code-server'), '--auth', 'none'], {
      env: { ...process.env, CODE_SERVER_PARENT_PID: '' },
      timeout: 60_000,
    });
    assert.equal(stdout.trim(), 'request GET /');
  }),
);

test("a bundle of code-server's Node side beside it, of its version, is loaded instead of its modules", () =>
  inScratch(async (dir) => {
    const packageDir = await fakeCodeServer(dir, modulesSaying('modules'));
    await fakeBundle(dir, (bytes) => ({ codeServerVersion: '0.0.0', bytes }));
    const { stdout, stderr } = await launchWithLog(packageDir, path.join(dir, 'app/.svc/code-server'), ['--auth', 'none']);
    assert.equal(stdout.trim(), 'bundle server');
    assert.equal(stderr.trim(), `code-server-launch: code-server's Node side from ${path.join(dir, 'code-server-bundle/server.cjs')}`);
  }),
);

test("a bundle of another code-server version, or not of its manifest's size, is not used: code-server's own modules are, and the log says why", () =>
  inScratch(async (dir) => {
    const packageDir = await fakeCodeServer(dir, modulesSaying('modules'));
    await fakeBundle(dir, (bytes) => ({ codeServerVersion: '9.9.9', bytes }));
    const otherVersion = await launchWithLog(packageDir, path.join(dir, 'app/.svc/code-server'), ['--auth', 'none']);
    assert.equal(otherVersion.stdout.trim(), 'modules server');
    assert.match(otherVersion.stderr, /is of code-server 9\.9\.9, not 0\.0\.0; loading code-server's own modules/);

    await fakeBundle(dir, (bytes) => ({ codeServerVersion: '0.0.0', bytes: bytes + 1 }));
    const cutShort = await launchWithLog(packageDir, path.join(dir, 'app/.svc/code-server'), ['--auth', 'none']);
    assert.equal(cutShort.stdout.trim(), 'modules server');
    assert.match(cutShort.stderr, /has not the size its manifest says/);
  }),
);
