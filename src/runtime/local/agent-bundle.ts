// The agent as pods run it: src/agent bundled by esbuild into two plain JavaScript files (agent and built-in editor)
// under <data dir>/runtime/agent-<hash>. Pods bind only that directory, so they need neither the project's sources
// nor its node_modules, nor a path to them the workspace UID could walk (a checkout may sit in a private directory).
// Bundles are named by their content and never replaced: a pod that outlived a server upgrade keeps its own.
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

export const AGENT_MAIN = 'main.mjs';
export const EDITOR_MAIN = 'editor.mjs';

const staged = new Map<string, Promise<string>>();

async function bundle(projectDir: string, dataDir: string): Promise<string> {
  const runtimeDir = path.join(dataDir, 'runtime');
  const partial = path.join(runtimeDir, `agent.${process.pid}.partial`);
  await mkdir(runtimeDir, { recursive: true, mode: 0o711 });
  await chmod(runtimeDir, 0o711);
  await rm(partial, { recursive: true, force: true });
  await build({
    entryPoints: { main: path.join(projectDir, 'src/agent/main.ts'), editor: path.join(projectDir, 'src/agent/editor.ts') },
    outdir: partial,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
  await chmod(partial, 0o755);
  const hash = createHash('sha256');
  for (const file of [AGENT_MAIN, EDITOR_MAIN]) {
    await chmod(path.join(partial, file), 0o644);
    hash.update(await readFile(path.join(partial, file)));
  }
  const target = path.join(runtimeDir, `agent-${hash.digest('hex').slice(0, 16)}`);
  if (await stat(target).then(() => true, () => false)) await rm(partial, { recursive: true, force: true });
  else await rename(partial, target);
  return target;
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
