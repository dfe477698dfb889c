// The Kubernetes driver's runner of managed instances (src/runtime/managed-process.ts): run writes the instance's
// Secret, claim, Service and StatefulSet (one replica) and waits on the watch for its pod to be Ready with the
// description asked for; pause scales the StatefulSet to zero and waits for the pod to be gone (the claim stays);
// remove deletes them all, the claim with the data included. The server reaches the instance at its Pod IP.
import type { V1Pod } from '@kubernetes/client-node';
import type { WorkspaceRef } from '../driver.ts';
import type { ManagedProcess, ManagedProcessRef, ManagedProcessRunner } from '../managed-process.ts';
import { apiErrorText, type Cluster } from './cluster.ts';
import {
  managedClaimManifest, managedPodState, managedSecretManifest, managedServiceManifest, managedStatefulSetManifest, processDigest,
  PROCESS_DIGEST_ANNOTATION, type ManagedManifestInput,
} from './managed.ts';
import { managedClaimName, managedObjectName, managedPodName, managedSecretName, teamNamespace } from './names.ts';
import type { KubernetesSettings } from './settings.ts';

export interface ManagedRunnerHost {
  cluster: Cluster;
  settings: KubernetesSettings & { managedImage: string };
  startTimeoutMs: number;
  /** The team's namespace and policies, and the workspace's policy (its pods reach each other), made once. */
  ensureWorkspace(workspace: WorkspaceRef): Promise<void>;
}

interface StatefulSetObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> } } };
}

/** The last lines of the server's output, for a reason people read. */
const tail = (log: string, lines = 3) => log.split('\n').map((line) => line.trim()).filter(Boolean).slice(-lines).join('; ');

export function createManagedRunner(host: ManagedRunnerHost): ManagedProcessRunner {
  const { cluster, settings } = host;
  const teamNs = (teamId: number) => teamNamespace({ id: teamId, installation: settings.installation });
  const podOf = (ref: ManagedProcessRef): V1Pod | undefined => cluster.pods.get(teamNs(ref.teamId), managedPodName(ref.workspaceId, ref.name));

  /** Waits for the pod of `digest` to be Ready (answers its Pod IP); a server that exits fails with its last output. */
  const awaitReady = async (ref: ManagedProcessRef, digest: string, notPod?: string): Promise<string> => {
    const namespace = teamNs(ref.teamId);
    const name = managedPodName(ref.workspaceId, ref.name);
    let last = managedPodState(undefined);
    const pod = await cluster.pods.waitFor(namespace, name, (current) => {
      if (notPod && current?.metadata?.uid === notPod) return false;
      last = managedPodState(current, digest);
      return last.state === 'ready' || last.state === 'failed';
    }, AbortSignal.timeout(host.startTimeoutMs)).catch(() => undefined);
    if (last.state === 'ready') return last.address;
    const log = pod ? await cluster.podLog(namespace, name, 'server', { tailLines: 20, previous: last.state === 'failed' }).catch(() => '') : '';
    const current = pod ? await cluster.podLog(namespace, name, 'server', { tailLines: 20 }).catch(() => '') : '';
    const output = tail(log) || tail(current);
    if (last.state === 'failed') throw new Error(`${last.reason}${output ? `: ${output}` : ''}`);
    const detail = last.state === 'starting' && last.detail ? ` (${last.detail})` : '';
    throw new Error(`its pod was not ready within ${Math.round(host.startTimeoutMs / 1000)} s${detail}${output ? `: ${output}` : ''}`);
  };

  const run: ManagedProcessRunner['run'] = async (workspace, name, process: ManagedProcess, hooks = {}) => {
    if (workspace.teamId === undefined) throw new Error(`workspace ${workspace.id} came without its team`);
    const ref = { teamId: workspace.teamId, workspaceId: workspace.id, name };
    const input: ManagedManifestInput = { team: { id: workspace.teamId, installation: settings.installation }, workspaceId: workspace.id, name, process };
    const namespace = teamNs(workspace.teamId);
    const digest = processDigest(process);
    try {
      await host.ensureWorkspace(workspace);
      await cluster.put(managedSecretManifest(input));
      await cluster.ensure(managedClaimManifest(input, settings));
      await cluster.ensure(managedServiceManifest(input));
      const wanted = managedStatefulSetManifest(input, settings, 1);
      const found = await cluster.read<StatefulSetObject & { apiVersion: string; kind: string }>('apps/v1', 'StatefulSet', namespace, managedObjectName(workspace.id, name));
      if (!found) await cluster.ensure(wanted);
      else if (found.spec?.replicas !== 1 || found.spec.template?.metadata?.annotations?.[PROCESS_DIGEST_ANNOTATION] !== digest) {
        if (managedPodState(podOf(ref)).state === 'ready') await hooks.changing?.();
        // the description changed, or it was paused: its pod (re)starts with the one asked for, on the same claim
        await cluster.put(wanted);
      }
    } catch (error) {
      throw new Error(`the cluster refused its objects: ${apiErrorText(error)}`);
    }
    return { address: await awaitReady(ref, digest) };
  };

  return {
    run,
    restart: async (ref) => {
      const pod = podOf(ref);
      const digest = pod?.metadata?.annotations?.[PROCESS_DIGEST_ANNOTATION];
      if (!pod || !digest) throw new Error(`the managed service ${ref.name} does not run`);
      await cluster.remove('v1', 'Pod', teamNs(ref.teamId), managedPodName(ref.workspaceId, ref.name));
      // the StatefulSet makes it again under the same name: wait for the new one
      return { address: await awaitReady(ref, digest, pod.metadata?.uid) };
    },
    pause: async (ref) => {
      const namespace = teamNs(ref.teamId);
      await cluster.update<StatefulSetObject & { apiVersion: string; kind: string }>('apps/v1', 'StatefulSet', namespace, managedObjectName(ref.workspaceId, ref.name), (set) => {
        set.spec = { ...set.spec, replicas: 0 };
      });
      await cluster.pods.waitFor(namespace, managedPodName(ref.workspaceId, ref.name), (pod) => pod === undefined, AbortSignal.timeout(host.startTimeoutMs));
    },
    remove: async (ref) => {
      const namespace = teamNs(ref.teamId);
      await cluster.remove('apps/v1', 'StatefulSet', namespace, managedObjectName(ref.workspaceId, ref.name));
      // the pod ends before its claim goes (a claim in use is kept until its pod is gone anyway)
      await cluster.remove('v1', 'Pod', namespace, managedPodName(ref.workspaceId, ref.name));
      await cluster.pods.waitFor(namespace, managedPodName(ref.workspaceId, ref.name), (pod) => pod === undefined, AbortSignal.timeout(host.startTimeoutMs));
      await cluster.remove('v1', 'Service', namespace, managedObjectName(ref.workspaceId, ref.name));
      await cluster.remove('v1', 'Secret', namespace, managedSecretName(ref.workspaceId, ref.name));
      await cluster.remove('v1', 'PersistentVolumeClaim', namespace, managedClaimName(ref.workspaceId, ref.name));
    },
    address: async (ref) => {
      const state = managedPodState(podOf(ref));
      return state.state === 'ready' ? state.address : undefined;
    },
  };
}
