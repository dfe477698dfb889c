// What the Kubernetes driver reads off the objects its watches deliver: an editor pod's state (spec 3.1's status
// texts, "Waiting for a node: <reason>" while the scheduler places it nowhere), why a pod went away (a node drain),
// a replica's observation and a Job's outcome. Pure: objects in, states out.
import type { V1Job as IJob, V1Pod as IPod } from '@kubernetes/client-node';
import { DEFAULT_EDITOR_PORT } from '../../agent/protocol.ts';
import type { ReplicaAgentStatus } from '../../agent/replica-protocol.ts';
import { RuntimeFailure, type EditorState, type ReplicaObservation } from '../driver.ts';

export const kubernetesProgress = {
  starting: 'Starting',
  startingIde: 'Starting IDE',
  waitingForNode: (reason: string) => `Waiting for a node: ${reason}`,
} as const;

/** Container waiting reasons that will not pass by themselves: the pod failed. */
const FAILED_WAITING = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError', 'CrashLoopBackOff', 'RunContainerError']);

/** The scheduler's reason when it placed the pod on no node (`0/3 nodes are available: ...`), else undefined. */
export function unschedulableReason(pod: IPod): string | undefined {
  if (pod.spec?.nodeName) return undefined;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  return (scheduled.message ?? scheduled.reason).trim();
}

/** Why the pod was (or is being) taken away by the cluster rather than by svc: a drain or an eviction. */
export type PodLoss = 'node-drained';

/**
 * A pod the cluster took away: evicted (status reason `Evicted`), or marked for it (condition `DisruptionTarget`,
 * set by the eviction API a `kubectl drain` uses, the taint manager and the kubelet's shutdown).
 */
export function podLossOf(pod: IPod): PodLoss | undefined {
  if (pod.status?.reason === 'Evicted' || pod.status?.reason === 'Terminated' || pod.status?.reason === 'Shutdown') return 'node-drained';
  const disruption = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  return disruption?.status === 'True' ? 'node-drained' : undefined;
}

/** The first container (init containers first) that waits for a reason that will not pass, as a failure reason. */
export function podFailure(pod: IPod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const status of statuses) {
    const waiting = status.state?.waiting;
    if (waiting?.reason && FAILED_WAITING.has(waiting.reason)) return `${status.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
  }
  if (pod.status?.phase === 'Failed') return pod.status.message ?? pod.status.reason ?? 'the pod failed';
  return undefined;
}

export const isReady = (pod: IPod) => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** A pod that no longer runs and will not run again: svc deleted it, it ended, or the cluster took it away. */
export function isGone(pod: IPod | undefined): boolean {
  if (!pod) return true;
  if (pod.metadata?.deletionTimestamp) return true;
  return pod.status?.phase === 'Succeeded' || (pod.status?.phase === 'Failed' && podLossOf(pod) !== undefined);
}

/**
 * The editor pod's state. `ready` needs the pod Ready (its readiness probe is the agent's `GET /status`) and an IP;
 * the editor itself answering is the driver's next check (the agent's own report), as with the local driver.
 */
export function editorPodState(pod: IPod | undefined): EditorState {
  if (isGone(pod)) return { state: 'absent' };
  const failure = podFailure(pod!);
  if (failure) return { state: 'failed', failure: new RuntimeFailure('agent', failure) };
  const waiting = unschedulableReason(pod!);
  if (waiting) return { state: 'starting', statusText: kubernetesProgress.waitingForNode(waiting) };
  const ip = pod!.status?.podIP;
  if (!isReady(pod!) || !ip) return { state: 'starting', statusText: kubernetesProgress.starting };
  return { state: 'ready', address: { host: ip, port: DEFAULT_EDITOR_PORT } };
}

/**
 * A replica pod's observation: what its agent reports (the agent decides `running`, `finished`, `failure`), or
 * what Kubernetes says while no agent answers. Pods svc stopped read `stopped` (the caller keeps that mark).
 */
export function replicaPodObservation(pod: IPod, service: string, index: number, agent: ReplicaAgentStatus | undefined): ReplicaObservation {
  const restarts = pod.status?.containerStatuses?.reduce((sum, s) => sum + (s.restartCount ?? 0), 0) ?? 0;
  const base = { service, index, restarts, ...(pod.status?.podIP ? { address: { host: pod.status.podIP } } : {}) };
  if (pod.metadata?.deletionTimestamp) return { ...base, status: 'stopped', ready: false };
  const failure = podFailure(pod);
  if (failure) return { ...base, status: 'failure', detail: failure, ready: false };
  const waiting = unschedulableReason(pod);
  if (waiting) return { ...base, status: 'starting', detail: kubernetesProgress.waitingForNode(waiting), ready: false };
  if (!agent) return { ...base, status: 'starting', ready: false };
  const report = agent.replica;
  return { ...base, status: report.status, ...(report.detail ? { detail: report.detail } : {}), ready: report.ready, restarts: Math.max(restarts, report.restarts) };
}

export type JobOutcome = { state: 'running' } | { state: 'succeeded' } | { state: 'failed'; reason: string };

/** A Job's outcome from its conditions (`Complete`, `Failed` with the controller's reason, e.g. DeadlineExceeded). */
export function jobOutcome(job: IJob | undefined): JobOutcome {
  const conditions = job?.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return { state: 'succeeded' };
  const failed = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed) return { state: 'failed', reason: failed.message ?? failed.reason ?? 'the job failed' };
  return { state: 'running' };
}

/** The last non-empty line of a job's output: the reason a failed clone shows ("Cloning the repository failed: ..."). */
export function lastLine(output: string): string | undefined {
  return output.split('\n').map((line) => line.trim()).filter(Boolean).at(-1);
}
