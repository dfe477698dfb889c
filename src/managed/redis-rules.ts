// What a managed Redis instance is, as pure data and decisions: the spec it is started from, its configuration file
// (the password in it, never on a command line), whether its append-only file may be trusted at a start, the
// settings applied live or by a restart, and why a server did not start. redis-instance.ts carries them out.
import path from 'node:path';
import type { PodLimits } from '../runtime/local/cgroups.ts';

/** Where the sandbox sees the instance's directory and its data directory. */
export const INSTANCE_DIR_IN_SANDBOX = '/data/app';
export const DATA_IN_SANDBOX = `${INSTANCE_DIR_IN_SANDBOX}/data`;
/** The server's configuration: written by svc before each start, readable by the instance's UID only. */
export const CONFIG_FILE = 'redis.conf';
export const RDB_FILE = 'dump.rdb';
export const AOF_DIR = 'appendonlydir';
export const AOF_MANIFEST = 'appendonly.aof.manifest';
/** The save points of Redis's own default, written out so that a file without them still snapshots. */
const SAVE_POINTS = '3600 1 300 100 60 10000';

export const MAXMEMORY_POLICIES = ['noeviction', 'allkeys-lru', 'allkeys-lfu', 'volatile-lru', 'volatile-lfu', 'allkeys-random', 'volatile-random', 'volatile-ttl'] as const;

export interface RedisInstanceSpec {
  /** The plan's CPU and memory as the limits of the instance's cgroup (where the host has cgroups). */
  limits?: PodLimits;
  /** The managed service's number: its directory is <data dir>/managed/<id>. */
  id: number;
  /** The major version asked for; the installed redis-server must be it. */
  major: number;
  password: string;
  /** The UID the instance runs as (the workspace's); never root. */
  uid: number;
  /** An existing network namespace to run in; the host's otherwise. */
  netns?: string;
  address: string;
  port: number;
  /** maxmemory in MiB (the plan's memory); absent: no limit. */
  maxmemoryMiB?: number;
  /** maxclients (the plan's connections); absent: Redis's default, 10000. */
  maxclients?: number;
  maxmemoryPolicy?: string;
  /** An append-only file besides the RDB snapshots. */
  appendonly?: boolean;
  /** The number of databases; changing it restarts the server. */
  databases?: number;
}

export const instanceDir = (dataDir: string, id: number) => path.join(dataDir, 'managed', String(id));
export const instanceDataDir = (dataDir: string, id: number) => path.join(instanceDir(dataDir, id), 'data');

/** What is wrong with `spec`, in words a caller can pass on; empty when it may be used. */
export function specErrors(spec: RedisInstanceSpec, installedMajor: number | undefined): string[] {
  const errors: string[] = [];
  if (!Number.isInteger(spec.id) || spec.id <= 0) errors.push(`the instance id ${spec.id} is not a positive integer`);
  if (installedMajor === undefined) errors.push('redis-server is not installed (scripts/setup.sh installs it: apt-get install redis-server)');
  else if (installedMajor !== spec.major) errors.push(`Redis ${spec.major} is not installed (installed: Redis ${installedMajor})`);
  if (spec.password.length < 8 || /[\n\r\0]/.test(spec.password)) errors.push('the password must have at least 8 characters and no line break');
  if (!Number.isInteger(spec.uid) || spec.uid <= 0) errors.push(`the UID ${spec.uid} is not an unprivileged user`);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(spec.address)) errors.push(`the listen address "${spec.address}" is not an IPv4 address`);
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) errors.push(`the port ${spec.port} is not a TCP port`);
  const positive = (name: string, value: number | undefined, max: number) => {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > max)) errors.push(`${name} ${value} is not an integer from 1 to ${max}`);
  };
  positive('maxmemory (MiB)', spec.maxmemoryMiB, 1 << 20);
  positive('maxclients', spec.maxclients, 100_000);
  positive('databases', spec.databases, 1024);
  if (spec.maxmemoryPolicy !== undefined && !(MAXMEMORY_POLICIES as readonly string[]).includes(spec.maxmemoryPolicy)) {
    errors.push(`"${spec.maxmemoryPolicy}" is not a maxmemory-policy`);
  }
  return errors;
}

/** The major version in `redis-server --version`'s answer (`Redis server v=7.0.15 sha=...`). */
export function redisMajorOf(versionText: string): number | undefined {
  const match = /\bv=(\d+)\./.exec(versionText);
  return match ? Number(match[1]) : undefined;
}

/** A value of redis.conf with every byte escaped, so no password can break the file's quoting. */
export function configString(value: string): string {
  return `"${[...Buffer.from(value, 'utf8')].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')}"`;
}

/** The settings Redis applies with CONFIG SET while it runs (and that redis.conf repeats for the next start). */
export function liveSettings(spec: RedisInstanceSpec): Array<[name: string, value: string]> {
  return [
    ['maxmemory', spec.maxmemoryMiB === undefined ? '0' : `${spec.maxmemoryMiB}mb`],
    ['maxmemory-policy', spec.maxmemoryPolicy ?? 'noeviction'],
    ['maxclients', String(spec.maxclients ?? 10000)],
  ];
}

/** The settings that apply only at a start, as CONFIG GET answers them. */
export function restartSettings(spec: RedisInstanceSpec): Record<string, string> {
  return { databases: String(spec.databases ?? 16) };
}

/** Names of `wanted` restart settings that the running server (`running`, from CONFIG GET) does not have. */
export function settingsNeedingRestart(running: Record<string, string>, wanted: Record<string, string>): string[] {
  return Object.keys(wanted).filter((name) => running[name] !== wanted[name]);
}

/**
 * How to start with respect to the append-only file. Redis started with `appendonly yes` loads the AOF alone and
 * ignores the RDB, so an instance that has no AOF yet (new, switched on while paused, or restored from an RDB)
 * starts without it and switches it on live, which writes the AOF from the data loaded. An AOF left from a time
 * the file said `appendonly no` is out of date: it is removed before the start, never loaded later.
 */
export function appendonlyAtStart(wanted: boolean, aofExists: boolean): { appendonly: boolean; removeAof: boolean; switchOnLive: boolean } {
  if (wanted) return { appendonly: aofExists, removeAof: false, switchOnLive: !aofExists };
  return { appendonly: false, removeAof: aofExists, switchOnLive: false };
}

/**
 * redis.conf of the instance: TCP on its address only, no daemon, its log on standard output, its data in its
 * directory, a snapshot saved at every shutdown (SIGTERM included), and the password.
 */
export function redisConfig(spec: RedisInstanceSpec, appendonly: boolean, dir: string | null = DATA_IN_SANDBOX): string {
  const lines = [
    '# Written by svc before each start of this managed instance; changes here are lost.',
    `bind ${spec.address}`,
    `port ${spec.port}`,
    'protected-mode yes',
    'daemonize no',
    'supervised no',
    'logfile ""',
    'loglevel notice',
    'always-show-logo no',
    ...(dir === null ? [] : [`dir ${dir}`]), // null: given on the command line
    `dbfilename ${RDB_FILE}`,
    `save ${SAVE_POINTS}`,
    'shutdown-on-sigterm save',
    'shutdown-on-sigint save',
    `appendonly ${appendonly ? 'yes' : 'no'}`,
    `appenddirname ${AOF_DIR}`,
    // A dump (redis-cli --rdb) is a replica's SYNC: served at once, not after the default 5 s wait for others.
    'repl-diskless-sync-delay 0',
    `databases ${restartSettings(spec).databases}`,
    ...liveSettings(spec).map(([name, value]) => `${name} ${value}`),
    `requirepass ${configString(spec.password)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The shell text that runs the server as the sandbox's main process. */
export const serverScript = () => `exec redis-server ${INSTANCE_DIR_IN_SANDBOX}/${CONFIG_FILE}`;

/** The first bytes of every RDB file. */
export const isRdbHeader = (bytes: Buffer) => bytes.subarray(0, 5).toString('latin1') === 'REDIS';

const LOG_PREFIX = /^\d+:[XCSM] \d{1,2} \w{3} \d{4} [\d:.]+ [.\-*#] /;
const FAILURE = /Could not create server|Failed listening|Fatal error|FATAL|Unrecoverable|at line \d+|Bad directive|wrong number of arguments|Can't|Wrong signature|Short read|Bad file format|Permission denied|^bwrap:/;

/**
 * Why the server did not start, from its log: the last lines Redis (or bubblewrap) gives as the cause, else the
 * last line. A line that quotes the configuration file (`>>> '...'`) is never part of it: it may hold the password.
 */
export function redisFailureReason(log: string): string | undefined {
  const lines = log
    .split('\n')
    .map((line) => line.trim().replace(LOG_PREFIX, ''))
    .filter((line) => line && !line.startsWith('>>>'));
  const named = lines.filter((line) => FAILURE.test(line)).slice(-2);
  const chosen = named.length > 0 ? named : lines.slice(-1);
  return chosen.length > 0 ? chosen.map((line) => line.replace(/^\*+\s*|\s*\*+$/g, '')).join('; ') : undefined;
}
