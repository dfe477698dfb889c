// The prebuilt CLI: esbuild bundles src/cli/main.ts into dist/cli, one chunk per command group loaded when that
// command runs, so the installed `svc` runs plain JavaScript and never transpiles at run time. `svc server` and
// `svc admin` stay outside the bundle: they need the whole source tree (migrations, the console, the pods' agent)
// and run the sources through tsx (bin/svc.js registers it for them).
// Idempotent: the build is skipped while dist/cli is newer than every file it was made from (dist/cli/inputs.json).
// Called by scripts/setup.sh (`npm run up`, `npm test`), by bin/svc.js when a source changed since, and by
// test/helpers/process.ts. By hand: `node scripts/build-cli.mjs [--force]`. Plain JavaScript, so Node runs it as is.
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const cliOutDir = path.join(root, 'dist', 'cli');
const entry = path.join(cliOutDir, 'main.js');
const manifest = path.join(cliOutDir, 'inputs.json');
/** Besides the sources: this script (how to build) and the lock file (esbuild's version, the external packages). */
const alwaysInputs = ['scripts/build-cli.mjs', 'package-lock.json'];

/** Whether dist/cli was built after the last change of every file it was built from; a few stat calls. */
export function cliBuildIsFresh() {
  let built;
  let inputs;
  try {
    built = statSync(manifest).mtimeMs;
    inputs = JSON.parse(readFileSync(manifest, 'utf8')).inputs;
  } catch {
    return false;
  }
  try {
    return inputs.every((input) => statSync(path.join(root, input)).mtimeMs <= built);
  } catch {
    return false; // an input was removed or renamed
  }
}

/** Imports of the server-side commands stay imports of their sources (relative to dist/cli, like src/cli). */
const serverSideCommands = {
  name: 'server-side-commands',
  setup(build) {
    build.onResolve({ filter: /^\.\/(server|admin)\.ts$/ }, (args) =>
      args.importer === path.join(root, 'src/cli/main.ts') ? { path: `../../src/cli/${args.path.slice(2)}`, external: true } : undefined,
    );
  },
};

/** Writes a file under another name first, so that a `svc` starting meanwhile never reads half of it. */
function writeAtomically(file, contents) {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/** Builds dist/cli (always) and returns the entry's file URL. */
export async function buildCli() {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['src/cli/main.ts'],
    outdir: cliOutDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    plugins: [serverSideCommands],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  mkdirSync(cliOutDir, { recursive: true });
  // Chunks first, the entry that imports them after, the manifest (the stamp of freshness) last.
  const files = [...result.outputFiles].sort((a, b) => Number(a.path === entry) - Number(b.path === entry));
  for (const file of files) writeAtomically(file.path, file.contents);
  const inputs = [...Object.keys(result.metafile.inputs), ...alwaysInputs];
  writeAtomically(manifest, `${JSON.stringify({ inputs }, null, 1)}\n`);
  // Chunks of earlier builds (their names carry a hash of their contents) go.
  const current = new Set([...files.map((file) => path.basename(file.path)), 'inputs.json']);
  for (const name of readdirSync(cliOutDir)) {
    if (!current.has(name) && !name.endsWith('.tmp')) rmSync(path.join(cliOutDir, name), { force: true });
  }
  return pathToFileURL(entry).href;
}

/** The entry's file URL, built first when missing or older than a source. */
export async function ensureCliBuilt() {
  return cliBuildIsFresh() ? pathToFileURL(entry).href : buildCli();
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const force = process.argv.includes('--force');
  if (force || !cliBuildIsFresh()) {
    await buildCli();
    console.log('cli: built dist/cli');
  }
}
