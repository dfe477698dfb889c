// The agent as pods run it: src/agent bundled by esbuild into plain JavaScript (agent and built-in editor, with
// chunks the agent loads when it needs them: main.mjs starts the editor before it loads the rest, see main.ts)
// under <data dir>/runtime/agent-<hash>. Pods bind only that directory, so they need neither the project's sources
// nor its node_modules, nor a path to them the workspace UID could walk (a checkout may sit in a private directory).
// Bundles are named by their content and never replaced: a pod that outlived a server upgrade keeps its own.
// node-pty (the terminals of shells, a native addon) cannot be bundled: its JavaScript and its compiled addon are
// copied beside the bundle under node_modules/node-pty, where the agent's import finds them.
import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

export const AGENT_MAIN = 'main.mjs';
export const EDITOR_MAIN = 'editor.mjs';
/** code-server's launcher (src/agent/code-server-launch.ts), run by the tools directory's Node as the editor command. */
export const AGENT_CODE_SERVER = 'code-server.mjs';

const staged = new Map<string, Promise<string>>();

async function bundle(projectDir: string, dataDir: string): Promise<string> {
  const runtimeDir = path.join(dataDir, 'runtime');
  const partial = path.join(runtimeDir, `agent.${process.pid}.partial`);
  await mkdir(runtimeDir, { recursive: true, mode: 0o711 });
  await chmod(runtimeDir, 0o711);
  await rm(partial, { recursive: true, force: true });
  await build({
    entryPoints: {
      main: path.join(projectDir, 'src/agent/main.ts'),
      editor: path.join(projectDir, 'src/agent/editor.ts'),
      'code-server': path.join(projectDir, 'src/agent/code-server-launch.ts'),
    },
    outdir: partial,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
    // ssh2's optional native parts (its crypto binding, cpu-features) stay out: it runs on Node's crypto without them
    external: ['node-pty', 'cpu-features', '*.node'],
    // ssh2 (CommonJS) reads __dirname when it loads; an ES module has import.meta.dirname (Node 20.11) instead
    define: { __dirname: 'import.meta.dirname' },
    // `ws` is CommonJS and requires Node's modules: give the ES module bundle a `require`.
    banner: { js: "import { createRequire as svcCreateRequire } from 'node:module'; const require = svcCreateRequire(import.meta.url);" },
  });
  const pty = await copyNodePty(partial);
  await chmod(partial, 0o755);
  const hash = createHash('sha256');
  const modules = (await readdir(partial)).filter((file) => file.endsWith('.mjs')).sort();
  for (const file of [...modules, ...pty]) {
    if (!file.includes('/')) await chmod(path.join(partial, file), 0o644);
    hash.update(await readFile(path.join(partial, file)));
  }
  const target = path.join(runtimeDir, `agent-${hash.digest('hex').slice(0, 16)}`);
  if (await stat(target).then(() => true, () => false)) await rm(partial, { recursive: true, force: true });
  else await rename(partial, target);
  return target;
}

/** node-pty's package.json, lib/*.js and compiled addon (svc's own) under <dir>/node_modules/node-pty; their paths within dir. */
async function copyNodePty(dir: string): Promise<string[]> {
  const source = path.dirname(createRequire(import.meta.url).resolve('node-pty/package.json'));
  const target = path.join(dir, 'node_modules', 'node-pty');
  const wanted = (file: string) => {
    const relative = path.relative(source, file);
    if (relative === '' || relative === 'package.json' || relative === 'lib' || relative === 'build' || relative === 'build/Release') return true;
    if (relative.startsWith('lib/')) return !relative.endsWith('.map') && !relative.includes('.test.');
    return relative === 'build/Release/pty.node';
  };
  await cp(source, target, { recursive: true, filter: wanted, mode: 0 });
  await chmod(path.join(dir, 'node_modules'), 0o755);
  return ['node_modules/node-pty/package.json', 'node_modules/node-pty/build/Release/pty.node', 'node_modules/node-pty/lib/index.js', 'node_modules/node-pty/lib/unixTerminal.js'];
}

/** Builds the agent bundle once per project, data directory and process; later calls share the result. */
export function stageAgentBundle(projectDir: string, dataDir: string): Promise<string> {
  const key = `${projectDir}\n${dataDir}`;
  let done = staged.get(key);
  if (!done) {
    done = bundle(projectDir, dataDir);
    done.catch(() => staged.delete(key));
    staged.set(key, done);
  }
  return done;
}
