// The `local` runtime driver: volumes are directories under the data directory (each its own loop-mounted file
// system of its size with the loop backend), pods are bubblewrap sandboxes on
// this machine (see docs/runtime.md): an editor pod per workspace, a pod per service replica (replica-driver.ts),
// and short-lived sandboxes for stage steps (stage-steps.ts). The server only talks to it through RuntimeDriver.
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock, type Clock } from '../../core/clock.ts';
import { RuntimeFailure, type EditorAddress, type EditorDescription, type EditorState, type RuntimeDriver, type StopOptions, type WorkspaceRef } from '../driver.ts';
import { defaultReplicaTimings, type ReplicaTimings } from '../../agent/replica-protocol.ts';
import { DEFAULT_POD_ADDRESS_RANGE, DEFAULT_SERVICE_ADDRESS_RANGE, rangesOverlap } from './addresses.ts';
import { answersHttp, awaitAgentChange, fetchAgentStatus } from './agent-client.ts';
import type { AgentStatus } from '../../agent/protocol.ts';
import { PhaseTimeline } from '../../core/phases.ts';
import { editorStateOf, progressTexts } from './editor-status.ts';
import { chooseEditor, codeServerWebFiles, type EditorChoice } from './editor-tools.ts';
import { isPodRunning, launchPod, onEditorPodExit, podLogFile, podLogTail, readPodRecord, stopPod, type PodHost, type PodRecord } from './pods.ts';
import { createLocalReplicaDriver, type ReplicaDriverHost } from './replica-driver.ts';
import { createPodStreams } from './pod-streams.ts';
import { cgroupNames, hostCgroups } from './cgroups.ts';
import { builtInPlans, type InstallationPlans } from '../../capacity/plans.ts';
import { createStageSteps } from './stage-steps.ts';
import { cloneIntoVolume, prepareEmptyVolumeDir, type SetupOptions } from './volume-setup.ts';
import { applyDotfiles } from './dotfiles.ts';
import { createVolumeDir, deleteVolumeDir, ensureVolumeMounted, ensureWorkspaceLayout, exists, nixDir, packVolume, unpackVolume, volumeBytes, volumeDir } from './volumes.ts';
import { remountVolumeImages, type VolumeBackend } from './volume-images.ts';
import { reownTree } from './volume-owner.ts';
import { editorPodTemplate } from './pod-template.ts';
import { linkMark, networkOwner } from './network.ts';
import { guardHostLink, guardInstallationLinks, podFirewallKeeper } from './pod-firewall.ts';
import { podNetworkOf, serviceNetworkOf } from './addresses.ts';
import { podSeccompProgram } from './seccomp.ts';
import { hostResolvers, podResolvConf, type PodEgress } from './egress.ts';
import { podResolvConfFile } from './image-pod-parts.ts';
import { installationId, installationTag } from './installation.ts';
import { chooseAddressBlocks } from './address-blocks.ts';

export { resolveVolumeBackend, type VolumeBackend } from './volume-images.ts';
export { podNetworkOf, replicaNetnsOf, serviceNetworkOf, type PodNetwork, type ServiceNetwork } from './addresses.ts';
export { installationPodNetwork, installationServiceNetwork } from './address-blocks.ts';
export { installationTag } from './installation.ts';

export interface LocalDriverOptions {
  dataDir: string;
  log?: (message: string) => void;
  clock?: Clock;
  /** Shell command of the editor inside pods (run with `bash -lc`, PORT and HOST set); wins over `editorTools`. */
  editorCommand?: string;
  /**
   * Tools directory of scripts/setup-editor.sh: pods run code-server from it when it is installed there. Without it,
   * or without code-server in it, the agent's built-in editor (editor-tools.ts).
   */
  editorTools?: string;
  /** Private IPv4 range pods get their /30 from (server as root). Default: a free /16 (address-blocks.ts). */
  podAddressRange?: string;
  /** Private IPv4 range workspaces' service networks get their /26 from (server as root). Default: a free /16. */
  serviceAddressRange?: string;
  /** Timings of service replicas (restart backoff, give-up rule, needs wait, probes); default: spec 3.2's. */
  replicaTimings?: Partial<ReplicaTimings>;
  /** Where the agent's sources are (bundled into the data directory, bound read-only at /opt/svc). Default: this project. */
  projectDir?: string;
  /** How long the agent may take to answer, and then the editor. */
  agentTimeoutMs?: number;
  editorTimeoutMs?: number;
  cloneTimeoutMs?: number;
  /** Pretend not to be root (tests of the unprivileged mode); default: whether the server runs as root. */
  asRoot?: boolean;
  /** The installation's plans: each pod's CPU and memory limits (docs/capacity.md); the built-in plans when absent. */
  plans?: InstallationPlans;
  /**
   * `loop`: each volume is a file system of its `storage_gib` in a loop-mounted image (writes past it fail with
   * ENOSPC); `directory` (the default here; `--volume-backend auto` picks for the server): a directory, measured only.
   */
  volumeBackend?: VolumeBackend;
  /** IPv4 resolvers pods use (their /etc/resolv.conf, as root); default: the host's (egress.ts `hostResolvers`). */
  podDns?: string[];
  /** IPv4 CIDRs pods reach although private, link-local or the host's (`--egress-allow`). */
  egressAllow?: string[];
  /** IPv4 CIDRs pods never reach (`--egress-deny`). */
  egressDeny?: string[];
  /** The installation's published address(es) on this host, which pods reach (the console, workspaces' URLs). */
  publishedAddresses?: Array<{ address: string; port: number }>;
}

/**
 * The egress policy of the pods (as root) from the driver's options, with the pods' resolv.conf written into the
 * data directory (bound over /etc/resolv.conf in every pod).
 */
function setUpEgress(dataDir: string, options: LocalDriverOptions, ranges: string[], log: (message: string) => void): PodEgress {
  const found = options.podDns ? { servers: options.podDns } : hostResolvers();
  if ('note' in found && found.note) log(found.note);
  mkdirSync(path.join(dataDir, 'pods'), { recursive: true, mode: 0o711 });
  writeFileSync(podResolvConfFile(dataDir), podResolvConf(found.servers), { mode: 0o644 });
  return { podRanges: ranges, dns: found.servers, allow: options.egressAllow ?? [], deny: options.egressDeny ?? [], published: options.publishedAddresses ?? [] };
}

const defaultProjectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export function createLocalDriver(options: LocalDriverOptions): RuntimeDriver {
  const dataDir = path.resolve(options.dataDir);
  const clock = options.clock ?? systemClock;
  const editor = chooseEditor(options);
  const asRoot = options.asRoot ?? process.getuid?.() === 0;
  // as root, blocks of the installation's own (address-blocks.ts); without root pods share the host's network
  const blocks = asRoot
    ? chooseAddressBlocks(dataDir, { pods: options.podAddressRange, services: options.serviceAddressRange })
    : { pods: options.podAddressRange ?? DEFAULT_POD_ADDRESS_RANGE, services: options.serviceAddressRange ?? DEFAULT_SERVICE_ADDRESS_RANGE };
  const host: PodHost & SetupOptions & ReplicaDriverHost = {
    dataDir,
    asRoot,
    cgroups: hostCgroups(asRoot),
    cgroupNames: cgroupNames(dataDir),
    plans: options.plans ?? builtInPlans,
    projectDir: options.projectDir ?? defaultProjectDir,
    nodePath: process.execPath,
    addressRange: blocks.pods,
    serviceAddressRange: blocks.services,
    replicaTimings: { ...defaultReplicaTimings, ...options.replicaTimings },
    agentTimeoutMs: options.agentTimeoutMs ?? 30_000,
    editorCommand: editor.kind === 'built-in' ? undefined : editor.command,
    editorBinds: editor.binds,
    codeServerTools: editor.kind === 'code-server' ? editor.binds[0].source : undefined,
    now: () => clock.now(),
    log: options.log ?? (() => undefined),
    cloneTimeoutMs: options.cloneTimeoutMs ?? 10 * 60_000,
    volumeBackend: options.volumeBackend ?? 'directory',
  };
  if (rangesOverlap(host.addressRange, host.serviceAddressRange)) {
    throw new Error(`the pod address range ${host.addressRange} and the service address range ${host.serviceAddressRange} overlap`);
  }
  if (asRoot) host.log(`pods take addresses from ${host.addressRange}, service networks from ${host.serviceAddressRange} (installation ${installationId(dataDir)})`);
  host.log(describeEditor(editor));
  host.log(host.cgroups ? `pods run in cgroups (v${host.cgroups.version}) with their plans' CPU and memory limits` : 'pods run without CPU and memory limits: cgroups need the server to run as root on a host with the cpu and memory controllers');
  if (!podSeccompProgram()) host.log(`pods run without a seccomp filter: svc has one for x86_64 only, not ${process.arch}`);
  // the pods' firewall (as root): written again at start over the links pods that outlived a server keep, else with
  // the first pod network
  const firewall = asRoot ? podFirewallKeeper(networkOwner(dataDir)) : undefined;
  firewall?.configure(setUpEgress(dataDir, options, [host.addressRange, host.serviceAddressRange], host.log));
  if (asRoot) guardInstallationLinks(networkOwner(dataDir)).catch((error: Error) => host.log(error.message));
  const timeouts = { agentMs: host.agentTimeoutMs, editorMs: options.editorTimeoutMs ?? 120_000 };
  // volumes unmounted by a reboot are mounted again before anything uses them
  const remounted = host.volumeBackend === 'loop' ? remountVolumeImages(host, (id) => volumeDir(host, id), host.log) : Promise.resolve();
  const volumeReady = async (workspace: WorkspaceRef) => {
    await remounted;
    await ensureVolumeMounted(host, workspace.id, workspace.storageGib);
    if (await exists(volumeDir(host, workspace.id))) await ensureWorkspaceLayout(host, workspace.id, workspace.uid);
  };
  const serialized = workspaceQueue();
  const replicas = createLocalReplicaDriver(host, workspaceQueue());
  const stageSteps = createStageSteps(host);
  const streams = createPodStreams(host);
  const stopWorkspace = async (workspace: WorkspaceRef, options?: StopOptions) => {
    await stageSteps.abortAll(workspace);
    await serialized(workspace.id, () => stopPod(host, workspace, options));
    await replicas.stopAll(workspace, options);
  };

  return {
    name: 'local',
    editor: editorDescription(editor),
    editorWebFiles: editor.kind === 'code-server' ? codeServerWebFiles(editor.binds[0].source) : undefined,
    createVolume: async (workspace) => {
      await remounted;
      await createVolumeDir(host, workspace.id, workspace.uid, workspace.storageGib);
      await ensureWorkspaceLayout(host, workspace.id, workspace.uid);
    },
    deleteVolume: (workspace) =>
      serialized(workspace.id, async () => {
        await stopPod(host, workspace); // the network a sleep kept goes too
        await replicas.forgetAll(workspace);
        await deleteVolumeDir(host, workspace.id);
        await rm(podLogFile(host, workspace.id), { force: true });
      }),
    volumeUsage: async (workspace) => ({ bytes: await volumeBytes(host, workspace.id), enforced: host.volumeBackend === 'loop' }),
    cloneRepository: async (workspace, source, progress) => {
      progress(progressTexts.cloning);
      await cloneIntoVolume(host, workspace, source);
    },
    prepareEmptyVolume: async (workspace, progress) => {
      progress(progressTexts.preparingVolume);
      await prepareEmptyVolumeDir(host, workspace);
    },
    startEditor: (workspace, progress, timeline = new PhaseTimeline(), options) =>
      serialized(workspace.id, async () => {
        const found = await readPodRecord(host, workspace.id);
        if (found && (await isPodRunning(found))) return waitForEditor(host, found, timeouts, progress, '', timeline);
        if (found) await stopPod(host, workspace); // it died: clean up what it left, then start afresh
        progress(progressTexts.starting);
        if (!(await exists(volumeDir(host, workspace.id)))) throw new RuntimeFailure('agent', 'the workspace has no volume');
        await volumeReady(workspace);
        const dotfiles = await applyDotfiles(host, workspace).catch((error: Error) => `dotfiles of workspace ${workspace.id} could not be applied: ${error.message}`);
        if (dotfiles) host.log(dotfiles);
        const record = await launchPod(host, workspace, replicas.wireEditor(workspace), timeline, options);
        return waitForEditor(host, record, timeouts, progress, progressTexts.starting, timeline);
      }),
    podTemplate: (workspace) => editorPodTemplate(host, workspace),
    stopWorkspace,
    editorState: (workspace) => observeEditor(host, workspace),
    onEditorExit: (listener) => onEditorPodExit(host.dataDir, listener),
    landscapeFilesFingerprint: async (workspace) => {
      const record = await readPodRecord(host, workspace.id);
      return record && (await fetchAgentStatus(record.host, record.agentPort, 3000))?.landscapeFiles; // generous: a busy pod still counts
    },
    archiveVolume: async (workspace, archiveFile) => {
      await stopWorkspace(workspace); // an archived workspace keeps no network
      return serialized(workspace.id, async () => (await volumeReady(workspace), packVolume(host, workspace.id, archiveFile)));
    },
    restoreVolume: (workspace, archiveFile) => serialized(workspace.id, async () => (await remounted, unpackVolume(host, workspace.id, workspace.uid, workspace.storageGib, archiveFile))),
    // Only root can hand files to another UID.
    reownVolume: asRoot ? (workspace, uid, signal) => serialized(workspace.id, async () => (await volumeReady(workspace), reownWorkspaceFiles(host, workspace.id, uid, signal))) : undefined,
    // pods keep running (and their firewall with them); stage steps belong to this server process
    close: async () => {
      await stageSteps.abortAll();
      await firewall?.removeIfUnused().catch((error: Error) => host.log(error.message));
    },
    prepareReplicas: replicas.prepareReplicas,
    startReplica: replicas.startReplica,
    stopReplica: replicas.stopReplica,
    replicaStates: replicas.replicaStates,
    replicaLogs: replicas.replicaLogs,
    removeReplica: replicas.removeReplica,
    placeManagedService: replicas.placeManagedService,
    removeManagedService: replicas.removeManagedService,
    managedServiceAddress: replicas.managedServiceAddress,
    runStageStep: stageSteps.run,
    applyEgress: asRoot ? (workspace) => applyEgress(host, workspace) : undefined,
    stageStepLogs: stageSteps.logs,
    openExec: streams.openExec,
    openPortForward: streams.openPortForward,
    openEditorGit: streams.openEditorGit,
    openSsh: streams.openSsh,
  };
}

/**
 * The workspace's egress on the host links its pods have now (the editor pod's and the switch's, when they are
 * this installation's): the link's group decides in the kernel, connections under way included.
 */
async function applyEgress(host: PodHost & { serviceAddressRange: string }, workspace: WorkspaceRef): Promise<void> {
  const owner = networkOwner(host.dataDir);
  const installation = installationTag(host.dataDir);
  const links = [podNetworkOf(installation, workspace.id, host.addressRange).hostVeth, serviceNetworkOf(installation, workspace.id, host.serviceAddressRange).hostVeth];
  for (const link of links) {
    const mark = await linkMark(link);
    if (mark === owner || mark?.startsWith(`${owner} `)) await guardHostLink(owner, link, workspace.egress ?? 'on');
  }
}

/** The volume (the workspace's /data: code, HOME, svc's files) and its /nix beside it, each when it exists (an archived workspace has no volume). */
async function reownWorkspaceFiles(host: PodHost, id: number, uid: number, signal?: AbortSignal) {
  const result = { unchanged: [] as Array<{ path: string; reason: string }>, moreUnchanged: 0 };
  for (const [dir, shownAs] of [[volumeDir(host, id), '/data'], [nixDir(host, id), '/nix']] as const) {
    if (!(await exists(dir))) continue;
    const tree = await reownTree(dir, shownAs, uid, signal);
    result.unchanged.push(...tree.unchanged);
    result.moreUnchanged += tree.moreUnchanged;
  }
  return result;
}

function editorDescription(editor: EditorChoice): EditorDescription {
  if (editor.kind === 'code-server') return { kind: 'code-server', version: editor.version, reason: `code-server ${editor.version} is installed in ${editor.binds[0].source}` };
  if (editor.kind === 'command') return { kind: 'command', reason: 'the operator configured an editor command' };
  return { kind: 'built-in', reason: editor.why };
}

function describeEditor(editor: EditorChoice): string {
  if (editor.kind === 'code-server') return `editor: code-server ${editor.version} from ${editor.binds[0].source}`;
  if (editor.kind === 'command') return 'editor: the configured editor command';
  return `editor: the built-in editor; ${editor.why}`;
}

async function observeEditor(host: PodHost, workspace: WorkspaceRef): Promise<EditorState> {
  const record = await readPodRecord(host, workspace.id);
  if (!record || !(await isPodRunning(record))) return editorStateOf({ pod: 'absent' });
  const agent = await fetchAgentStatus(record.host, record.agentPort);
  return editorStateOf({ pod: 'running', agent, editor: { host: record.host, port: record.editorPort, template: record.template } });
}

/** How often the agent is asked while it does not answer yet (a refused connection returns at once). */
const AGENT_POLL_MS = 10;
const OLD_AGENT_POLL_MS = 100;
/** How long the editor's answer at its address from the host may take once the agent saw it ready. */
const HOST_CHECK_TIMEOUT_MS = 15_000;
/** The longest one wait for the agent's next change lasts, so a pod that died is noticed within it. */
const CHANGE_WAIT_MS = 1000;

/**
 * Waits until the editor is ready (and answers from the host too) or fails: polls until the agent answers, then
 * waits on the agent's changes (status-server.ts) so its editor's readiness is seen the moment the agent sees it.
 * "Starting" lasts until the agent answers, "Starting IDE" until the editor does. A pod whose agent never answers
 * is stopped again.
 */
async function waitForEditor(
  host: PodHost,
  record: PodRecord,
  timeouts: { agentMs: number; editorMs: number },
  progress: (text: string) => void,
  alreadyReported: string,
  timeline: PhaseTimeline,
): Promise<EditorAddress> {
  const workspace = { id: record.workspaceId, uid: record.uid, storageGib: 0 };
  const address = { host: record.host, port: record.editorPort, template: record.template };
  const started = performance.now(); // elapsed time of real waiting, not the platform's clock
  timeline.begin('agent start', "waiting for the pod's agent and its editor to answer");
  let reported = alreadyReported;
  let agent: AgentStatus | undefined;
  for (;;) {
    if (!(await isPodRunning(record))) {
      const reason = (await podLogTail(host, record.workspaceId)) ?? 'the pod exited';
      await stopPod(host, workspace);
      throw new RuntimeFailure('agent', reason);
    }
    const waited = performance.now() - started;
    // An agent of this release announces its changes; one of an older server's pod is polled.
    const waitMs = Math.min(CHANGE_WAIT_MS, Math.max(0, timeouts.agentMs + timeouts.editorMs - waited));
    agent = agent?.listeningAt !== undefined && agent.editor.state === 'starting'
      ? await awaitAgentChange(record.host, record.agentPort, waitMs)
      : await fetchAgentStatus(record.host, record.agentPort);
    const state = editorStateOf({ pod: 'running', agent, editor: address });
    if (state.state === 'failed') throw state.failure;
    if (state.state === 'ready') {
      markAgentPhases(timeline, agent!);
      // generous: code-server's first answer on a busy machine takes seconds
      if (await answersHttp(address.host, address.port, HOST_CHECK_TIMEOUT_MS)) return (timeline.mark('editor from the host'), address);
      throw new RuntimeFailure('ide', `the editor answers inside the pod but not at ${address.host}:${address.port}`);
    }
    if (state.state === 'starting' && state.statusText !== reported) {
      progress(state.statusText);
      reported = state.statusText;
    }
    if (reported === progressTexts.starting && waited > timeouts.agentMs) {
      await stopPod(host, workspace);
      throw new RuntimeFailure('agent', `the agent did not answer within ${timeouts.agentMs / 1000} s`);
    }
    if (waited > timeouts.agentMs + timeouts.editorMs) throw new RuntimeFailure('ide', `the editor did not answer within ${timeouts.editorMs / 1000} s`);
    // no pause before waiting on the changes of an agent of this release; an older one is polled
    if (agent?.listeningAt === undefined) await new Promise((resolve) => setTimeout(resolve, agent ? OLD_AGENT_POLL_MS : AGENT_POLL_MS));
  }
}

/**
 * The phases inside the pod, from the times its agent reports (absent from an older agent). The agent starts the
 * editor before it loads the rest of itself: "agent start" is what its listening took beyond the editor's spawn
 * (0 when the editor's start is the longer one), "editor start" the rest.
 */
function markAgentPhases(timeline: PhaseTimeline, agent: AgentStatus): void {
  if (agent.startedAt !== undefined) timeline.mark('node start', agent.startedAt);
  if (agent.editor.startedAt !== undefined) timeline.mark('editor spawn', agent.editor.startedAt);
  if (agent.listeningAt !== undefined) timeline.mark('agent start', agent.listeningAt);
  if (agent.editor.answeredAt !== undefined) timeline.mark('editor start', agent.editor.answeredAt);
  timeline.mark('readiness seen');
}

/** Runs work for one workspace after the work queued before it (a start never interleaves with a stop or an archive). */
function workspaceQueue(): <T>(id: number, work: () => Promise<T>) => Promise<T> {
  const tails = new Map<number, Promise<unknown>>();
  return <T>(id: number, work: () => Promise<T>): Promise<T> => {
    const previous = tails.get(id) ?? Promise.resolve();
    const result = previous.catch(() => undefined).then(work);
    const tail = result.catch(() => undefined);
    tails.set(id, tail);
    void tail.then(() => {
      if (tails.get(id) === tail) tails.delete(id);
    });
    return result;
  };
}
