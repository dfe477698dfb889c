// code-server in one process, as the editor command of a pod runs it (bundled as code-server.mjs beside the agent,
// run by the Node of the tools directory). code-server's own entry starts a parent process that only forks a
// second Node with the same modules and hands it the parsed arguments; this does the parent's parsing itself and
// runs the server in the same process, as code-server's child would (CODE_SERVER_PARENT_PID set to itself, which
// also keeps VS Code's server-main from starting a server of its own). One Node start and one load of code-server's
// modules fewer on every wake (docs/runtime.md, "How long a wake takes"). It also writes what the editor's first
// start needs in the volume (what a shell did with mkdir and printf, one process fewer). A code-server whose
// modules do not have the expected shape is started through its own entry instead.
//
//   node code-server.mjs <code-server package dir> <code-server data dir> <code-server arguments...>
import { spawn } from 'node:child_process';
import http, { type Server } from 'node:http';
import module, { createRequire } from 'node:module';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { builtInExtensionsArgs } from './code-server-extensions.ts';
import { CODE_SERVER_BUNDLE_DIR, prepareCodeServerData } from './code-server-layout.ts';

/** Node's compile cache (22.1+; the project's own type definitions are Node 20's). */
const compileCache = module as unknown as {
  enableCompileCache?: (directory: string) => { directory?: string; message?: string };
  flushCompileCache?: () => void;
};

interface CodeServerModules {
  cli: {
    parse(argv: string[]): { config?: string };
    readConfigFile(file?: string): Promise<unknown>;
    setDefaults(cliArgs: unknown, configArgs: unknown): Promise<unknown>;
  };
  main: { runCodeServer(args: unknown): Promise<{ server?: Server; dispose(): Promise<void> }> };
  wrapper: { preventExit(): void; onDispose(listener: () => void): void };
}

/** The modules as they must be shaped, whichever file they came from. */
function shaped(modules: { cli?: Partial<CodeServerModules['cli']>; main?: Partial<CodeServerModules['main']>; wrapper?: Partial<CodeServerModules['wrapper']> }): CodeServerModules | undefined {
  const { cli, main, wrapper } = modules;
  const ok = typeof cli?.parse === 'function' && typeof cli.readConfigFile === 'function' && typeof cli.setDefaults === 'function'
    && typeof main?.runCodeServer === 'function' && typeof wrapper?.preventExit === 'function' && typeof wrapper.onDispose === 'function';
  return ok ? modules as CodeServerModules : undefined;
}

/**
 * code-server's Node side bundled into one file by scripts/bundle-code-server.mjs, beside code-server in the tools
 * directory (`<tools>/code-server-bundle/server.cjs`, code-server being `<tools>/node_modules/code-server`): one file
 * read and compiled instead of about 480 resolved, read and compiled one by one. Used only when its manifest names
 * the installed code-server's version and the bundle's size; otherwise undefined, and the caller loads code-server's
 * own modules (an install made before the bundle, a code-server upgraded without it, a bundle cut short).
 */
function loadBundle(packageDir: string, log: (line: string) => void): CodeServerModules | undefined {
  const bundleDir = path.join(packageDir, '..', '..', CODE_SERVER_BUNDLE_DIR);
  const refuse = (why: string) => {
    log(`the bundle in ${bundleDir} ${why}; loading code-server's own modules`);
    return undefined;
  };
  let manifest: { codeServerVersion?: string; bytes?: number };
  try {
    manifest = JSON.parse(readFileSync(path.join(bundleDir, 'server.json'), 'utf8'));
  } catch {
    return undefined; // no bundle: code-server's own modules, as before there was one
  }
  try {
    const version = (JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version;
    const bundle = path.join(bundleDir, 'server.cjs');
    if (manifest.codeServerVersion !== version) return refuse(`is of code-server ${manifest.codeServerVersion}, not ${version}`);
    if (manifest.bytes !== statSync(bundle).size) return refuse('has not the size its manifest says');
    const loaded = createRequire(bundle)(bundle) as { cli?: CodeServerModules['cli']; main?: CodeServerModules['main']; wrapper?: { wrapper?: CodeServerModules['wrapper'] } };
    const modules = shaped({ cli: loaded.cli, main: loaded.main, wrapper: loaded.wrapper?.wrapper });
    if (modules) log(`code-server's Node side from ${bundle}`);
    return modules ?? refuse('lacks the functions the launcher calls');
  } catch (error) {
    return refuse(`could not be loaded (${(error as Error).message})`);
  }
}

function loadModules(packageDir: string): CodeServerModules | undefined {
  const require = createRequire(path.join(packageDir, 'package.json'));
  const cli = require('./out/node/cli.js') as Partial<CodeServerModules['cli']>;
  const wrapper = (require('./out/node/wrapper.js') as { wrapper?: Partial<CodeServerModules['wrapper']> }).wrapper;
  const main = require('./out/node/main.js') as Partial<CodeServerModules['main']>;
  return shaped({ cli, main, wrapper });
}

/**
 * Node keeps the compile cache in memory and writes it only when the process exits normally, which a pod's editor
 * never does (a sleep kills the pod): without this, no wake ever found a cache. code-server loads VS Code's server
 * at the first request of its page, so once an answer to `/` has been sent the cache holds both, and is written
 * then (an answer cut short, a probe that gave up, waits for the next); a later start that found it writes nothing
 * new. A minute after the start it is written anyway, whatever was asked.
 */
function flushAfterFirstPage(server: Server, flush = () => compileCache.flushCompileCache?.()): void {
  let done = false;
  const flushOnce = () => {
    if (done) return;
    done = true;
    server.off('request', onRequest);
    clearTimeout(fallback);
    setImmediate(flush);
  };
  const onRequest = (request: { url?: string }, response: { once(event: 'finish', listener: () => void): unknown }) => {
    if (request.url === '/' || request.url?.startsWith('/?')) response.once('finish', flushOnce);
  };
  const fallback = setTimeout(flushOnce, 60_000).unref();
  server.on('request', onRequest);
}

/**
 * code-server loads VS Code's server at the first request of its page, and sits idle from its listening until the
 * agent's probe comes (the agent, starting itself at the same time, reads the line code-server printed, then
 * connects): asking for its own page at once starts that load without the wait. It is no early answer: the probe's
 * request still gets its answer only once VS Code's server is loaded, as before.
 */
function loadVsCodeNow(server: Server): void {
  const address = server.address();
  if (!address || typeof address === 'string') return;
  const host = address.family === 'IPv6' ? (address.address === '::' ? '::1' : address.address) : address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
  const request = http.get({ host, port: address.port, path: '/', agent: false }, (response) => response.resume());
  request.on('error', () => undefined); // the agent's probe finds out whatever failed
}

/** code-server's own entry as a child (its parent and its child): the way it always starts, one process more. */
function startThroughEntry(packageDir: string, argv: string[]): void {
  delete process.env.CODE_SERVER_PARENT_PID;
  const child = spawn(process.execPath, [path.join(packageDir, 'out/node/entry.js'), ...argv], { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function launch(packageDir: string, dataDir: string, argv: string[]): Promise<void> {
  const layout = prepareCodeServerData(dataDir);
  // V8's code for code-server's and VS Code's modules, kept in the volume from one start to the next (about a
  // tenth of the start's CPU); Node 22.1 and later, which the tools directory's Node is.
  const cache = compileCache.enableCompileCache?.(layout.compileCache);
  if (cache && !cache.directory) console.error(`code-server-launch: no compile cache in ${layout.compileCache}: ${cache.message ?? 'Node did not say why'}`);
  // Before code-server's modules load: its wrapper is then the child's, and VS Code's server-main starts no server.
  process.env.CODE_SERVER_PARENT_PID = String(process.pid);
  const modules = loadBundle(packageDir, (line) => console.error(`code-server-launch: ${line}`)) ?? loadModules(packageDir);
  if (!modules) {
    console.error('code-server-launch: code-server has not the expected modules; starting it through its entry');
    return startThroughEntry(packageDir, argv);
  }
  const cliArgs = modules.cli.parse(argv);
  const args = await modules.cli.setDefaults(cliArgs, await modules.cli.readConfigFile(cliArgs.config));
  modules.wrapper.preventExit();
  const server = await modules.main.runCodeServer(args);
  if (cache?.directory && server.server) flushAfterFirstPage(server.server);
  if (server.server) loadVsCodeNow(server.server);
  modules.wrapper.onDispose(() => {
    if (cache?.directory) compileCache.flushCompileCache?.();
    void server.dispose();
  });
}

const [packageDir, dataDir, ...argv] = process.argv.slice(2);
if (!packageDir || !dataDir) {
  console.error('usage: code-server.mjs <code-server package dir> <data dir> <code-server arguments...>');
  process.exit(2);
}
launch(packageDir, dataDir, [...builtInExtensionsArgs(packageDir, dataDir, argv), ...argv]).catch((error: unknown) => {
  console.error(`code-server-launch: ${(error as Error).stack ?? error}`);
  process.exit(1);
});
