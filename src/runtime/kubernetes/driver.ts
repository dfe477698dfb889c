// The `kubernetes` runtime driver: a namespace per team, a PersistentVolumeClaim per workspace, the editor as a Pod
// running the agent, the one-off work on a volume (clone, prepare, usage, archive, restore) as Jobs, service
// replicas as Pods of their own (replica-driver.ts). States come from watches (cluster.ts feeds the object store),
// never from polling the API server; the agents are reached at their Pod IPs. A restarted server lists and watches
// again and so finds every pod and job of svc as it left them.
import { randomBytes } from 'node:crypto';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { fetchAgentStatus, awaitAgentChange } from '../local/agent-client.ts';
import { DEFAULT_AGENT_PORT } from '../../agent/protocol.ts';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL, SSH_PROTOCOL } from '../../core/channel-protocol.ts';
import { AGENT_EDITOR_GIT_PATH, EDITOR_GIT_PROTOCOL, execRequestTarget, forwardRequestTarget, sshRequestTarget } from '../../agent/stream-protocol.ts';
import { workspacePlan, type InstallationPlans } from '../../capacity/plans.ts';
import {
  RuntimeFailure, type EditorAddress, type EditorDescription, type EditorState, type GitSource, type PodTarget, type ProgressReporter,
  type RuntimeDriver, type VolumeUsage, type WorkspaceRef,
} from '../driver.ts';
import { apiErrorText, Cluster } from './cluster.ts';
import { connectAgent, type AgentEndpoint } from '../agent-connection.ts';
import { checkStepKey, readStageStepLog, runStageStepOverExec, stageStepDir } from './agent-streams.ts';
import {
  agentTokenSecret, agentTokenSecretName, archivePath, editorPodManifest, jobName, labelKeys, replicaPodName, teamManifests, teamNamespace,
  volumeClaimName, volumeJobManifest, workspaceNetworkPolicy, volumeClaimManifest, workspaceName, type KubernetesSettings, type VolumeJobKind,
  type WorkspaceManifestInput,
} from './manifests.ts';
import { editorPodState, isGone, jobOutcome, kubernetesProgress, lastLine } from './pod-state.ts';
import { createReplicaDriver, type ReplicaDriverHost } from './replica-driver.ts';
import { createManagedRunner } from './managed-driver.ts';
import { managedProcessRef } from '../managed-process.ts';
import { createKubernetesWorkspaceFiles } from './workspace-files.ts';
import { RecentMeasures } from './recent-measures.ts';
import { onEditorPodLoss } from './editor-loss.ts';

export interface KubernetesDriverOptions {
  cluster: Cluster;
  settings: KubernetesSettings;
  plans: InstallationPlans;
  /** Where the server keeps stage steps' logs and stopped replicas' logs. */
  dataDir: string;
  /** The editor's shell command in editor pods; the agent's built-in editor without it. */
  editorCommand?: string;
  log?: (message: string) => void;
  /** How long a pod may take to run (scheduling, image pulls, the agent answering) before the start fails. */
  startTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 10 * 60_000;
/** The longest one wait for the agent's next change lasts, so a pod that died is noticed within it. */
const CHANGE_WAIT_MS = 1000;
/** How long the driver waits before asking an agent that did not answer again (a refused connection returns at once). */
const AGENT_RETRY_MS = 200;
/** How long a volume's measured use is answered without measuring again. */
const USAGE_FRESH_MS = 30_000;

export async function createKubernetesDriver(options: KubernetesDriverOptions): Promise<RuntimeDriver> {
  const { cluster, settings } = options;
  const log = options.log ?? (() => undefined);
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  await cluster.watch(log, settings.installation);
  log(`kubernetes: watching svc's pods and jobs; ${cluster.pods.list().length} pods found`);

  const teamOf = (workspace: WorkspaceRef): number => {
    if (workspace.teamId === undefined) throw new Error(`workspace ${workspace.id} came without its team`);
    return workspace.teamId;
  };
  const teamRefOf = (workspace: WorkspaceRef) => ({ id: teamOf(workspace), installation: settings.installation });
  const namespaceOf = (workspace: WorkspaceRef) => teamNamespace(teamRefOf(workspace));
  /** A pod of the workspace by name, in whichever team namespace the watches saw it (reads need no team). */
  const podNamed = (workspace: WorkspaceRef, name: string): V1Pod | undefined => {
    if (workspace.teamId !== undefined) return cluster.pods.get(teamNamespace({ id: workspace.teamId, installation: settings.installation }), name);
    return cluster.pods.list((pod) => pod.metadata?.name === name && pod.metadata.labels?.[labelKeys.workspace] === String(workspace.id))[0];
  };
  const editorPod = (workspace: WorkspaceRef) => podNamed(workspace, `${workspaceName(workspace.id)}-editor`);

  const limitsOf = (workspace: WorkspaceRef) => workspacePlan(options.plans, workspace.plan ?? options.plans.workspace.default) ?? workspacePlan(options.plans, options.plans.workspace.default)!;

  const manifestInput = async (workspace: WorkspaceRef): Promise<WorkspaceManifestInput> => ({
    team: teamRefOf(workspace),
    workspace: { ...workspace, restricted: workspace.restricted ?? false },
    limits: limitsOf(workspace),
    editorCommand: options.editorCommand,
    services: [],
    serviceAddresses: await serviceAddresses(workspace),
  });

  /** The cluster IPs of the workspace's Services (service name to address), for the pods' /etc/hosts. */
  const serviceAddresses = async (workspace: WorkspaceRef): Promise<Record<string, string>> => {
    const services = await cluster.list<{ metadata?: { labels?: Record<string, string> }; spec?: { clusterIP?: string } }>('v1', 'Service', namespaceOf(workspace), `${labelKeys.workspace}=${workspace.id}`);
    const addresses: Record<string, string> = {};
    for (const service of services) {
      const name = service.metadata?.labels?.[labelKeys.service];
      const ip = service.spec?.clusterIP;
      if (name && ip && ip !== 'None') addresses[name] = ip;
    }
    return addresses;
  };

  const ensuredTeams = new Set<number>();
  const ensureTeam = async (teamId: number) => {
    if (ensuredTeams.has(teamId)) return;
    // policies are written again (an older svc's may admit more than they say); the rest is kept as it is
    for (const manifest of teamManifests({ id: teamId, installation: settings.installation }, settings)) {
      await (manifest.kind === 'NetworkPolicy' ? cluster.put(manifest) : cluster.ensure(manifest));
    }
    ensuredTeams.add(teamId);
  };

  /** The workspace's agent token: the one its Secret holds, else a new one in a new Secret. */
  const agentToken = async (workspace: WorkspaceRef): Promise<string> => {
    const namespace = namespaceOf(workspace);
    const found = await cluster.secretValue(namespace, agentTokenSecretName(workspace.id), 'token');
    if (found) return found;
    const token = randomBytes(32).toString('base64url');
    await cluster.put(agentTokenSecret(teamRefOf(workspace), workspace.id, token));
    return token;
  };

  const waitGone = async (namespace: string, name: string) => {
    await cluster.pods.waitFor(namespace, name, (pod) => pod === undefined, AbortSignal.timeout(startTimeoutMs));
  };

  /**
   * Runs a volume Job to its end and answers its output. A Job of that name still running (a server died during
   * the operation) is waited for, not started twice; an ended one is removed first.
   */
  const runJob = async (workspace: WorkspaceRef, kind: VolumeJobKind, stage: RuntimeFailure['stage'], source?: GitSource): Promise<string> => {
    const namespace = namespaceOf(workspace);
    const name = jobName(workspace.id, kind, 1);
    const existing = cluster.jobs.get(namespace, name);
    const adopted = existing !== undefined && jobOutcome(existing).state === 'running' && !existing.metadata?.deletionTimestamp;
    if (existing && !adopted) {
      await cluster.remove('batch/v1', 'Job', namespace, name);
      await cluster.jobs.waitFor(namespace, name, (job) => job === undefined, AbortSignal.timeout(startTimeoutMs));
    }
    if (!adopted) {
      const input = await manifestInput(workspace);
      await cluster.ensure(volumeJobManifest(input, settings, { kind, attempt: 1, source }));
    }
    // The Job's own activeDeadlineSeconds ends it; the wait follows the Job, not a clock of the server's.
    const ended = (found: V1Job | undefined) => found === undefined || jobOutcome(found).state !== 'running';
    const job = adopted ? await cluster.jobs.waitFor(namespace, name, ended) : await cluster.jobs.waitForCreated(namespace, name, ended);
    const outcome = jobOutcome(job);
    // the Job's own pod (an earlier Job of the same name may have left one): the controller labels it with the Job's uid
    const pod = cluster.pods.list((p) => p.metadata?.namespace === namespace && p.metadata.labels?.['batch.kubernetes.io/controller-uid'] === job?.metadata?.uid)[0];
    const output = pod ? await cluster.podLog(namespace, pod.metadata!.name!, kind) : '';
    if (!job) throw new RuntimeFailure(stage, `the ${kind} job was deleted before it ended`);
    if (outcome.state === 'failed') throw new RuntimeFailure(stage, lastLine(output) ?? outcome.reason);
    return output;
  };

  const ensureVolume = async (workspace: WorkspaceRef) => {
    await ensureTeam(teamOf(workspace));
    const input = await manifestInput(workspace);
    await cluster.put(workspaceNetworkPolicy(input.team, workspace.id));
    await cluster.ensure(volumeClaimManifest(input, settings));
  };

  const endpointOfEditor = async (workspace: WorkspaceRef): Promise<AgentEndpoint> => {
    const pod = editorPod(workspace);
    const ip = pod?.status?.podIP;
    if (isGone(pod) || !ip) throw new RuntimeFailure('agent', 'The workspace is not running');
    return { host: ip, port: DEFAULT_AGENT_PORT, token: await agentToken(workspace) };
  };

  const replicas = createReplicaDriver({ cluster, settings, plans: options.plans, dataDir: options.dataDir, startTimeoutMs, manifestInput, agentToken, podNamed, namespaceOf, waitGone } satisfies ReplicaDriverHost);

  const endpointOf = async (workspace: WorkspaceRef, target: PodTarget): Promise<AgentEndpoint> => {
    if (target.kind === 'editor') return endpointOfEditor(workspace);
    const pod = podNamed(workspace, replicaPodName(workspace.id, target.service, target.index));
    const ip = pod?.status?.podIP;
    if (isGone(pod) || !ip) throw new RuntimeFailure('agent', `Replica ${target.index} of ${target.service} is not running`);
    return { host: ip, port: DEFAULT_AGENT_PORT, token: await agentToken(workspace) };
  };

  /** The editor's state: the pod's (watched), then its agent's own report of the editor. */
  const observeEditor = async (workspace: WorkspaceRef): Promise<EditorState> => {
    const state = editorPodState(editorPod(workspace));
    if (state.state !== 'ready') return state;
    const agent = await fetchAgentStatus(state.address.host, DEFAULT_AGENT_PORT);
    if (!agent) return { state: 'starting', statusText: kubernetesProgress.starting };
    if (agent.editor.state === 'failed') return { state: 'failed', failure: new RuntimeFailure('ide', agent.editor.reason ?? 'the editor exited') };
    if (agent.editor.state === 'starting') return { state: 'starting', statusText: kubernetesProgress.startingIde };
    return state;
  };

  // a volume's use is measured by a Job: one at a time per workspace, and a measure of the last 30 s is taken as it is
  const usage = new RecentMeasures<number, VolumeUsage>(USAGE_FRESH_MS);

  const startEditor = async (workspace: WorkspaceRef, progress: ProgressReporter): Promise<EditorAddress> => {
    const namespace = namespaceOf(workspace);
    const name = `${workspaceName(workspace.id)}-editor`;
    const found = editorPod(workspace);
    if (found && (isGone(found) || editorPodState(found).state === 'failed')) {
      await cluster.remove('v1', 'Pod', namespace, name);
      await waitGone(namespace, name);
    }
    if (isGone(editorPod(workspace))) {
      await ensureVolume(workspace);
      await agentToken(workspace);
      await cluster.ensure(editorPodManifest(await manifestInput(workspace), settings));
    }
    const deadline = AbortSignal.timeout(startTimeoutMs);
    let shown = '';
    const show = (text: string) => {
      if (text !== shown) progress((shown = text));
    };
    show(kubernetesProgress.starting);
    // the pod's state from the watch: scheduled, pulled, the agent's readiness probe passing
    const pod = await cluster.pods.waitForCreated(namespace, name, (current) => {
      const state = editorPodState(current);
      if (state.state === 'starting') show(state.statusText);
      return state.state !== 'starting';
    }, deadline).catch(() => {
      throw new RuntimeFailure('agent', `the editor pod did not run within ${Math.round(startTimeoutMs / 1000)}s (${shown})`);
    });
    const state = editorPodState(pod);
    if (state.state === 'absent') throw new RuntimeFailure('agent', 'the editor pod was deleted while it started');
    if (state.state === 'failed') throw state.failure;
    if (state.state !== 'ready') throw new RuntimeFailure('agent', 'the editor pod did not start');
    // then the agent's report of the editor, waiting on its changes (status-server.ts) rather than asking again
    show(kubernetesProgress.startingIde);
    while (!deadline.aborted) {
      const agent = await awaitAgentChange(state.address.host, DEFAULT_AGENT_PORT, CHANGE_WAIT_MS);
      if (agent?.editor.state === 'ready') return state.address;
      if (agent?.editor.state === 'failed') throw new RuntimeFailure('ide', agent.editor.reason ?? 'the editor exited');
      if (isGone(editorPod(workspace))) throw new RuntimeFailure('agent', 'the editor pod ended while the editor started');
      // an agent that does not answer yet: wait for the pod's next change, or a moment
      if (!agent) await cluster.pods.nextChange(namespace, name, AbortSignal.timeout(AGENT_RETRY_MS)).catch(() => undefined);
    }
    throw new RuntimeFailure('ide', `the editor did not answer within ${Math.round(startTimeoutMs / 1000)}s`);
  };

  const managedImage = settings.managedImage;
  const managedProcesses = managedImage
    ? createManagedRunner({
      cluster, settings: { ...settings, managedImage }, startTimeoutMs,
      ensureWorkspace: async (workspace) => {
        await ensureTeam(teamOf(workspace));
        await cluster.put(workspaceNetworkPolicy(teamRefOf(workspace), workspace.id));
      },
    })
    : undefined;

  const editor: EditorDescription = options.editorCommand
    ? { kind: 'command', reason: 'the operator configured an editor command' }
    : { kind: 'built-in', reason: 'the Kubernetes driver runs the agent\'s built-in editor unless an editor command is configured' };

  return {
    name: 'kubernetes',
    editor,
    files: createKubernetesWorkspaceFiles(endpointOfEditor),
    ...(managedProcesses
      ? {
        managedProcesses,
        // the router reaches an instance's HTTP endpoint (NATS monitoring) at its Pod IP
        managedServiceAddress: (workspace: WorkspaceRef, name: string) => managedProcesses.address(managedProcessRef(workspace, name)),
      }
      : { managedUnavailable: 'The Kubernetes driver runs managed services only in the managed image, and none is configured: set --kube-managed-image (SVC_KUBE_MANAGED_IMAGE).' }),
    createVolume: ensureVolume,
    deleteVolume: async (workspace) => {
      const namespace = namespaceOf(workspace);
      await cluster.remove('v1', 'PersistentVolumeClaim', namespace, volumeClaimName(workspace.id));
      await cluster.remove('networking.k8s.io/v1', 'NetworkPolicy', namespace, workspaceName(workspace.id));
      await cluster.remove('v1', 'Secret', namespace, agentTokenSecretName(workspace.id));
      // what its replicas left (their config Secrets and their services' names) and its ended volume Jobs (clone,
      // usage, archive: kept after they end so their output can be read), their pods with them
      for (const [apiVersion, kind] of [['v1', 'Secret'], ['v1', 'Service'], ['batch/v1', 'Job']]) {
        for (const object of await cluster.list<{ metadata?: { name?: string } }>(apiVersion, kind, namespace, `${labelKeys.workspace}=${workspace.id}`)) {
          if (object.metadata?.name) await cluster.remove(apiVersion, kind, namespace, object.metadata.name);
        }
      }
    },
    volumeUsage: (workspace) => usage.of(workspace.id, async () => {
      // a workspace without a volume (archived, deleted) uses nothing; a Job would wait for the claim forever
      if (!(await cluster.read('v1', 'PersistentVolumeClaim', namespaceOf(workspace), volumeClaimName(workspace.id)))) return { bytes: 0 };
      const output = await runJob(workspace, 'usage', 'prepare-volume');
      const kib = Number(lastLine(output));
      if (!Number.isFinite(kib)) throw new RuntimeFailure('prepare-volume', `the usage job answered "${lastLine(output) ?? ''}"`);
      return { bytes: kib * 1024 };
    }),
    cloneRepository: async (workspace, source, progress) => {
      progress('Cloning repository');
      await runJob(workspace, 'clone', 'clone', source);
    },
    prepareEmptyVolume: async (workspace, progress) => {
      progress('Preparing the volume');
      await runJob(workspace, 'prepare', 'prepare-volume');
    },
    startEditor,
    stopWorkspace: async (workspace) => {
      const namespace = namespaceOf(workspace);
      const name = `${workspaceName(workspace.id)}-editor`;
      await replicas.stopAll(workspace);
      await cluster.remove('v1', 'Pod', namespace, name);
      await waitGone(namespace, name);
    },
    editorState: observeEditor,
    onEditorExit: (listener) => onEditorPodLoss(cluster.pods, listener),
    landscapeFilesFingerprint: async (workspace) => {
      const state = editorPodState(editorPod(workspace));
      if (state.state !== 'ready') return undefined;
      return (await fetchAgentStatus(state.address.host, DEFAULT_AGENT_PORT))?.landscapeFiles;
    },
    archiveVolume: async (workspace) => {
      usage.forget(workspace.id);
      await ensureTeam(teamOf(workspace));
      const output = await runJob(workspace, 'archive', 'prepare-volume');
      const match = /^([0-9a-f]{64}) (\d+)$/.exec(lastLine(output) ?? '');
      if (!match) throw new RuntimeFailure('prepare-volume', `the archive job did not report the archive (${archivePath(workspace.id)})`);
      await cluster.remove('v1', 'PersistentVolumeClaim', namespaceOf(workspace), volumeClaimName(workspace.id));
      return { sha256: match[1], bytes: Number(match[2]) };
    },
    restoreVolume: async (workspace) => {
      usage.forget(workspace.id);
      await ensureVolume(workspace);
      await runJob(workspace, 'restore', 'prepare-volume');
    },
    close: async () => {
      await replicas.close();
      await cluster.close();
    },
    startReplica: replicas.startReplica,
    stopReplica: replicas.stopReplica,
    replicaStates: replicas.replicaStates,
    replicaLogs: replicas.replicaLogs,
    removeReplica: replicas.removeReplica,
    runStageStep: async (workspace, key, step) => {
      checkStepKey(key);
      return runStageStepOverExec(await endpointOfEditor(workspace), stageStepDir(options.dataDir, workspace.id, key), step);
    },
    stageStepLogs: async (workspace, key, options2) => {
      checkStepKey(key);
      return readStageStepLog(stageStepDir(options.dataDir, workspace.id, key), options2);
    },
    openExec: async (workspace, target, spec) => {
      const { path, headers } = execRequestTarget(spec);
      return connectAgent(await endpointOf(workspace, target), path, headers, EXEC_PROTOCOL);
    },
    openPortForward: async (workspace, target, to) => {
      return connectAgent(await endpointOf(workspace, target), forwardRequestTarget(to), {}, PORT_FORWARD_PROTOCOL);
    },
    openEditorGit: async (workspace) => {
      return connectAgent(await endpointOf(workspace, { kind: 'editor' }), AGENT_EDITOR_GIT_PATH, {}, EDITOR_GIT_PROTOCOL);
    },
    openSsh: async (workspace, spec) => {
      const { path, headers } = sshRequestTarget(spec);
      return connectAgent(await endpointOf(workspace, { kind: 'editor' }), path, headers, SSH_PROTOCOL);
    },
  };
}

export { apiErrorText };
