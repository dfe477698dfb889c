// Editor pods of the local driver: a bubblewrap sandbox started detached (its own session), whose main process is
// the agent. A record under <data dir>/pods/<id>.json (pid, start time, address, ports) lets a restarted server
// find the pod again and stop it completely. Every pod of a workspace binds its hosts file as /etc/hosts; as root the
// editor pod also joins the workspace's service network (replica-driver.ts, service-network.ts). Its root is the
// machine's system, or the workspace's base image (image-editor-pod.ts).
import { spawn, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { agentEnv, DEFAULT_AGENT_PORT, DEFAULT_EDITOR_PORT } from '../../agent/protocol.ts';
import { shellQuote } from '../../agent/shell.ts';
import { freeLoopbackPort } from '../../core/loopback.ts';
import type { PhaseTimeline } from '../../core/phases.ts';
import { RuntimeFailure, type EditorStartOptions, type StopOptions, type WorkspaceRef } from '../driver.ts';
import { podNetworkOf, type PodNetwork } from './addresses.ts';
import { podFailureReason } from './editor-status.ts';
import { ensurePodNetwork, networkOwner, podNetworkMark, removeOwnPodNetwork, setLinkMark } from './network.ts';
import { isSameProcess, killProcess, minimalEnv, pidNamespaceOf, pollUntil, processesInNamespace, processStartTime } from './processes.ts';
import { AGENT_MAIN, EDITOR_MAIN, stageAgentBundle } from './agent-bundle.ts';
import { agentBinds, POD_APP_DIR, POD_PROJECT_DIR, podPathOf, sandboxCommand, type Bind, type SandboxSpec } from './sandbox.ts';
import { resolvConfBinds } from './image-pod-parts.ts';
import { ensureNixDir, type VolumeHost } from './volumes.ts';
import { workspaceSandboxParts } from './workspace-identity.ts';
import { imageEditorPodCommand } from './image-editor-pod.ts';
import { workspaceRuntimeDir } from './replica-files.ts';
import { backgroundUntil, createPodCgroup, editorPlan, inPodCgroup, openMemoryEvents, POD_MEMORY_EVENTS_FILE, removePodCgroup, type LimitsHost } from './pod-limits.ts';
import { editorPodTemplate } from './pod-template.ts';
import { podSeccompFile } from './seccomp.ts';
import { installationTag } from './installation.ts';

export interface PodHost extends VolumeHost, LimitsHost {
  projectDir: string;
  nodePath: string;
  addressRange: string;
  /** Shell command of the editor inside the pod; the agent's built-in editor when undefined. */
  editorCommand?: string;
  /** What the editor needs of the host, bound read-only (code-server's tools directory). */
  editorBinds?: Bind[];
  /** The tools directory holding code-server, when pods run code-server (a pod from an image binds it elsewhere). */
  codeServerTools?: string;
  now: () => Date;
  log: (message: string) => void;
}

export interface PodRecord {
  workspaceId: number;
  uid: number;
  /** The sandbox's outermost process (leader of its own session and process group). */
  pid: number;
  startTime: string;
  /** PID 1 of the pod's PID namespace, as the host sees it; killing it ends every process of the pod. */
  initPid?: number;
  initStartTime?: string;
  pidNamespace?: string;
  /** Own network namespace (server runs as root); absent when the pod shares the host's network. */
  network?: PodNetwork;
  /** Where the host reaches the agent and the editor. */
  host: string;
  agentPort: number;
  editorPort: number;
  startedAt: string;
  /** The pod template it was made from (pod-template.ts); absent for pods of a server before templates were recorded. */
  template?: string;
  /** What the server's exec and port-forward streams carry to the agent (absent: a pod of an older server). */
  agentToken?: string;
}

const podsDir = (host: PodHost) => path.join(host.dataDir, 'pods');
const recordFile = (host: PodHost, id: number) => path.join(podsDir(host), `${id}.json`);
export const podLogFile = (host: PodHost, id: number) => path.join(podsDir(host), `${id}.log`);

export async function readPodRecord(host: PodHost, id: number): Promise<PodRecord | undefined> {
  const text = await readFile(recordFile(host, id), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as PodRecord);
}

async function writePodRecord(host: PodHost, record: PodRecord): Promise<void> {
  const file = recordFile(host, record.workspaceId);
  await writeFile(`${file}.partial`, JSON.stringify(record, null, 2), { mode: 0o600 });
  await rename(`${file}.partial`, file);
}

export function isPodRunning(record: PodRecord): Promise<boolean> {
  return isSameProcess(record.pid, record.startTime);
}

export function podLogTail(host: PodHost, id: number): Promise<string | undefined> {
  return logFileTail(podLogFile(host, id));
}

/** Why a pod ended, from the tail of its log file. */
export async function logFileTail(file: string): Promise<string | undefined> {
  const log = await readFile(file, 'utf8').catch(() => '');
  return podFailureReason(log.slice(-8192));
}

/** What an editor pod shares with the other pods of its workspace (replica-driver.ts). */
export interface WorkspaceWiring {
  /** The workspace's /etc/hosts, bound read-only (it exists before the pod starts). */
  hostsFile: string;
  /**
   * Links the pod's network namespace to the workspace's service network (as root); `mark` names that switch, so
   * a pod network kept from before a sleep and still linked to the same switch is not linked again.
   */
  attach?: { mark: string; link: (netns: string) => Promise<void> };
}

/**
 * Starts the pod: its network (as root) while the workspace's wiring is made, then the sandbox with the agent as
 * its main process (in the background until `options.backgroundUntil` settles); records it.
 */
export async function launchPod(host: PodHost, workspace: WorkspaceRef, wiringMade: Promise<WorkspaceWiring>, timeline?: PhaseTimeline, options?: EditorStartOptions): Promise<PodRecord> {
  const network = host.asRoot ? podNetworkOf(installationTag(host.dataDir), workspace.id, host.addressRange) : undefined;
  timeline?.begin('networks', "making the pod's network namespace and addresses");
  const wiring = await wirePod(host, wiringMade, network, workspace.egress);
  timeline?.mark('networks');
  timeline?.begin('pod preparation', "writing the agent's token, the pod's cgroup and its sandbox command");
  const bundleDir = await bundleFor(host);
  const agentToken = newAgentToken();
  const tokenFile = await writeAgentTokenFile(host, workspace, agentToken);
  const binds = agentBinds(bundleDir, host.nodePath);
  const cgroup = host.cgroupNames.editor(workspace.id);
  const plan = editorPlan(host, workspace);
  await createPodCgroup(host, cgroup, plan);
  if (options?.backgroundUntil) await backgroundUntil(host, cgroup, options.backgroundUntil);
  const endpoint = network
    ? { host: network.podAddress, bindHost: '0.0.0.0', agentPort: DEFAULT_AGENT_PORT, editorPort: DEFAULT_EDITOR_PORT }
    : { host: '127.0.0.1', bindHost: '127.0.0.1', agentPort: await freeLoopbackPort(), editorPort: await freeLoopbackPort() };
  // The cgroup's memory events, passed open: the agent tells an editor killed for memory from one that crashed.
  const memoryBinds = host.cgroups ? [{ fd: MEMORY_EVENTS_FD, target: POD_MEMORY_EVENTS_FILE, readOnly: true }] : [];
  const agentEnvOf = (): Record<string, string> => ({
    ...agentEnvironment(host, endpoint),
    ...(host.cgroups ? { [agentEnv.editorMemory]: JSON.stringify({ plan: plan.id, limitMiB: plan.memoryMiB, eventsFile: POD_MEMORY_EVENTS_FILE }) } : {}),
  });
  const command = workspace.baseImage
    ? await imageEditorPodCommand(host, workspace, workspace.baseImage, {
        bundleDir, hostsFile: wiring.hostsFile, tokenFile, tokenTarget: POD_TOKEN_FILE, netns: network?.netns, agentEnv: agentEnvOf(), descriptorBinds: memoryBinds,
      })
    : await hostEditorPodCommand(host, workspace, {
        netns: network?.netns,
        readOnlyBinds: [...binds, ...(host.editorBinds ?? []), { source: wiring.hostsFile, target: '/etc/hosts' }, { source: tokenFile, target: POD_TOKEN_FILE }, ...(await resolvConfBinds(host.dataDir))],
        descriptorBinds: memoryBinds,
        env: agentEnvOf(),
        infoFd: 3,
        dieWithParent: false,
        script: agentScript(host, binds),
      });
  timeline?.mark('pod preparation');
  timeline?.begin('sandbox start', 'starting the bubblewrap sandbox with the agent');
  const memoryEvents = await openMemoryEvents(host, cgroup);
  const started = await spawnDetached(podLogFile(host, workspace.id), inPodCgroup(host, cgroup, command), memoryEvents ? [memoryEvents.fd] : [])
    .catch(async (error: unknown) => {
      if (network) await removeOwnPodNetwork(network, networkOwner(host.dataDir));
      await removePodCgroup(host, cgroup);
      throw error;
    })
    .finally(() => memoryEvents?.close());
  timeline?.mark('sandbox start');
  const record: PodRecord = {
    workspaceId: workspace.id,
    uid: workspace.uid,
    ...started,
    network,
    host: endpoint.host,
    agentPort: endpoint.agentPort,
    editorPort: endpoint.editorPort,
    startedAt: host.now().toISOString(),
    agentToken,
    template: editorPodTemplate(host, workspace),
  };
  await writePodRecord(host, record);
  editorPods.set(record.pid, { dataDir: host.dataDir, workspaceId: workspace.id });
  host.log(`pod of workspace ${workspace.id} started (pid ${record.pid}) at ${record.host}`);
  return record;
}

/** The editor pod on the machine's system: the volume at /data, the workspace's /nix, the passwd naming its user. */
async function hostEditorPodCommand(
  host: PodHost,
  workspace: WorkspaceRef,
  pod: Pick<SandboxSpec, 'netns' | 'readOnlyBinds' | 'descriptorBinds' | 'env' | 'infoFd' | 'dieWithParent' | 'script'>,
): Promise<{ file: string; args: string[] }> {
  const parts = await workspaceSandboxParts(host, workspace);
  return sandboxCommand({
    ...pod,
    seccomp: podSeccompFile(host.dataDir),
    uid: workspace.uid,
    switchUser: host.asRoot,
    isolateNetwork: false,
    hostname: parts.hostname,
    volumeDir: parts.volumeDir,
    volumeAt: parts.volumeAt,
    nix: { dir: await ensureNixDir(host, workspace.id, workspace.uid), writable: true },
    readOnlyBinds: [...pod.readOnlyBinds, ...parts.identityBinds],
    env: { ...parts.identityEnv, ...pod.env },
  });
}

/** Editor pods this process started, by the pid of their sandbox: the installation (data directory) and workspace. */
const editorPods = new Map<number, { dataDir: string; workspaceId: number }>();
/** Pods being ended on purpose (a sleep, a stop, a restart): their end is no death. */
const endingOnPurpose = new Set<number>();
const editorExitListeners = new Set<{ dataDir: string; listener: (workspaceId: number, reason: string) => void }>();

/** Calls `listener` when an editor pod this process started on `dataDir` ends and nobody stopped it (its processes died). */
export function onEditorPodExit(dataDir: string, listener: (workspaceId: number, reason: string) => void): () => void {
  const entry = { dataDir, listener };
  editorExitListeners.add(entry);
  return () => void editorExitListeners.delete(entry);
}

function editorPodEnded(pid: number, how: string): void {
  const pod = editorPods.get(pid);
  editorPods.delete(pid);
  const onPurpose = endingOnPurpose.delete(pid);
  if (pod === undefined || onPurpose) return;
  for (const { dataDir, listener } of [...editorExitListeners]) if (dataDir === pod.dataDir) listener(pod.workspaceId, how);
}

/**
 * The pod's own network and the workspace's wiring, made at the same time (or found as a sleep left them); the pod
 * is then linked to the service network unless its host link's mark says it is linked to that switch already.
 */
async function wirePod(host: PodHost, wiringMade: Promise<WorkspaceWiring>, network: PodNetwork | undefined, egress: WorkspaceRef['egress']): Promise<WorkspaceWiring> {
  const owner = networkOwner(host.dataDir);
  const [wiring, found] = await Promise.allSettled([wiringMade, network ? ensurePodNetwork(network, host.addressRange, owner, egress) : Promise.resolve('')]);
  try {
    if (wiring.status === 'rejected') throw wiring.reason;
    if (found.status === 'rejected') throw new RuntimeFailure('agent', (found.reason as Error).message);
    const attach = wiring.value.attach;
    if (network && attach) {
      const linked = `${podNetworkMark(owner, network)} ${attach.mark}`;
      if (found.value !== linked) {
        await attach.link(network.netns);
        await setLinkMark(network.hostVeth, linked);
      }
    }
    return wiring.value;
  } catch (error) {
    if (network) await removeOwnPodNetwork(network, owner);
    throw error instanceof RuntimeFailure ? error : new RuntimeFailure('agent', (error as Error).message);
  }
}

function agentEnvironment(host: PodHost, endpoint: { bindHost: string; agentPort: number; editorPort: number }): Record<string, string> {
  return {
    [agentEnv.agentHost]: endpoint.bindHost,
    [agentEnv.agentPort]: String(endpoint.agentPort),
    [agentEnv.editorHost]: endpoint.bindHost,
    [agentEnv.editorPort]: String(endpoint.editorPort),
    [agentEnv.workspaceDir]: POD_APP_DIR,
    [agentEnv.tokenFile]: POD_TOKEN_FILE,
    [agentEnv.editorScript]: path.posix.join(POD_PROJECT_DIR, EDITOR_MAIN),
    ...(host.editorCommand ? { [agentEnv.editorCommand]: host.editorCommand } : {}),
  };
}

/** The descriptor the editor pod's memory events are passed on (bubblewrap's info comes on 3). */
const MEMORY_EVENTS_FD = 4;

/** Where the editor pod's agent finds its token. */
const POD_TOKEN_FILE = '/run/svc/agent-token';

export const newAgentToken = () => randomBytes(24).toString('base64url');

/** The token as a file only the workspace UID (and root) may read, bound read-only into the editor pod. */
async function writeAgentTokenFile(host: PodHost, workspace: WorkspaceRef, token: string): Promise<string> {
  const file = path.join(workspaceRuntimeDir(host.dataDir, workspace.id), 'agent-token');
  await rm(file, { force: true });
  await writeFile(file, token, { mode: 0o400, flag: 'wx' });
  if (host.asRoot) await chown(file, workspace.uid, 0);
  return file;
}

/** The agent bundle in the data directory, built when this process first needs it. */
export function bundleFor(host: PodHost): Promise<string> {
  return stageAgentBundle(host.projectDir, host.dataDir).catch((error: Error) => {
    throw new RuntimeFailure('agent', `the agent could not be built: ${error.message}`);
  });
}

/** `exec node /opt/svc/main.mjs`, with the node binary as the pod sees it. */
export function agentScript(host: PodHost, binds: Bind[]): string {
  const node = podPathOf(host.nodePath, binds);
  if (!node) throw new RuntimeFailure('agent', `the node binary ${host.nodePath} is not visible in the pod`);
  return `exec ${[node, path.posix.join(POD_PROJECT_DIR, AGENT_MAIN)].map(shellQuote).join(' ')}`;
}

export type Started = Pick<PodRecord, 'pid' | 'startTime' | 'initPid' | 'initStartTime' | 'pidNamespace'>;

/**
 * Spawns the sandbox in a session of its own, its output going to a fresh pod log, and waits for bubblewrap's
 * info (the pid of the pod's PID 1). Without it the sandbox failed to start: the log says why. `passFds` are
 * handed to the sandbox as descriptors 4, 5, ... (bubblewrap's info comes on 3).
 */
export async function spawnDetached(logFile: string, command: { file: string; args: string[] }, passFds: number[] = []): Promise<Started> {
  const log = await open(logFile, 'w', 0o600);
  try {
    const stdio: StdioOptions = ['ignore', log.fd, log.fd, 'pipe', ...passFds];
    const child = spawn(command.file, command.args, { detached: true, env: minimalEnv(), stdio });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        if (child.pid !== undefined) {
          noteEnding(child.pid, signal ? `bubblewrap was killed by ${signal}` : `bubblewrap exited with code ${code}`);
          editorPodEnded(child.pid, signal ? `its sandbox was killed by ${signal}` : `its sandbox exited with code ${code}`);
        }
        resolve();
      }),
    );
    let spawnError: string | undefined;
    child.once('error', (error) => (spawnError = `${command.file}: ${error.message}`));
    const infoStream = child.stdio[3] as Readable | null; // absent when the spawn itself failed
    const info = infoStream ? await readInfo(infoStream) : undefined;
    child.unref();
    const pid = child.pid;
    const startTime = pid === undefined ? undefined : await processStartTime(pid);
    const initPid = info?.['child-pid'];
    if (pid === undefined || startTime === undefined || initPid === undefined) {
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
      throw new RuntimeFailure('agent', spawnError ?? (await logFileTail(logFile)) ?? 'the pod exited at once');
    }
    return { pid, startTime, initPid, initStartTime: await processStartTime(initPid), pidNamespace: await pidNamespaceOf(initPid) };
  } finally {
    await log.close();
  }
}

/** How pods started by this process ended, by pid (the newest few hundred): what a pod that printed nothing says. */
const endings = new Map<number, string>();

function noteEnding(pid: number, how: string): void {
  endings.delete(pid);
  endings.set(pid, how);
  if (endings.size > 512) endings.delete(endings.keys().next().value!);
}

/** How the pod with this pid ended, when this process started it and saw it end. */
export function podEnding(pid: number): string | undefined {
  return endings.get(pid);
}

/** bubblewrap's `--info-fd` JSON, or undefined when the stream ends without it. */
function readInfo(stream: Readable): Promise<{ 'child-pid'?: number } | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const done = (value: { 'child-pid'?: number } | undefined) => {
      stream.destroy();
      resolve(value);
    };
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      try {
        done(JSON.parse(text));
      } catch {
        // not complete yet
      }
    });
    stream.on('end', () => done(undefined));
    stream.on('error', () => done(undefined));
  });
}

/**
 * Ends every process of the pod (its process group, its PID 1, anything left in its PID namespace), removes its
 * network (kept when the workspace goes to sleep: its wake reuses it) and its record. Idempotent; also cleans up
 * after a pod that died or a start that failed half-way.
 */
export async function stopPod(host: PodHost, workspace: WorkspaceRef, options?: StopOptions): Promise<void> {
  const record = await readPodRecord(host, workspace.id);
  if (record) await killPod(record);
  await removePodCgroup(host, host.cgroupNames.editor(workspace.id));
  if (host.asRoot && !options?.sleeping) await removeOwnPodNetwork(record?.network ?? podNetworkOf(installationTag(host.dataDir), workspace.id, host.addressRange), networkOwner(host.dataDir));
  await rm(recordFile(host, workspace.id), { force: true });
}

/**
 * Kills the pod's PID 1 first (the kernel then ends its whole PID namespace and bubblewrap's outer process exits,
 * reaping it), then whatever is left: the process group, stragglers in the namespace.
 */
export async function killPod(record: Started & { workspaceId: number }): Promise<void> {
  if (editorPods.has(record.pid)) endingOnPurpose.add(record.pid);
  const initAlive = record.initPid !== undefined && record.initStartTime !== undefined && (await isSameProcess(record.initPid, record.initStartTime));
  if (initAlive) killProcess(record.initPid!);
  // looked for every 5 ms (one read of /proc): a killed pod is usually gone within a few, and a restart waits for it
  if (initAlive && (await pollUntil(async () => !(await isSameProcess(record.pid, record.startTime)), 2000, 5))) return waitForNamespace(record.pidNamespace);
  if (await isSameProcess(record.pid, record.startTime)) killProcess(-record.pid);
  const gone = await pollUntil(async () => !(await isSameProcess(record.pid, record.startTime)), 10_000, 5);
  if (!gone) throw new Error(`the pod of workspace ${record.workspaceId} (pid ${record.pid}) did not end`);
  if (initAlive) await waitForNamespace(record.pidNamespace);
}

async function waitForNamespace(namespace: string | undefined): Promise<void> {
  if (!namespace) return;
  const empty = await pollUntil(async () => {
    const left = await processesInNamespace(namespace);
    left.forEach((pid) => killProcess(pid));
    return left.length === 0;
  }, 10_000);
  if (!empty) throw new Error(`processes of PID namespace ${namespace} did not end`);
}
