// npm packages of svc's own node_modules as files of a test repository (`node_modules/<name>/...`), so that a pod's
// `node` can require a well-kept client library without reaching a registry: each package's package.json and its
// JavaScript, none of the type declarations, source maps or documents; with the packages they depend on, as npm
// installed them (hoisted to the top of node_modules).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

const NODE_MODULES = path.resolve(import.meta.dirname, '../../node_modules');
const kept = (name: string) => name === 'package.json' || /\.(c|m)?js$/.test(name);

/** The files of `packages` (e.g. `@nats-io/transport-node`) and their dependencies, keyed by their path in a repository. */
export async function nodePackageFiles(packages: readonly string[]): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const wanted = [...packages];
  const seen = new Set<string>();
  for (let name = wanted.shift(); name !== undefined; name = wanted.shift()) {
    if (seen.has(name)) continue;
    seen.add(name);
    const dir = path.join(NODE_MODULES, name);
    const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    wanted.push(...Object.keys(manifest.dependencies ?? {}));
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      if (!entry.isFile() || !kept(entry.name) || path.relative(dir, file).split(path.sep).includes('node_modules')) continue;
      files[path.join('node_modules', name, path.relative(dir, file))] = await readFile(file, 'utf8');
    }
  }
  return files;
}
