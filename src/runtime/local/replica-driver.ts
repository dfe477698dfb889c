// The local driver's `steps` service replicas (the ReplicaDriver half of driver.ts, stage steps aside): one pod per
// replica (replica-pods.ts), the workspace's hosts file and service network kept in line with them, their statuses
// asked of their agents and their logs read from their directories. Changes to one workspace's replicas run one at
// a time; a restarted server finds everything again under <data dir>/pods/<id>/.
import { rm, stat } from 'node:fs/promises';
import type { PhaseTimeline } from '../../core/phases.ts';
import type { LogRead, ReplicaDriver, ReplicaObservation, ReplicaRef, ReplicaSpec, StopOptions, WorkspaceRef } from '../driver.ts';
import { RuntimeFailure } from '../driver.ts';
import { REPLICA_SLOTS, replicaAddressOf, replicaNetnsOf, replicaSwitchLinkOf, type ServiceNetwork } from './addresses.ts';
import { fetchReplicaStatus } from './agent-client.ts';
import { podFailureReason } from './editor-status.ts';
import { renderHostsFile, writeInPlace } from './hosts-file.ts';
import { appendSystemLines, readFileEnd, readLogLines, selectLogLines } from './log-read.ts';
import { podEnding, type WorkspaceWiring } from './pods.ts';
import { isSameProcess, pollUntil } from './processes.ts';
import {
  createRuntimeDirs, hostsFileOf, listReplicaRecords, readReplicaRecord, replicaDirOf, replicaOutputFile, replicaPasswdFile, replicaRecordFile,
  workspaceRuntimeDir, writeReplicaRecord, type ReplicaRecord,
} from './replica-files.ts';
import { endReplicaPod, launchReplicaPod, prepareServiceLink, type ReplicaPodHost } from './replica-pods.ts';
import { PreparedNamespaces } from './prepared-namespaces.ts';
import { EDITOR_SWITCH_LINK, attachToServiceNetwork, ensureServiceNetwork, removeRecordedServiceNetwork, serviceLinkMark } from './service-network.ts';
import { networkOwner, removeNetns } from './network.ts';
import { ensureWorkspaceLayout, exists, volumeDir } from './volumes.ts';
import { listManagedPlacements, placeManaged, relinkManagedPlacements, unplaceManaged } from './managed-placement.ts';
import { installationTag } from './installation.ts';

export interface ReplicaDriverHost extends ReplicaPodHost {
  serviceAddressRange: string;
  agentTimeoutMs: number;
}

export type WorkspaceQueue = <T>(id: number, work: () => Promise<T>) => Promise<T>;

export type LocalReplicaDriver = Omit<ReplicaDriver, 'runStageStep' | 'stageStepLogs'> & {
  /** The hosts file and (as root) the service network, ready before the workspace's editor pod starts. */
  wireEditor(workspace: WorkspaceRef): Promise<WorkspaceWiring>;
  /**
   * Stops every replica (they read `stopped`) and, once the editor pod is gone too, removes the service network,
   * unless the workspace is going to sleep: its wake then finds the network as it was.
   */
  stopAll(workspace: WorkspaceRef, options?: StopOptions): Promise<void>;
  /** Stops every replica and forgets the workspace's runtime files (its volume is going away). */
  forgetAll(workspace: WorkspaceRef): Promise<void>;
};

const SERVICE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function createLocalReplicaDriver(host: ReplicaDriverHost, serialized: WorkspaceQueue): LocalReplicaDriver {
  const runtimeDir = (id: number) => workspaceRuntimeDir(host.dataDir, id);

  const ensureNetwork = async (workspace: WorkspaceRef): Promise<ServiceNetwork | undefined> => {
    if (!host.asRoot) return undefined;
    const id = workspace.id;
    return ensureServiceNetwork(runtimeDir(id), id, host.serviceAddressRange, networkOwner(host.dataDir), workspace.egress).catch((error: Error) => {
      throw new RuntimeFailure('agent', `the workspace's service network could not be set up: ${error.message}`);
    });
  };

  /** Every service name with the addresses of its replicas that were not stopped, as every pod's /etc/hosts. */
  const rewriteHostsFile = async (id: number): Promise<void> => {
    const replicas = (await listReplicaRecords(host.dataDir, id)).filter((r) => !r.stoppedAt).map((r) => ({ name: r.service, address: r.host }));
    const managed = (await listManagedPlacements(host.dataDir, id)).map((p) => ({ name: p.name, address: p.address }));
    const entries = [...replicas, ...managed];
    await writeInPlace(hostsFileOf(host.dataDir, id), renderHostsFile(id, entries));
  };

  const managedAddresses = async (id: number) => (await listManagedPlacements(host.dataDir, id)).map((p) => p.address);

  const stopOne = async (record: ReplicaRecord, options?: StopOptions): Promise<void> => {
    await endReplicaPod(host, record, { keepNetwork: options?.sleeping });
    await writeReplicaRecord(host.dataDir, { ...record, stoppedAt: record.stoppedAt ?? host.now().toISOString() });
  };

  const launch = async (workspace: WorkspaceRef, spec: ReplicaSpec, timeline?: PhaseTimeline): Promise<ReplicaRecord> => {
    timeline?.mark(`${spec.service} queue`);
    if (!(await exists(volumeDir(host, workspace.id)))) throw new RuntimeFailure('agent', 'the workspace has no volume');
    await ensureWorkspaceLayout(host, workspace.id, workspace.uid);
    const earlier = await readReplicaRecord(host.dataDir, workspace.id, spec.service, spec.index);
    if (earlier) {
      // a start on a running replica starts it afresh, in its namespace; a stopped one's pod was ended by its stop
      if (!earlier.stoppedAt) await endReplicaPod(host, earlier, { keepNetwork: true });
      await rm(replicaRecordFile(host.dataDir, workspace.id, spec.service, spec.index), { force: true });
    }
    await createRuntimeDirs(host.dataDir, workspace.id);
    const network = await ensureNetwork(workspace);
    await rewriteHostsFile(workspace.id);
    timeline?.mark(`${spec.service} service network`);
    const others = (await listReplicaRecords(host.dataDir, workspace.id)).filter((r) => !r.stoppedAt);
    const preparedAt = prepared.take(workspace.id, spec); // taken in any case: this start now owns the namespace
    const preferred = earlier?.host ?? preparedAt;
    const address = network && freeAddress(network, [...others.map((r) => r.host), ...prepared.heldByOthers(workspace.id, spec)], preferred, await managedAddresses(workspace.id));
    const placement = {
      hostsFile: hostsFileOf(host.dataDir, workspace.id),
      network: network && address !== undefined ? { service: network, address, prepared: address === preparedAt } : undefined,
    };
    try {
      return await launchReplicaPod(host, workspace, spec, placement, timeline);
    } finally {
      await rewriteHostsFile(workspace.id);
    }
  };

  const observe = async (record: ReplicaRecord): Promise<ReplicaObservation> => {
    const base = { service: record.service, index: record.index, ready: false, restarts: 0 };
    if (record.stoppedAt) return { ...base, status: 'stopped' };
    if (record.failedToStart) return { ...base, status: 'failure', detail: record.failedToStart };
    const address = { host: record.host };
    if (!(await isSameProcess(record.pid, record.startTime))) {
      const output = await readFileEnd(replicaOutputFile(host.dataDir, record.workspaceId, record.service, record.index), 8192);
      return { ...base, address, status: 'failure', detail: podFailureReason(output) ?? endedSilently(record.pid) };
    }
    const answer = await fetchReplicaStatus(record.host, record.agentPort);
    if (!answer) return { ...base, address, status: 'starting' };
    const { status, detail, ready, restarts } = answer.replica;
    return { ...base, address, status, ready, restarts, ...(detail ? { detail } : {}) };
  };

  /**
   * Resolves once the new pod's agent answers; a pod that ends first fails the start with the reason it gave. Asked
   * every 10 ms for its first second (an agent usually answers within 100-300 ms; a refused connection costs next to
   * nothing), then every 50 ms.
   */
  const waitForAgent = async (record: ReplicaRecord): Promise<void> => {
    let answered = false;
    const check = async () => {
      answered = (await fetchReplicaStatus(record.host, record.agentPort, 500)) !== undefined;
      return answered || !(await isSameProcess(record.pid, record.startTime));
    };
    if (!(await pollUntil(check, Math.min(1000, host.agentTimeoutMs), 10))) await pollUntil(check, Math.max(0, host.agentTimeoutMs - 1000));
    if (answered) return;
    const observed = await observe((await readReplicaRecord(host.dataDir, record.workspaceId, record.service, record.index)) ?? record);
    if (observed.status === 'failure') throw new RuntimeFailure('agent', observed.detail ?? endedSilently(record.pid));
    if (observed.status === 'stopped') throw new RuntimeFailure('agent', `replica ${record.index} of ${record.service} was stopped while it started`);
    throw new RuntimeFailure('agent', `the agent of replica ${record.index} of ${record.service} did not answer within ${host.agentTimeoutMs / 1000} s`);
  };

  const prepared = new PreparedNamespaces();

  /** Each replica that does not run gets its namespace linked at the address its start will take (replica-pods.ts). */
  const prepareNow = async (workspace: WorkspaceRef, replicas: ReplicaRef[], made: ReplicaRef[]): Promise<void> => {
    const network = await ensureNetwork(workspace);
    if (!network) return;
    const records = await listReplicaRecords(host.dataDir, workspace.id);
    const taken = records.filter((r) => !r.stoppedAt).map((r) => r.host);
    const managed = await managedAddresses(workspace.id);
    for (const replica of replicas) {
      const record = records.find((r) => r.service === replica.service && r.index === replica.index);
      if (record && !record.stoppedAt) continue; // it runs (or failed): a start again keeps its namespace
      const address = freeAddress(network, [...taken, ...prepared.heldByOthers(workspace.id, replica)], record?.host, managed);
      await prepareServiceLink(replicaNetnsOf(installationTag(host.dataDir), workspace.id, replica.service, replica.index), network, replicaSwitchLinkOf(replica.service, replica.index), address);
      taken.push(address);
      prepared.put(workspace.id, replica, address);
      made.push(replica);
    }
  };

  /** Removes the namespaces of `made` that no start took (they hold an address no record shows). */
  const releasePrepared = async (workspace: WorkspaceRef, made: ReplicaRef[]): Promise<void> => {
    for (const replica of made) if (prepared.take(workspace.id, replica) !== undefined) await removeNetns(replicaNetnsOf(installationTag(host.dataDir), workspace.id, replica.service, replica.index));
  };

  return {
    async prepareReplicas(workspace, replicas) {
      if (!host.asRoot) return { release: async () => undefined };
      const made: ReplicaRef[] = [];
      await serialized(workspace.id, async () => {
        try {
          await prepareNow(workspace, replicas.map((r) => ({ service: r.service, index: r.index })), made);
        } catch (error) {
          await releasePrepared(workspace, made);
          throw error;
        }
      });
      return { release: () => serialized(workspace.id, () => releasePrepared(workspace, made)) };
    },

    async startReplica(workspace, spec, timeline) {
      checkSpec(spec);
      const record = await serialized(workspace.id, () => launch(workspace, spec, timeline));
      await waitForAgent(record);
      timeline?.mark(`${spec.service} agent answered`);
      return { host: record.host };
    },

    stopReplica: (workspace, service, index) =>
      serialized(workspace.id, async () => {
        const record = await readReplicaRecord(host.dataDir, workspace.id, service, index);
        if (!record) return;
        await stopOne(record);
        await rewriteHostsFile(workspace.id);
      }),

    async replicaStates(workspace) {
      return Promise.all((await listReplicaRecords(host.dataDir, workspace.id)).map(observe));
    },

    async replicaLogs(workspace, service, index, options): Promise<LogRead> {
      const lines = await readLogLines(replicaDirOf(host.dataDir, workspace.id, service, index));
      const record = await readReplicaRecord(host.dataDir, workspace.id, service, index);
      if (record && (await isSameProcess(record.pid, record.startTime))) return selectLogLines(lines, options);
      // the pod ended (or never started): what bubblewrap or a crashing agent printed follows the agent's own lines
      const outputFile = replicaOutputFile(host.dataDir, workspace.id, service, index);
      const written = await stat(outputFile).then((info) => info.mtime.toISOString(), () => host.now().toISOString());
      return selectLogLines(appendSystemLines(lines, await readFileEnd(outputFile, 65_536), written), options);
    },

    removeReplica: (workspace, service, index) =>
      serialized(workspace.id, async () => {
        const record = await readReplicaRecord(host.dataDir, workspace.id, service, index);
        if (record) await endReplicaPod(host, record);
        await rm(replicaRecordFile(host.dataDir, workspace.id, service, index), { force: true });
        await rm(replicaOutputFile(host.dataDir, workspace.id, service, index), { force: true });
        await rm(replicaPasswdFile(host.dataDir, workspace.id, service, index), { force: true });
        await rm(replicaDirOf(host.dataDir, workspace.id, service, index), { recursive: true, force: true });
        if (record) await rewriteHostsFile(workspace.id);
      }),

    wireEditor: (workspace) =>
      serialized(workspace.id, async () => {
        await createRuntimeDirs(host.dataDir, workspace.id);
        await rewriteHostsFile(workspace.id);
        const network = await ensureNetwork(workspace);
        // The workspace's managed services are reached again as soon as it runs, without a Sync.
        if (network) await relinkManagedPlacements(host.dataDir, workspace.id, network);
        const attach = network && {
          mark: await serviceLinkMark(network),
          link: (netns: string) => attachToServiceNetwork(network, netns, EDITOR_SWITCH_LINK, network.editorAddress, { route: false }),
        };
        return { hostsFile: hostsFileOf(host.dataDir, workspace.id), attach };
      }),

    stopAll: (workspace, options) =>
      serialized(workspace.id, async () => {
        const records = await listReplicaRecords(host.dataDir, workspace.id);
        for (const record of records) await stopOne(record, options);
        if (records.length > 0) await rewriteHostsFile(workspace.id);
        if (host.asRoot && !options?.sleeping) await removeRecordedServiceNetwork(runtimeDir(workspace.id));
      }),

    placeManagedService: (workspace, name) =>
      serialized(workspace.id, async () => {
        const network = await ensureNetwork(workspace);
        if (!network) throw new RuntimeFailure('agent', 'managed services run only when the server runs as root (they need the service network)');
        await createRuntimeDirs(host.dataDir, workspace.id);
        const replicas = (await listReplicaRecords(host.dataDir, workspace.id)).filter((r) => !r.stoppedAt).map((r) => r.host);
        const placement = await placeManaged(host.dataDir, workspace.id, network, name, replicas);
        await rewriteHostsFile(workspace.id);
        return { netns: placement.netns, address: placement.address };
      }),

    removeManagedService: (workspace, name) =>
      serialized(workspace.id, async () => {
        await unplaceManaged(host.dataDir, workspace.id, name);
        await rewriteHostsFile(workspace.id);
      }),

    managedServiceAddress: async (workspace, name) => (await listManagedPlacements(host.dataDir, workspace.id)).find((p) => p.name === name)?.address,

    forgetAll: (workspace) =>
      serialized(workspace.id, async () => {
        for (const placement of await listManagedPlacements(host.dataDir, workspace.id)) await unplaceManaged(host.dataDir, workspace.id, placement.name);
        for (const record of await listReplicaRecords(host.dataDir, workspace.id)) await endReplicaPod(host, record);
        if (host.asRoot) await removeRecordedServiceNetwork(runtimeDir(workspace.id));
        await rm(runtimeDir(workspace.id), { recursive: true, force: true });
      }),
  };
}

/** The replica's earlier (or prepared) address when no other replica holds it, else the first free one of the network. */
function freeAddress(network: ServiceNetwork, running: string[], earlier: string | undefined, managed: string[]): string {
  const taken = new Set([...running, ...managed]);
  const free = Array.from({ length: REPLICA_SLOTS }, (_, slot) => replicaAddressOf(network, slot)).filter((address) => !taken.has(address));
  if (free.length > 0) return earlier && free.includes(earlier) ? earlier : free[0];
  throw new RuntimeFailure('agent', `no address left on the workspace's service network: at most ${REPLICA_SLOTS} replicas run at once`);
}

/** A pod that ended without a word: how, when this server saw it end. */
function endedSilently(pid: number): string {
  const how = podEnding(pid);
  return how ? `The replica's pod ended (${how})` : "The replica's pod ended";
}

function checkSpec(spec: ReplicaSpec): void {
  if (!SERVICE_NAME.test(spec.service)) throw new RuntimeFailure('agent', `"${spec.service}" is not a service name`);
  if (!Number.isSafeInteger(spec.index) || spec.index < 0) throw new RuntimeFailure('agent', `${spec.index} is not a replica index`);
}
