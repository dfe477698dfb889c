// The process of a managed Redis instance on the local runtime: Debian's redis-server in a bubblewrap sandbox like a
// pod (sandbox.ts) that sees only its own directory and the host's /usr and /etc, run as the workspace's UID, in the
// network namespace the caller gives, detached and recorded (instance-process.ts) so it outlives a restart of the svc
// server. Layout under <data dir>/managed/<id>/: data/ (the RDB and the append-only files, the instance's UID),
// redis.conf (the instance's UID, 0600: it holds the password), redis.log and process.json (root's, 0600).
import { access, chmod, chown, copyFile, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { minimalEnv, pollUntil, runCommand } from '../runtime/local/processes.ts';
import { podSeccompFile } from '../runtime/local/seccomp.ts';
import { sandboxCommand } from '../runtime/local/sandbox.ts';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { instanceCgroup, isInstanceProcessRunning, readInstanceProcess, startInstanceProcess, stopInstanceProcess } from './instance-process.ts';
import { ErrorReply, redisCommand, redisCommands, replyCode, type RedisTarget } from './redis-client.ts';
import {
  AOF_DIR,
  AOF_MANIFEST,
  appendonlyAtStart,
  CONFIG_FILE,
  instanceDataDir,
  instanceDir,
  isRdbHeader,
  liveSettings,
  RDB_FILE,
  redisConfig,
  redisFailureReason,
  redisMajorOf,
  restartSettings,
  serverScript,
  settingsNeedingRestart,
  specErrors,
  type RedisInstanceSpec,
} from './redis-rules.ts';

/** A start, stop, settings change, dump or restore that did not succeed; `reason` is what Redis or the sandbox said. */
export class RedisInstanceFailure extends ManagedInstanceFailure {}

const START_TIMEOUT_MS = 60_000;
/** A shutdown writes the snapshot first: a large dataset takes a while. */
const STOP_TIMEOUT_MS = 120_000;
const DUMP_TIMEOUT_MS = 30 * 60_000;
const AOF_TIMEOUT_MS = 10 * 60_000;
const logFile = (host: ManagedHost, id: number) => path.join(instanceDir(host.dataDir, id), 'redis.log');
const isRoot = () => process.getuid?.() === 0;
const exists = (file: string) => access(file).then(() => true, () => false);

/** The major version of the host's redis-server (Debian's package), undefined when it is not installed. */
export async function installedRedisMajor(): Promise<number | undefined> {
  const result = await runCommand('redis-server', ['--version']).catch(() => undefined);
  return result?.code === 0 ? redisMajorOf(result.stdout) : undefined;
}

async function checkSpec(spec: RedisInstanceSpec): Promise<void> {
  const errors = specErrors(spec, await installedRedisMajor());
  if (errors.length > 0) throw new RedisInstanceFailure(errors.join('; '));
}

/** The instance's directory (root's, the sandbox's /data/app) and its data directory (the instance's UID's). */
async function prepareDirectory(host: ManagedHost, spec: RedisInstanceSpec): Promise<void> {
  const dir = instanceDir(host.dataDir, spec.id);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chmod(dir, 0o755);
  const data = instanceDataDir(host.dataDir, spec.id);
  await mkdir(data, { recursive: true, mode: 0o700 });
  if (isRoot()) await chown(data, spec.uid, 0);
}

/** Whether the instance's server process runs. */
export async function isRedisInstanceRunning(host: ManagedHost, id: number): Promise<boolean> {
  return isInstanceProcessRunning(await readInstanceProcess(instanceDir(host.dataDir, id)));
}

/**
 * Starts the instance when it does not run (creating its directory the first time), else brings the running
 * server to the spec: live settings by CONFIG SET, a restart for the others and for a changed password. Answers
 * the settings that restarted it. Idempotent: the lifecycle calls it on every Sync.
 */
export async function ensureRedisInstance(host: ManagedHost, spec: RedisInstanceSpec): Promise<{ restarted: string[] }> {
  await checkSpec(spec);
  await prepareDirectory(host, spec);
  if (!(await isRedisInstanceRunning(host, spec.id))) {
    await startRedisInstance(host, spec);
    return { restarted: [] };
  }
  const restarted = await settingsThatNeedRestart(spec);
  if (restarted.length > 0) {
    host.log(`managed Redis instance ${spec.id} restarts to apply ${restarted.join(', ')}`);
    await stopRedisInstance(host, spec.id);
    await startRedisInstance(host, spec);
    return { restarted };
  }
  await applyLiveSettings(host, spec);
  return { restarted: [] };
}

async function settingsThatNeedRestart(spec: RedisInstanceSpec): Promise<string[]> {
  const wanted = restartSettings(spec);
  try {
    const replies = await redisCommands(spec, Object.keys(wanted).map((name) => ['CONFIG', 'GET', name]));
    const running = Object.fromEntries(replies.flatMap((reply) => (Array.isArray(reply) ? [[String(reply[0]), String(reply[1])]] : [])));
    return settingsNeedingRestart(running, wanted);
  } catch (error) {
    // The password is redis.conf's: a new one in the vault takes a restart (CONFIG SET would need the old one).
    if (replyCode(error) === 'WRONGPASS') return ['requirepass'];
    throw new RedisInstanceFailure(`Redis instance ${spec.id} does not answer: ${(error as Error).message}`);
  }
}

/** CONFIG SET of the live settings, and the append-only file switched on or off as the spec says. */
async function applyLiveSettings(host: ManagedHost, spec: RedisInstanceSpec): Promise<void> {
  await configSet(spec, ['CONFIG', 'SET', ...liveSettings(spec).flat()]);
  const current = await redisCommand(spec, ['CONFIG', 'GET', 'appendonly']);
  const running = Array.isArray(current) && current[1] === 'yes';
  const wanted = spec.appendonly ?? false;
  if (running === wanted) return;
  await configSet(spec, ['CONFIG', 'SET', 'appendonly', wanted ? 'yes' : 'no']);
  if (wanted) return waitForAof(spec);
  // Switched off, the AOF stops following the data: removed now, so that no later start loads it.
  if (!wanted) await rm(path.join(instanceDataDir(host.dataDir, spec.id), AOF_DIR), { recursive: true, force: true });
}

async function configSet(spec: RedisInstanceSpec, command: string[]): Promise<void> {
  try {
    await redisCommand(spec, command);
  } catch (error) {
    throw new RedisInstanceFailure(`Redis instance ${spec.id} refused its settings: ${(error as Error).message}`);
  }
}

/** Waits until the AOF that switching it on started is written: until then it is not a copy of the data. */
export async function waitForAof(spec: RedisInstanceSpec): Promise<void> {
  let info = '';
  const written = await pollUntil(async () => {
    info = String(await redisCommand(spec, ['INFO', 'persistence']));
    return /^aof_rewrite_in_progress:0\r?$/m.test(info) && /^aof_rewrite_scheduled:0\r?$/m.test(info);
  }, AOF_TIMEOUT_MS, 50);
  const status = /^aof_last_bgrewrite_status:(\w+)/m.exec(info)?.[1];
  if (!written || status !== 'ok') {
    throw new RedisInstanceFailure(`Redis instance ${spec.id} did not write its append-only file${written ? ` (status ${status})` : ` within ${AOF_TIMEOUT_MS / 1000} s`}`);
  }
}

/**
 * Starts the server on the instance's data (creation, or resume after a pause) and answers once AUTH and PING
 * succeed; a running instance is left as it is. A server that exits while starting, or does not answer within a
 * minute, ends in a RedisInstanceFailure naming Redis's own reason; nothing of it is left running.
 */
export async function startRedisInstance(host: ManagedHost, spec: RedisInstanceSpec): Promise<void> {
  await checkSpec(spec);
  await prepareDirectory(host, spec);
  if (await isRedisInstanceRunning(host, spec.id)) return;
  const dir = instanceDir(host.dataDir, spec.id);
  const aofDir = path.join(instanceDataDir(host.dataDir, spec.id), AOF_DIR);
  const aof = appendonlyAtStart(spec.appendonly ?? false, await exists(path.join(aofDir, AOF_MANIFEST)));
  if (aof.removeAof) await rm(aofDir, { recursive: true, force: true });
  await writeConfig(host, spec, aof.appendonly);
  const command = sandboxCommand({
    seccomp: podSeccompFile(host.dataDir),
    uid: spec.uid,
    switchUser: isRoot(),
    netns: spec.netns,
    isolateNetwork: false,
    hostname: `ms-${spec.id}`,
    volumeDir: dir,
    readOnlyBinds: [],
    env: { LC_ALL: 'C', TZ: 'UTC' },
    infoFd: 3,
    dieWithParent: false,
    script: serverScript(),
  });
  const place = { netns: spec.netns, address: spec.address, port: spec.port };
  const record = await startInstanceProcess(dir, logFile(host, spec.id), command, place, { cgroup: instanceCgroup(host, spec.id), limits: spec.limits }).catch((error: Error) => {
    throw new RedisInstanceFailure(`the sandbox of Redis instance ${spec.id} did not start: ${error.message}`);
  });
  let exited = false;
  let lastAnswer: Readiness = { ready: false, reason: 'none' };
  await pollUntil(async () => {
    exited = !(await isInstanceProcessRunning(record));
    if (exited) return true;
    lastAnswer = await checkRedisReady(spec, 1000);
    return lastAnswer.ready || lastAnswer.refused === true;
  }, START_TIMEOUT_MS, 50);
  if (lastAnswer.ready && !exited) {
    if (aof.switchOnLive) {
      await configSet(spec, ['CONFIG', 'SET', 'appendonly', 'yes']);
      await waitForAof(spec);
    }
    host.log(`managed Redis instance ${spec.id} accepts connections at ${spec.address}:${spec.port}`);
    return;
  }
  await stopRedisInstance(host, spec.id);
  const log = await readFile(logFile(host, spec.id), 'utf8').catch(() => '');
  const why = exited
    ? redisFailureReason(log) ?? 'the server exited'
    : lastAnswer.refused
      ? `it refused the instance's password: ${lastAnswer.reason}`
      : `it did not answer within ${START_TIMEOUT_MS / 1000} s (last answer: ${lastAnswer.ready ? 'ready' : lastAnswer.reason})`;
  throw new RedisInstanceFailure(`Redis instance ${spec.id} did not start: ${why}`);
}

/** redis.conf, written anew before each start and readable by the instance's UID only: it holds the password. */
async function writeConfig(host: ManagedHost, spec: RedisInstanceSpec, appendonly: boolean): Promise<void> {
  const file = path.join(instanceDir(host.dataDir, spec.id), CONFIG_FILE);
  await rm(`${file}.partial`, { force: true });
  await writeFile(`${file}.partial`, redisConfig(spec, appendonly), { mode: 0o600, flag: 'wx' });
  if (isRoot()) await chown(`${file}.partial`, spec.uid, 0);
  await rename(`${file}.partial`, file);
}

/**
 * Pauses the instance: SIGTERM, on which Redis saves its snapshot and exits (redis.conf says `shutdown-on-sigterm
 * save`), then whatever is left of its sandbox is killed. The data stays. Idempotent.
 */
export async function stopRedisInstance(host: ManagedHost, id: number): Promise<void> {
  // Redis turns a shutdown down while it writes its first AOF (and says so in its log): the signal is sent again.
  const ended = await stopInstanceProcess(instanceDir(host.dataDir, id), id, 'SIGTERM', STOP_TIMEOUT_MS, 1000, instanceCgroup(host, id));
  if (!ended) host.log(`managed Redis instance ${id} did not shut down within ${STOP_TIMEOUT_MS / 1000} s; it was killed`);
}

/** Deletes the instance: its process, then its directory with the data. Idempotent. */
export async function deleteRedisInstance(host: ManagedHost, id: number): Promise<void> {
  await stopRedisInstance(host, id);
  await rm(instanceDir(host.dataDir, id), { recursive: true, force: true });
  host.log(`managed Redis instance ${id} deleted with its data`);
}

/** `refused`: the server runs and turned the password down. */
export type Readiness = { ready: true; refused?: undefined } | { ready: false; reason: string; refused?: boolean };

/** A real AUTH with the instance's password and PING, within `timeoutMs`. */
export async function checkRedisReady(target: RedisTarget, timeoutMs = 5000): Promise<Readiness> {
  try {
    const [pong] = await redisCommands(target, [['PING']], timeoutMs);
    if (pong === 'PONG') return { ready: true };
    return { ready: false, reason: pong instanceof ErrorReply ? pong.message : `PING answered ${JSON.stringify(pong)}` };
  } catch (error) {
    const refused = replyCode(error) === 'WRONGPASS';
    return { ready: false, reason: (error as Error).message, ...(refused && { refused }) };
  }
}

/** Writes an RDB snapshot of the running instance to `file` (redis-cli --rdb, as a replica's SYNC; the password by env). */
export async function dumpRedisInstance(host: ManagedHost, spec: RedisInstanceSpec, file: string): Promise<void> {
  if (!(await isRedisInstanceRunning(host, spec.id))) throw new RedisInstanceFailure(`Redis instance ${spec.id} is not running; it can be dumped once a Sync started it`);
  const args = ['-h', spec.address, '-p', String(spec.port), '--no-auth-warning', '--rdb', file];
  const result = await runCommand('redis-cli', args, { env: { ...minimalEnv(), REDISCLI_AUTH: spec.password }, timeoutMs: DUMP_TIMEOUT_MS });
  const header = await readHeader(file);
  if (result.code !== 0 || !header || !isRdbHeader(header)) {
    await rm(file, { force: true });
    const said = `${result.stdout}\n${result.stderr}`.split('\n').map((line) => line.trim()).filter(Boolean).at(-1);
    throw new RedisInstanceFailure(`the dump of Redis instance ${spec.id} failed: ${said ?? `exit code ${result.code}`}`);
  }
  host.log(`managed Redis instance ${spec.id} dumped to ${file}`);
}

async function readHeader(file: string): Promise<Buffer | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(5), 0, 5, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Replaces the instance's data with the RDB snapshot `file` and starts it on it. What it had is kept aside until the
 * snapshot loads, and put back (and started) when it does not; then the failure says Redis's reason.
 */
export async function restoreRedisInstance(host: ManagedHost, spec: RedisInstanceSpec, file: string): Promise<void> {
  const header = await readHeader(file);
  if (!header || !isRdbHeader(header)) throw new RedisInstanceFailure(`${path.basename(file)} is not a Redis RDB snapshot`);
  await checkSpec(spec);
  await prepareDirectory(host, spec);
  await stopRedisInstance(host, spec.id);
  const data = instanceDataDir(host.dataDir, spec.id);
  const aside = path.join(instanceDir(host.dataDir, spec.id), 'before-restore');
  await rm(aside, { recursive: true, force: true });
  await mkdir(aside, { mode: 0o700 });
  for (const name of [RDB_FILE, AOF_DIR]) await rename(path.join(data, name), path.join(aside, name)).catch(() => undefined);
  const target = path.join(data, RDB_FILE);
  await copyFile(file, target);
  await chmod(target, 0o600);
  if (isRoot()) await chown(target, spec.uid, 0);
  try {
    await startRedisInstance(host, spec); // no AOF now: it loads the snapshot and writes the AOF from it if asked to
  } catch (error) {
    await rm(target, { force: true });
    for (const name of [RDB_FILE, AOF_DIR]) await rename(path.join(aside, name), path.join(data, name)).catch(() => undefined);
    await rm(aside, { recursive: true, force: true });
    await startRedisInstance(host, spec).catch((again: Error) => host.log(`managed Redis instance ${spec.id} did not start again on its own data: ${again.message}`));
    throw new RedisInstanceFailure(`the snapshot could not be restored: ${(error as Error).message}`);
  }
  await rm(aside, { recursive: true, force: true });
  host.log(`managed Redis instance ${spec.id} restored from ${path.basename(file)}`);
}
