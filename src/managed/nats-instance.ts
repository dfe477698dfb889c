// The process of a managed NATS instance on the local runtime: Debian's nats-server with JetStream in a bubblewrap
// sandbox like a pod (sandbox.ts) that sees only its own directory (and the host's /usr and /etc), run as the
// workspace's UID in the network namespace the caller gives, detached and recorded (instance-process.ts). Layout
// under <data dir>/managed/<id>/: nats.conf (the instance's UID, 0600: it holds the password), store/ (JetStream,
// the instance's UID), nats.log and process.json (root's). Ready means the monitoring endpoint's /healthz answers
// and a client is admitted with the instance's user and password.
import { chmod, chown, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCommand, isSameProcess, pollUntil } from '../runtime/local/processes.ts';
import { sandboxCommand } from '../runtime/local/sandbox.ts';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { instanceCgroup, isInstanceProcessRunning, managedInstanceDir, readInstanceProcess, startInstanceProcess, stopInstanceProcess } from './instance-process.ts';
import { checkNatsClient, type NatsReadiness } from './nats-client-check.ts';
import { CONFIG_FILE, NATS_SERVER_BINARY, STORE_DIR, natsConfig, natsFailureReason, natsMajor, natsServerScript, natsSpecErrors, type NatsInstanceSpec } from './nats-rules.ts';
import { podSeccompFile } from '../runtime/local/seccomp.ts';

export class NatsInstanceFailure extends ManagedInstanceFailure {}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;
const logFile = (dir: string) => path.join(dir, 'nats.log');
const isRoot = () => process.getuid?.() === 0;

let installedMajor: Promise<string | undefined> | undefined;

/** The major version of the installed nats-server (scripts/apt-packages.sh), undefined when there is none. */
export function installedNatsMajor(): Promise<string | undefined> {
  installedMajor ??= runCommand(NATS_SERVER_BINARY, ['--version'], { timeoutMs: 10_000 }).then(
    (result) => (result.code === 0 ? natsMajor(result.stdout + result.stderr) : undefined),
    () => undefined,
  );
  return installedMajor;
}

/**
 * Creates the instance (its store and configuration) or starts it as it is, and answers once it is ready. A
 * running instance whose configuration changed (limits, password) is restarted to apply it; an unchanged one is
 * left alone. `version` is the major the instance was created with: the installed server must be that major.
 */
export async function ensureNatsInstance(host: ManagedHost, spec: NatsInstanceSpec, version: string): Promise<{ restarted: boolean }> {
  const errors = natsSpecErrors(spec);
  if (errors.length > 0) throw new NatsInstanceFailure(errors.join('; '));
  const installed = await installedNatsMajor();
  if (installed !== version) {
    throw new NatsInstanceFailure(installed ? `NATS ${version} is not installed (nats-server ${installed} is)` : `nats-server is not installed at ${NATS_SERVER_BINARY}`);
  }
  const dir = managedInstanceDir(host.dataDir, spec.id);
  const config = natsConfig(spec);
  const configPath = path.join(dir, CONFIG_FILE);
  const running = await isInstanceProcessRunning(await readInstanceProcess(dir));
  const changed = (await readFile(configPath, 'utf8').catch(() => undefined)) !== config;
  if (running && !changed) return { restarted: false };
  if (running) await stopNatsInstance(host, spec.id);
  await prepareDirectory(dir, spec, config);
  await startNatsInstance(host, spec);
  return { restarted: running };
}

async function prepareDirectory(dir: string, spec: NatsInstanceSpec, config: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chmod(dir, 0o755);
  const store = path.join(dir, STORE_DIR);
  await mkdir(store, { recursive: true, mode: 0o700 });
  const configPath = path.join(dir, CONFIG_FILE);
  await writeFile(`${configPath}.partial`, config, { mode: 0o600 });
  if (isRoot()) {
    await chown(store, spec.uid, 0);
    await chown(`${configPath}.partial`, spec.uid, 0);
  }
  await rename(`${configPath}.partial`, configPath);
}

/** Whether the instance's server process runs. */
export const isNatsInstanceRunning = (host: ManagedHost, id: number) => readInstanceProcess(managedInstanceDir(host.dataDir, id)).then(isInstanceProcessRunning);

/**
 * Starts the server of a prepared instance and answers once it is ready. A server that exits while starting,
 * refuses the instance's own user, or is not ready within half a minute ends in a NatsInstanceFailure naming
 * the reason; nothing of it is left running.
 */
async function startNatsInstance(host: ManagedHost, spec: NatsInstanceSpec): Promise<void> {
  const dir = managedInstanceDir(host.dataDir, spec.id);
  const command = sandboxCommand({
    seccomp: podSeccompFile(host.dataDir),
    uid: spec.uid,
    switchUser: isRoot(),
    netns: spec.netns,
    isolateNetwork: false,
    hostname: `ms-${spec.id}`,
    volumeDir: dir,
    readOnlyBinds: [],
    env: { TZ: 'UTC' },
    infoFd: 3,
    dieWithParent: false,
    script: natsServerScript(),
  });
  const place = { netns: spec.netns, address: spec.address, port: spec.port };
  const record = await startInstanceProcess(dir, logFile(dir), command, place, { cgroup: instanceCgroup(host, spec.id), limits: spec.limits }).catch((error: Error) => {
    throw new NatsInstanceFailure(`the sandbox of NATS instance ${spec.id} did not start: ${error.message}`);
  });
  let exited = false;
  let last: NatsReadiness = { ready: false, reason: 'none yet' };
  const done = await pollUntil(async () => {
    exited = !(await isSameProcess(record.pid, record.startTime));
    if (exited) return true;
    last = await checkNatsReady(spec, 1000);
    return last.ready || last.refused === true;
  }, START_TIMEOUT_MS, 50);
  if (done && last.ready && !exited) {
    host.log(`managed NATS instance ${spec.id} accepts connections at ${spec.address}:${spec.port}`);
    return;
  }
  await stopNatsInstance(host, spec.id);
  const log = await readFile(logFile(dir), 'utf8').catch(() => '');
  const why = exited
    ? natsFailureReason(log) ?? 'the server exited'
    : !last.ready && last.refused
      ? `it refused the instance's user: ${last.reason}`
      : `it was not ready within ${START_TIMEOUT_MS / 1000} s (last answer: ${last.ready ? 'ready' : last.reason})`;
  throw new NatsInstanceFailure(`NATS instance ${spec.id} did not start: ${why}`);
}

/** Pauses the instance: nats-server shuts down cleanly on SIGINT (JetStream flushed); the data stays. Idempotent. */
export async function stopNatsInstance(host: ManagedHost, id: number): Promise<void> {
  const clean = await stopInstanceProcess(managedInstanceDir(host.dataDir, id), id, 'SIGINT', STOP_TIMEOUT_MS, Infinity, instanceCgroup(host, id));
  if (!clean) host.log(`managed NATS instance ${id} did not shut down within ${STOP_TIMEOUT_MS / 1000} s; it was killed`);
}

/** Deletes the instance: its process, then its directory with the streams. Idempotent. */
export async function deleteNatsInstance(host: ManagedHost, id: number): Promise<void> {
  await stopNatsInstance(host, id);
  await rm(managedInstanceDir(host.dataDir, id), { recursive: true, force: true });
  host.log(`managed NATS instance ${id} deleted with its data`);
}

/** The monitoring endpoint's /healthz (JetStream included) answers ok, then a client is admitted as the user. */
export async function checkNatsReady(spec: Pick<NatsInstanceSpec, 'address' | 'port' | 'monitoringPort' | 'user' | 'password'>, timeoutMs = 2000): Promise<NatsReadiness> {
  const health = await fetch(`http://${spec.address}:${spec.monitoringPort}/healthz`, { signal: AbortSignal.timeout(timeoutMs) }).then(
    async (answer) => (answer.ok ? undefined : `/healthz answered ${answer.status}: ${(await answer.text()).trim()}`),
    (error: Error) => `/healthz did not answer: ${(error.cause as Error | undefined)?.message ?? error.message}`,
  );
  if (health) return { ready: false, reason: health };
  return checkNatsClient(spec, timeoutMs);
}
