// Service replicas on the Kubernetes driver: each replica a Pod of its own (`ws-<id>-<service>-<index>`) running the
// agent in replica mode, its config.json in a Secret, its service's name a Service. The config Secret outlives the
// pod: a replica whose Secret remains but whose pod is gone reads `stopped` (after a server restart too). The
// replica's log is its container's output (the agent writes JSON lines there); a stopped replica's last log is kept
// by the server under <data dir>/kubernetes/replica-logs/. A replica's pod is a bare Pod (no controller makes it
// again): one this server started and did not stop that is deleted behind svc's back (`kubectl delete pod`) is made
// again from the same manifest when the watch sees it gone.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { parseLogLine, type LogLine } from '../../agent/log-file.ts';
import { DEFAULT_AGENT_PORT } from '../../agent/protocol.ts';
import { defaultReplicaTimings, type ReplicaTimings } from '../../agent/replica-protocol.ts';
import { servicePlan, type InstallationPlans } from '../../capacity/plans.ts';
import { containerProcessOf } from '../container-process.ts';
import { RuntimeFailure, type ReplicaDriver, type ReplicaObservation, type ReplicaSpec, type WorkspaceRef } from '../driver.ts';
import { fetchReplicaStatus } from '../local/agent-client.ts';
import { selectLogLines } from '../local/log-read.ts';
import { replicaConfigOf } from '../local/replica-pods.ts';
import type { IPod } from 'kubernetes-models/v1';
import type { Cluster } from './cluster.ts';
import { objectKey } from './object-store.ts';
import { labelKeys, replicaPodConfigSecretName, replicaPodName, type KubernetesSettings, type ServiceManifestInput, type WorkspaceManifestInput } from './manifests.ts';
import { isGone, replicaPodObservation, unschedulableReason, podFailure } from './pod-state.ts';
import { replicaConfigSecret, replicaIndexOf, replicaPodManifest } from './replica-pods.ts';
import { serviceManifest } from './replicas.ts';

export interface ReplicaDriverHost {
  cluster: Cluster;
  settings: KubernetesSettings;
  plans: InstallationPlans;
  dataDir: string;
  startTimeoutMs: number;
  replicaTimings?: ReplicaTimings;
  manifestInput(workspace: WorkspaceRef): Promise<WorkspaceManifestInput>;
  agentToken(workspace: WorkspaceRef): Promise<string>;
  podNamed(workspace: WorkspaceRef, name: string): V1Pod | undefined;
  namespaceOf(workspace: WorkspaceRef): string;
  waitGone(namespace: string, name: string): Promise<void>;
}

export type KubernetesReplicaDriver = Required<Pick<ReplicaDriver, 'startReplica' | 'stopReplica' | 'replicaStates' | 'replicaLogs' | 'removeReplica'>> & {
  stopAll(workspace: WorkspaceRef): Promise<void>;
  close(): Promise<void>;
};

/** How long one wait for a replica's agent lasts before the pod's state is looked at again. */
const AGENT_WAIT_MS = 250;

const savedLogFile = (dataDir: string, workspaceId: number, service: string, index: number) =>
  path.join(dataDir, 'kubernetes', 'replica-logs', String(workspaceId), `${service}-${index}.jsonl`);

export function parseLogOutput(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const row of text.split('\n')) {
    const line = parseLogLine(row);
    // a restarted agent begins at seq 1 again: only the last run's lines count
    if (line && lines.length > 0 && line.seq <= lines.at(-1)!.seq) lines.length = 0;
    if (line) lines.push(line);
  }
  return lines;
}

export function createReplicaDriver(host: ReplicaDriverHost): KubernetesReplicaDriver {
  const { cluster } = host;
  const timings = host.replicaTimings ?? defaultReplicaTimings;

  const serviceInput = (spec: ReplicaSpec): ServiceManifestInput => ({
    spec,
    replicas: 1,
    limits: servicePlan(host.plans, spec.plan) ?? servicePlan(host.plans, undefined)!,
  });

  /** The replicas this server started and has not stopped since, by pod key: their manifests, to make them again. */
  const kept = new Map<string, IPod>();
  const keyOfReplica = (workspace: WorkspaceRef, service: string, index: number) => objectKey(host.namespaceOf(workspace), replicaPodName(workspace.id, service, index));
  const stopWatching = cluster.pods.onChange((event, pod) => {
    if (event !== 'delete') return;
    const manifest = kept.get(objectKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? ''));
    // a new pod of that name: replicaStates reads it as starting, then running; if it cannot be made, `stopped`
    if (manifest) void cluster.ensure(manifest).catch(() => undefined);
  });

  const podLog = async (workspace: WorkspaceRef, pod: V1Pod) => cluster.podLog(host.namespaceOf(workspace), pod.metadata!.name!, 'replica');

  const stopReplica = async (workspace: WorkspaceRef, service: string, index: number) => {
    const name = replicaPodName(workspace.id, service, index);
    kept.delete(keyOfReplica(workspace, service, index));
    const pod = host.podNamed(workspace, name);
    if (!pod) return;
    const file = savedLogFile(host.dataDir, workspace.id, service, index);
    const output = await podLog(workspace, pod).catch(() => '');
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, output, { mode: 0o600 });
    await cluster.remove('v1', 'Pod', host.namespaceOf(workspace), name);
    await host.waitGone(host.namespaceOf(workspace), name);
  };

  /** Every replica of the workspace: those with a config Secret (started once, not removed), by service and index. */
  const knownReplicas = async (workspace: WorkspaceRef): Promise<Array<{ service: string; index: number }>> => {
    const secrets = await cluster.list<{ metadata?: { labels?: Record<string, string> } }>('v1', 'Secret', host.namespaceOf(workspace), `${labelKeys.workspace}=${workspace.id},${labelKeys.replica}`);
    return secrets
      .map((secret) => ({ service: secret.metadata?.labels?.[labelKeys.service], index: replicaIndexOf(secret) }))
      .filter((r): r is { service: string; index: number } => r.service !== undefined && r.index !== undefined);
  };

  return {
    async startReplica(workspace, spec) {
      const namespace = host.namespaceOf(workspace);
      const name = replicaPodName(workspace.id, spec.service, spec.index);
      const input0 = await host.manifestInput(workspace);
      await cluster.ensure(serviceManifest(input0, serviceInput(spec)));
      const input = await host.manifestInput(workspace); // with the Service's cluster IP in the hosts
      let container;
      if (spec.container) {
        const process = containerProcessOf(spec.container, spec.env, workspace.uid);
        if ('refused' in process) throw new RuntimeFailure('agent', process.refused);
        container = process;
      }
      const config = { ...replicaConfigOf(spec, timings, true, container), agentToken: await host.agentToken(workspace) };
      kept.delete(keyOfReplica(workspace, spec.service, spec.index));
      if (host.podNamed(workspace, name)) {
        await cluster.remove('v1', 'Pod', namespace, name);
        await host.waitGone(namespace, name);
      }
      await cluster.put(replicaConfigSecret(input, spec, config));
      await rm(savedLogFile(host.dataDir, workspace.id, spec.service, spec.index), { force: true });
      const manifest = replicaPodManifest(input, serviceInput(spec), spec.index, host.settings);
      await cluster.ensure(manifest);
      kept.set(keyOfReplica(workspace, spec.service, spec.index), manifest);
      const deadline = AbortSignal.timeout(host.startTimeoutMs);
      const running = (pod: V1Pod | undefined) => isGone(pod) || podFailure(pod!) !== undefined || Boolean(pod!.status?.podIP && pod!.status.containerStatuses?.some((s) => s.state?.running));
      const pod = await cluster.pods.waitForCreated(namespace, name, running, deadline).catch(() => {
        const current = host.podNamed(workspace, name);
        const waiting = current && unschedulableReason(current);
        throw new RuntimeFailure('agent', waiting ? `Waiting for a node: ${waiting}` : `the replica's pod did not run within ${Math.round(host.startTimeoutMs / 1000)}s`);
      });
      if (isGone(pod)) throw new RuntimeFailure('agent', `replica ${spec.index} of ${spec.service} was deleted while it started`);
      const failure = podFailure(pod!);
      if (failure) throw new RuntimeFailure('agent', failure);
      const ip = pod!.status!.podIP!;
      // the agent listens a moment after its container starts; the pod's changes (or a short wait) pace the asks
      while (!deadline.aborted) {
        if (await fetchReplicaStatus(ip, DEFAULT_AGENT_PORT)) return { host: ip };
        if (isGone(host.podNamed(workspace, name))) throw new RuntimeFailure('agent', `replica ${spec.index} of ${spec.service} ended before its agent answered`);
        await cluster.pods.nextChange(namespace, name, AbortSignal.timeout(AGENT_WAIT_MS)).catch(() => undefined);
      }
      throw new RuntimeFailure('agent', `the agent of replica ${spec.index} of ${spec.service} did not answer`);
    },
    stopReplica,
    async stopAll(workspace) {
      const pods = cluster.pods.list((pod) => pod.metadata?.labels?.[labelKeys.workspace] === String(workspace.id) && replicaIndexOf(pod) !== undefined);
      for (const pod of pods) await stopReplica(workspace, pod.metadata!.labels![labelKeys.service], replicaIndexOf(pod)!);
    },
    async replicaStates(workspace) {
      const observations: ReplicaObservation[] = [];
      for (const { service, index } of await knownReplicas(workspace)) {
        const pod = host.podNamed(workspace, replicaPodName(workspace.id, service, index));
        if (isGone(pod)) {
          observations.push({ service, index, status: 'stopped', ready: false, restarts: 0 });
          continue;
        }
        const ip = pod!.status?.podIP;
        const agent = ip ? await fetchReplicaStatus(ip, DEFAULT_AGENT_PORT) : undefined;
        observations.push(replicaPodObservation(pod!, service, index, agent));
      }
      return observations.sort((a, b) => a.service.localeCompare(b.service) || a.index - b.index);
    },
    async replicaLogs(workspace, service, index, options) {
      const pod = host.podNamed(workspace, replicaPodName(workspace.id, service, index));
      const text = pod && !isGone(pod)
        ? await podLog(workspace, pod)
        : await readFile(savedLogFile(host.dataDir, workspace.id, service, index), 'utf8').catch(() => '');
      return selectLogLines(parseLogOutput(text), options);
    },
    async removeReplica(workspace, service, index) {
      await stopReplica(workspace, service, index);
      await cluster.remove('v1', 'Secret', host.namespaceOf(workspace), replicaPodConfigSecretName(workspace.id, service, index));
      await rm(savedLogFile(host.dataDir, workspace.id, service, index), { force: true });
    },
    async close() {
      stopWatching();
      kept.clear();
    },
  };
}
