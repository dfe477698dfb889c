// Pods of `steps` and `container` service replicas: like an editor pod (pods.ts) a bubblewrap sandbox started
// detached, the agent as its main process, here in replica mode (src/agent/replica-agent.ts). Each has its own
// directory bound at /run/svc (settings and log), the workspace's hosts file as /etc/hosts and its `mounts`; a steps
// pod also the volume at /data (the code at /data/app, HOME at /data/home) and the workspace's /nix, on the host's system or, with an `image`, on the image's
// root run by the image's shell; a container pod the image's root and no volume (container-pod.ts); as root also its
// own network namespace on the workspace's service network (service-network.ts).
import { chown, rm, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { agentEnv, DEFAULT_AGENT_PORT } from '../../agent/protocol.ts';
import { REPLICA_CONFIG_FILE, REPLICA_POD_DIR, replicaEnv, type ContainerProcess, type ReplicaConfig, type ReplicaTimings } from '../../agent/replica-protocol.ts';
import { shellQuote } from '../../agent/shell.ts';
import { freeLoopbackPort } from '../../core/loopback.ts';
import type { PhaseTimeline } from '../../core/phases.ts';
import { RuntimeFailure, type PinnedRoot, type ReplicaSpec, type WorkspaceRef } from '../driver.ts';
import { replicaNetnsOf, replicaSwitchLinkOf, SERVICE_SUBNET_PREFIX, type ServiceNetwork } from './addresses.ts';
import { agentScript, bundleFor, killPod, newAgentToken, spawnDetached, type PodHost } from './pods.ts';
import { runCommand } from './processes.ts';
import { containerProcessOf, DEFAULT_CONTAINER_HOME, DEFAULT_CONTAINER_PATH, imageEnv } from '../container-process.ts';
import { agentNodeSetting, hostNodeFor, imagePodCommand } from './container-pod.ts';
import { podPasswd, readImageRoot } from './container-root.ts';
import { imageShell } from './image-shell.ts';
import { checkRootfs, hostResolvConf, IMAGE_POD_OWN_TOP, nixOf, resolvConfBinds, splitBinds } from './image-pod-parts.ts';
import { closeMounts, containerPodReserved, imageStepsPodReserved, openMounts, stepsPodReserved, type OpenMount } from './replica-mounts.ts';
import { createReplicaDir, replicaDirOf, replicaIdentityBase, replicaOutputFile, replicaPasswdFile, writeReplicaRecord, type ReplicaRecord } from './replica-files.ts';
import { agentBinds, POD_APP_DIR, sandboxCommand, type DescriptorBind } from './sandbox.ts';
import { netnsExists, removeNetns } from './network.ts';
import { attachToServiceNetwork, bringUpServiceLink, createReplicaNetns, POD_LINK } from './service-network.ts';
import { appDir, volumeDir } from './volumes.ts';
import { POD_HOME_DIR, POD_VOLUME_DIR } from './pod-identity.ts';
import { writeWorkspaceIdentity, workspaceSandboxParts } from './workspace-identity.ts';
import { createPodCgroup, inPodCgroup, openMemoryEvents, POD_MEMORY_EVENTS_FILE, removePodCgroup, replicaPlan } from './pod-limits.ts';
import { podSeccompFile } from './seccomp.ts';
import { installationTag } from './installation.ts';

export interface ReplicaPodHost extends PodHost {
  replicaTimings: ReplicaTimings;
}

export interface ReplicaPlacement {
  hostsFile: string;
  /**
   * As root: the workspace's service network and the replica's address on it; `prepared` when its namespace was
   * linked at that address ahead of the start, its link left down (prepareServiceLink).
   */
  network?: { service: ServiceNetwork; address: string; prepared?: boolean };
}

/** Descriptors of `mounts` are passed from 4 on (bubblewrap's info comes on 3). */
const FIRST_MOUNT_FD = 4;

/** Starts the replica's pod with a fresh directory (and so a fresh log) and records it. */
export async function launchReplicaPod(host: ReplicaPodHost, workspace: WorkspaceRef, spec: ReplicaSpec, placement: ReplicaPlacement, timeline?: PhaseTimeline): Promise<ReplicaRecord> {
  const container = spec.container && containerOf(spec, workspace);
  const image = spec.container ?? spec.root;
  if (image) await checkRootfs(image, 'Sync again to fetch it');
  const dir = replicaDirOf(host.dataDir, workspace.id, spec.service, spec.index);
  await rm(dir, { recursive: true, force: true });
  await createReplicaDir(dir, workspace.uid, host.asRoot);
  const config = path.join(dir, REPLICA_CONFIG_FILE);
  const agentToken = newAgentToken();
  const plan = replicaPlan(host, spec);
  const cgroup = host.cgroupNames.replica(workspace.id, spec.service, spec.index);
  await createPodCgroup(host, cgroup, plan);
  const memory = host.cgroups ? { plan: plan.id, limitMiB: plan.memoryMiB, eventsFile: POD_MEMORY_EVENTS_FILE } : undefined;
  await writeFile(config, JSON.stringify({ ...replicaConfigOf(spec, host.replicaTimings, placement.network !== undefined, container), agentToken, memory }), { flag: 'wx', mode: 0o400 });
  if (host.asRoot) await chown(config, workspace.uid, 0);
  const reserved = container ? containerPodReserved : spec.root ? imageStepsPodReserved : stepsPodReserved;
  let memoryEvents: FileHandle | undefined;
  const mounts = await openMounts({ root: volumeDir(host, workspace.id), code: appDir(host, workspace.id) }, spec.mounts, (from) => createVolumeDirectory(host, workspace, from), reserved);
  timeline?.mark(`${spec.service} pod directory and cgroup`);
  try {
    const network = placement.network;
    const endpoint = network
      ? { host: network.address, bindHost: '0.0.0.0', agentPort: DEFAULT_AGENT_PORT }
      : { host: '127.0.0.1', bindHost: '127.0.0.1', agentPort: await freeLoopbackPort() };
    const netns = network ? replicaNetnsOf(installationTag(host.dataDir), workspace.id, spec.service, spec.index) : undefined;
    memoryEvents = await openMemoryEvents(host, cgroup);
    const pod = { host, workspace, spec, placement, netns, dir, mounts, agentEnv: replicaAgentEnv(endpoint), memoryEvents };
    const built = container ? await containerPod(pod, container) : spec.root ? await imageStepsPod(pod, spec.root) : await stepsPod(pod);
    const command = inPodCgroup(host, cgroup, built);
    timeline?.mark(`${spec.service} sandbox command`);
    if (netns && network) await joinServiceNetwork(netns, network.service, replicaSwitchLinkOf(spec.service, spec.index), network.address, network.prepared);
    timeline?.mark(`${spec.service} pod network`);
    const output = replicaOutputFile(host.dataDir, workspace.id, spec.service, spec.index);
    const passed = [...mounts.map((mount) => mount.handle.fd), ...(memoryEvents ? [memoryEvents.fd] : [])];
    const started = await spawnDetached(output, command, passed).catch(async (error: unknown) => {
      if (netns) await removeNetns(netns);
      await removePodCgroup(host, cgroup);
      const failedToStart = error instanceof Error ? error.message : String(error);
      await writeReplicaRecord(host.dataDir, {
        workspaceId: workspace.id, uid: workspace.uid, service: spec.service, index: spec.index, pid: 0, startTime: '',
        host: endpoint.host, agentPort: endpoint.agentPort, startedAt: host.now().toISOString(), failedToStart,
      });
      throw error;
    });
    const record: ReplicaRecord = {
      workspaceId: workspace.id,
      uid: workspace.uid,
      service: spec.service,
      index: spec.index,
      ...started,
      netns,
      host: endpoint.host,
      agentPort: endpoint.agentPort,
      startedAt: host.now().toISOString(),
      agentToken,
    };
    await writeReplicaRecord(host.dataDir, record);
    timeline?.mark(`${spec.service} sandbox spawned`);
    host.log(`replica ${spec.index} of ${spec.service} in workspace ${workspace.id} started (pid ${record.pid}) at ${record.host}`);
    return record;
  } catch (error) {
    await removePodCgroup(host, cgroup); // a pod that did not start leaves no cgroup
    throw error;
  } finally {
    await closeMounts(mounts);
    await memoryEvents?.close();
  }
}

interface PodInput {
  host: ReplicaPodHost;
  workspace: WorkspaceRef;
  spec: ReplicaSpec;
  placement: ReplicaPlacement;
  netns?: string;
  dir: string;
  mounts: OpenMount[];
  agentEnv: Record<string, string>;
  /** The pod's cgroup's memory events (pod-limits.ts), open: `ip netns exec` shows the pod another /sys. */
  memoryEvents?: FileHandle;
}

/** `mounts` from descriptor 4 on, then the cgroup's memory events read-only. */
function descriptorBindsOf(pod: PodInput): DescriptorBind[] {
  const mounts = pod.mounts.map((mount, i) => ({ fd: FIRST_MOUNT_FD + i, target: mount.target }));
  return pod.memoryEvents ? [...mounts, { fd: FIRST_MOUNT_FD + mounts.length, target: POD_MEMORY_EVENTS_FILE, readOnly: true }] : mounts;
}

function replicaAgentEnv(endpoint: { bindHost: string; agentPort: number }): Record<string, string> {
  return {
    [replicaEnv.mode]: 'replica',
    [replicaEnv.dir]: REPLICA_POD_DIR,
    [agentEnv.agentHost]: endpoint.bindHost,
    [agentEnv.agentPort]: String(endpoint.agentPort),
  };
}

/** A `steps` replica: the host's system, the volume at /data/app. */
async function stepsPod(pod: PodInput): Promise<{ file: string; args: string[] }> {
  const { host, workspace, spec } = pod;
  const binds = agentBinds(await bundleFor(host), host.nodePath);
  const nix = await nixOf(host, workspace, undefined, spec.nixWritable ?? false);
  const parts = await workspaceSandboxParts(host, workspace);
  return sandboxCommand({
    nix: nix.own,
    seccomp: podSeccompFile(host.dataDir),
    uid: workspace.uid,
    switchUser: host.asRoot,
    netns: pod.netns,
    isolateNetwork: false,
    hostname: `${spec.service}-${spec.index}`,
    volumeDir: parts.volumeDir,
    volumeAt: parts.volumeAt,
    readOnlyBinds: [...binds, { source: pod.placement.hostsFile, target: '/etc/hosts' }, ...parts.identityBinds, ...(await resolvConfBinds(host.dataDir))],
    writableBinds: [{ source: pod.dir, target: REPLICA_POD_DIR }],
    descriptorBinds: descriptorBindsOf(pod),
    env: { ...parts.identityEnv, ...pod.agentEnv, [agentEnv.workspaceDir]: POD_APP_DIR, [agentEnv.userHome]: POD_HOME_DIR },
    infoFd: 3,
    dieWithParent: false,
    script: agentScript(host, binds),
  });
}

/**
 * A `steps` replica from its `image`: the image's root read-only, the volume at /data/app, the workspace's /nix, the
 * steps run by the image's shell; the agent runs on the host's node as in a container pod.
 */
async function imageStepsPod(pod: PodInput, image: PinnedRoot): Promise<{ file: string; args: string[] }> {
  const { host, workspace, spec } = pod;
  const root = await readImageRoot(image.rootfs);
  const shell = await imageShell(image.rootfs);
  if (!shell) throw new RuntimeFailure('agent', `the image ${image.image} has no shell (/bin/bash or /bin/sh) to run the steps with`);
  const nix = await nixOf(host, workspace, { root, image: image.image }, spec.nixWritable ?? false);
  const identity = await writeWorkspaceIdentity(workspace, replicaIdentityBase(host.dataDir, workspace.id, spec.service, spec.index), image.rootfs, shell);
  const hostNode = await hostNodeFor(host.nodePath);
  return imagePodCommand({
    seccomp: podSeccompFile(host.dataDir),
    hostUid: workspace.uid,
    podUid: workspace.uid,
    switchUser: host.asRoot,
    netns: pod.netns,
    hostname: `${spec.service}-${spec.index}`,
    root,
    files: { hostsFile: pod.placement.hostsFile, passwdFile: identity.passwdFile, groupFile: identity.groupFile, resolvConf: await hostResolvConf(host.dataDir) },
    ownTop: IMAGE_POD_OWN_TOP,
    agent: { bundle: await bundleFor(host), hostNode },
    readOnlyBinds: splitBinds(nix.binds).readOnly,
    writableBinds: [{ source: pod.dir, target: REPLICA_POD_DIR }, { source: volumeDir(host, workspace.id), target: POD_VOLUME_DIR }, ...splitBinds(nix.binds).writable],
    descriptorBinds: descriptorBindsOf(pod),
    env: {
      PATH: DEFAULT_CONTAINER_PATH, LANG: 'C.UTF-8', ...identity.env, ...pod.agentEnv,
      [agentEnv.workspaceDir]: POD_APP_DIR, [agentEnv.userHome]: POD_HOME_DIR, [agentEnv.shell]: shell, [agentEnv.node]: agentNodeSetting(hostNode),
    },
    infoFd: 3,
    chdir: POD_APP_DIR,
  });
}

/** A `container` replica: the image's root read-only, no volume but its `mounts`, a passwd that knows the pod's UID. */
async function containerPod(pod: PodInput, container: ContainerProcess): Promise<{ file: string; args: string[] }> {
  const { host, workspace, spec } = pod;
  const rootfs = spec.container!.rootfs;
  const passwdFile = replicaPasswdFile(host.dataDir, workspace.id, spec.service, spec.index);
  await writeFile(passwdFile, await podPasswd(rootfs, container.uid, workspace.user?.login), { mode: 0o644 });
  const resolvConf = await hostResolvConf(host.dataDir);
  return imagePodCommand({
    seccomp: podSeccompFile(host.dataDir),
    hostUid: workspace.uid,
    podUid: container.uid,
    switchUser: host.asRoot,
    netns: pod.netns,
    hostname: `${spec.service}-${spec.index}`,
    root: await readImageRoot(rootfs),
    files: { hostsFile: pod.placement.hostsFile, passwdFile, resolvConf },
    agent: { bundle: await bundleFor(host), hostNode: await hostNodeFor(host.nodePath) },
    writableBinds: [{ source: pod.dir, target: REPLICA_POD_DIR }],
    descriptorBinds: descriptorBindsOf(pod),
    env: { PATH: DEFAULT_CONTAINER_PATH, HOME: DEFAULT_CONTAINER_HOME, LANG: 'C.UTF-8', ...pod.agentEnv, [agentEnv.workspaceDir]: '/' },
    infoFd: 3,
  });
}

function containerOf(spec: ReplicaSpec, workspace: WorkspaceRef): ContainerProcess {
  const process = containerProcessOf(spec.container!, spec.env, workspace.uid);
  if ('refused' in process) throw new RuntimeFailure('agent', process.refused);
  return process;
}

/**
 * Ends every process of the replica's pod, removes its cgroup and its network namespace (idempotent). `keepNetwork`:
 * the namespace stays, linked to the switch, for the next start of the replica (a sleep, a restart).
 */
export async function endReplicaPod(host: ReplicaPodHost, record: ReplicaRecord, options?: { keepNetwork?: boolean }): Promise<void> {
  await killPod(record);
  await removePodCgroup(host, host.cgroupNames.replica(record.workspaceId, record.service, record.index));
  if (record.netns && !options?.keepNetwork) await removeNetns(record.netns);
}

/**
 * The replica's namespace linked to the switch at `address`: the one a sleep kept when its link is there with that
 * address (one `ip` instead of six), else made afresh. Its link's other end is in the switch: a veth pair dies as a
 * whole, so the link is there only while the switch it was made with is (a switch not this installation's is never
 * kept, service-network.ts).
 */
async function joinServiceNetwork(netns: string, network: ServiceNetwork, link: string, address: string, prepared = false): Promise<void> {
  try {
    if (prepared) await bringUpServiceLink(network, netns).catch(() => undefined); // checked below
    if (await isLinkedAt(netns, address)) return;
    await createReplicaNetns(netns);
    await attachToServiceNetwork(network, netns, link, address);
  } catch (error) {
    await removeNetns(netns);
    throw new RuntimeFailure('agent', (error as Error).message);
  }
}

/**
 * The replica's namespace linked to the switch at `address` ahead of its start (a Sync pulling images), its link
 * down: nothing answers for the address until the start sets it up (joinServiceNetwork), so a namespace that no
 * start takes (a server that died meanwhile) never competes with a replica given the address later. A namespace a
 * sleep kept linked there stays as it is.
 */
export async function prepareServiceLink(netns: string, network: ServiceNetwork, link: string, address: string): Promise<void> {
  try {
    if (await isLinkedAt(netns, address)) return;
    await createReplicaNetns(netns);
    await attachToServiceNetwork(network, netns, link, address, { down: true });
  } catch (error) {
    await removeNetns(netns);
    throw new RuntimeFailure('agent', (error as Error).message);
  }
}

/** What the agent is told: needs reached by service name, and (as root) their agents' port to ask for failures. */
export function replicaConfigOf(spec: ReplicaSpec, timings: ReplicaTimings, ownNetwork: boolean, container?: ContainerProcess): ReplicaConfig {
  return {
    service: spec.service,
    index: spec.index,
    steps: container ? [] : spec.steps,
    container,
    env: spec.env,
    ports: spec.ports,
    health: spec.health,
    needs: spec.needs.map((need) => ({
      name: need.name,
      host: need.name,
      port: need.port,
      healthPath: need.healthPath,
      healthMode: need.healthMode,
      // without root every agent listens on a port of its own on loopback, so a name does not lead to one
      agentPort: ownNetwork ? DEFAULT_AGENT_PORT : undefined,
    })),
    image: spec.root && !container ? { image: spec.root.image, digest: spec.root.digest, env: imageEnv(spec.root.config.Env ?? []) } : undefined,
    timings,
  };
}

/** Creates a missing mount source in the volume as the workspace UID (never as root through the workspace's links). */
async function createVolumeDirectory(host: ReplicaPodHost, workspace: WorkspaceRef, from: string): Promise<void> {
  const command = sandboxCommand({
    seccomp: podSeccompFile(host.dataDir),
    uid: workspace.uid,
    switchUser: host.asRoot,
    isolateNetwork: true,
    hostname: `ws-${workspace.id}`,
    volumeDir: volumeDir(host, workspace.id),
    volumeAt: POD_VOLUME_DIR,
    readOnlyBinds: [],
    env: {},
    dieWithParent: true,
    script: `mkdir -p -- ${shellQuote(path.posix.join(POD_APP_DIR, from))}`,
  });
  const result = await runCommand(command.file, command.args, { timeoutMs: 30_000 });
  if (result.code !== 0) {
    throw new RuntimeFailure('agent', `the mount source ${from} could not be created: ${result.stderr.trim().split('\n').at(-1) ?? `exit code ${result.code}`}`);
  }
}

async function isLinkedAt(netns: string, address: string): Promise<boolean> {
  if (!(await netnsExists(netns))) return false;
  const shown = await runCommand('ip', ['-n', netns, '-o', '-4', 'addr', 'show', 'dev', POD_LINK, 'up']);
  return shown.code === 0 && shown.stdout.includes(` ${address}/${SERVICE_SUBNET_PREFIX} `);
}
