// What a managed NATS instance is, as pure data and decisions: the names and sizes it accepts, its configuration
// file (listen addresses, the user and password, JetStream limits from the plan), the command line of its server
// and the reason a start failed. nats-instance.ts carries them out.
import type { PodLimits } from '../runtime/local/cgroups.ts';

/** Debian's nats-server: the host's /usr is bound read-only in every sandbox. */
export const NATS_SERVER_BINARY = '/usr/sbin/nats-server';
export const NATS_CLIENT_PORT = 4222;
export const NATS_MONITORING_PORT = 8222;
/** Where the sandbox sees the instance's directory, its configuration file and its JetStream store. */
export const INSTANCE_DIR_IN_SANDBOX = '/data/app';
export const CONFIG_FILE = 'nats.conf';
/** nats-server keeps its streams under <store_dir>/jetstream. */
export const STORE_DIR = 'store';

export interface NatsInstanceSpec {
  /** The plan's CPU and memory as the limits of the instance's cgroup (where the host has cgroups). */
  limits?: PodLimits;
  /** The managed service's number: its directory is <data dir>/managed/<id>. */
  id: number;
  user: string;
  password: string;
  /** The UID the instance runs as (the workspace's); never root. */
  uid: number;
  /** An existing network namespace to run in (one linked to the service network); the host's otherwise. */
  netns?: string;
  /** The address its client and monitoring ports listen on, inside `netns` when there is one. */
  address: string;
  port: number;
  monitoringPort: number;
  /** JetStream persistence; its limits below apply only with it. */
  jetstream: boolean;
  /** JetStream file storage (max_file_store) and memory storage (max_memory_store), in bytes. */
  maxFileBytes: number;
  maxMemoryBytes: number;
  /** max_connections of the server. */
  maxConnections: number;
  /** max_payload of one message, in bytes. */
  maxPayload: number;
}

const MiB = 1024 * 1024;
export const DEFAULT_MAX_PAYLOAD = MiB;

// A user name that needs no quoting in a URL or the configuration.
const USER = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/;

/** What is wrong with `spec`, in words a caller can pass on; empty when it may be used. */
export function natsSpecErrors(spec: NatsInstanceSpec): string[] {
  const errors: string[] = [];
  const positive = (value: number) => Number.isSafeInteger(value) && value > 0;
  if (!positive(spec.id)) errors.push(`the instance id ${spec.id} is not a positive integer`);
  if (!USER.test(spec.user)) errors.push(`the user name "${spec.user}" is not a name of letters, digits, _ and - (at most 63)`);
  // The configuration file quotes the password; control characters cannot be written there.
  if (spec.password.length < 8 || /[\u0000-\u001f\u007f]/.test(spec.password)) errors.push('the password must have at least 8 characters and no control characters');
  if (!positive(spec.uid)) errors.push(`the UID ${spec.uid} is not an unprivileged user`);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(spec.address)) errors.push(`the listen address "${spec.address}" is not an IPv4 address`);
  for (const [name, port] of [['port', spec.port], ['monitoring port', spec.monitoringPort]] as const) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) errors.push(`the ${name} ${port} is not a TCP port`);
  }
  if (spec.port === spec.monitoringPort) errors.push('the client and monitoring ports must differ');
  if (!positive(spec.maxFileBytes) || !positive(spec.maxMemoryBytes)) errors.push('the JetStream limits must be positive sizes');
  if (!positive(spec.maxConnections)) errors.push(`max_connections ${spec.maxConnections} is not a positive integer`);
  if (!positive(spec.maxPayload)) errors.push(`max_payload ${spec.maxPayload} is not a positive integer`);
  return errors;
}

/** A double-quoted string of nats-server's configuration format: `\` and `"` escaped, `$` taken literally. */
export function quoted(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The configuration file: both listeners on the instance's address, its one user (the global account, where
 * JetStream is enabled), and the plan's limits. It holds the password: only the instance's UID may read it.
 */
export function natsConfig(spec: NatsInstanceSpec, storeDir = quoted(`${INSTANCE_DIR_IN_SANDBOX}/${STORE_DIR}`)): string {
  const lines = [
    `server_name: ${quoted(`ms-${spec.id}`)}`,
    `listen: ${quoted(`${spec.address}:${spec.port}`)}`,
    `http: ${quoted(`${spec.address}:${spec.monitoringPort}`)}`,
    `max_connections: ${spec.maxConnections}`,
    `max_payload: ${spec.maxPayload}`,
    `authorization {\n  user: ${quoted(spec.user)}\n  password: ${quoted(spec.password)}\n}`,
  ];
  if (spec.jetstream) {
    lines.push(
      `jetstream {\n  store_dir: ${storeDir}\n  max_file_store: ${spec.maxFileBytes}\n  max_memory_store: ${spec.maxMemoryBytes}\n}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The shell text that runs the server as the sandbox's main process. */
export const natsServerScript = () => `exec ${NATS_SERVER_BINARY} -c ${INSTANCE_DIR_IN_SANDBOX}/${CONFIG_FILE}`;

/** The plan's values (MiB, counts) as the spec's sizes: JetStream may keep half the memory in memory streams. */
export function natsLimits(resources: { storage?: number; memory?: number; connections?: number }): Pick<NatsInstanceSpec, 'maxFileBytes' | 'maxMemoryBytes' | 'maxConnections'> {
  return {
    maxFileBytes: (resources.storage ?? 1024) * MiB,
    maxMemoryBytes: Math.max(1, Math.floor((resources.memory ?? 256) / 2)) * MiB,
    maxConnections: resources.connections ?? 1000,
  };
}

/**
 * Why the server did not start, from its log: the fatal or error lines nats-server writes (or bubblewrap's),
 * without their pid and time prefix; else the last line.
 */
export function natsFailureReason(log: string): string | undefined {
  const lines = log.split('\n').map((line) => line.trim()).filter(Boolean);
  const named = lines.filter((line) => /\[(FTL|ERR)\]|^bwrap:|^nats-server:/.test(line)).slice(-2);
  const chosen = named.length > 0 ? named : lines.slice(-1);
  return chosen.length > 0 ? chosen.map((line) => line.replace(/^\[\d+\] \S+ \S+ \[(FTL|ERR)\] /, '')).join('; ') : undefined;
}

/** The major version of `nats-server --version` output (`nats-server: v2.9.10`). */
export function natsMajor(versionOutput: string): string | undefined {
  return /\bv?(\d+)\.\d+\.\d+/.exec(versionOutput)?.[1];
}
