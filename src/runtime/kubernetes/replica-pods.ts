// What the driver writes for one replica and for the workspace's agents: a replica as a Pod of its own (the driver's
// interface starts, stops and observes replicas one by one), the Secret with its config.json, and the Secret with
// the pods' agent token. The replica's pod is the StatefulSet's pod template (replicas.ts) with its index written
// in. Pure.
import type { IPod, ISecret } from 'kubernetes-models/v1';
import type { ReplicaConfig } from '../../agent/replica-protocol.ts';
import { REPLICA_CONFIG_FILE, replicaEnv } from '../../agent/replica-protocol.ts';
import type { ReplicaSpec } from '../driver.ts';
import { agentTokenSecretName, labelKeys, labelsOf, replicaPodConfigSecretName, replicaPodName, teamNamespace, type TeamKey } from './names.ts';
import { statefulSetManifest } from './replicas.ts';
import type { KubernetesSettings, ServiceManifestInput, WorkspaceManifestInput } from './settings.ts';

export const REPLICA_INDEX_ENV = replicaEnv.index;

/** One replica of a `steps` or `container` service as a Pod: the StatefulSet's template, its index fixed. */
export function replicaPodManifest(input: WorkspaceManifestInput, service: ServiceManifestInput, index: number, settings: KubernetesSettings): IPod {
  const set = statefulSetManifest(input, service, settings);
  const template = structuredClone(set.spec!.template);
  const name = replicaPodName(input.workspace.id, service.spec.service, index);
  const spec = template.spec!;
  for (const container of spec.containers) {
    container.env = container.env?.map((variable) => (variable.name === REPLICA_INDEX_ENV ? { name: REPLICA_INDEX_ENV, value: String(index) } : variable));
  }
  spec.volumes = spec.volumes?.map((volume) =>
    volume.name === 'replica-config' ? { ...volume, secret: { ...volume.secret, secretName: replicaPodConfigSecretName(input.workspace.id, service.spec.service, index) } } : volume,
  );
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: teamNamespace(input.team),
      labels: { ...template.metadata!.labels, [labelKeys.replica]: String(index) },
    },
    spec: { ...spec, hostname: name, restartPolicy: 'Always' },
  };
}

/** The replica's config.json (the service's env may hold secrets: a Secret, never the pod spec's command line). */
export function replicaConfigSecret(input: WorkspaceManifestInput, spec: ReplicaSpec, config: ReplicaConfig): ISecret {
  const labels = { ...labelsOf({ team: input.team, workspaceId: input.workspace.id, service: spec.service, component: 'replica' }), [labelKeys.replica]: String(spec.index) };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: replicaPodConfigSecretName(input.workspace.id, spec.service, spec.index), namespace: teamNamespace(input.team), labels },
    type: 'Opaque',
    stringData: { [REPLICA_CONFIG_FILE]: JSON.stringify(config) },
  };
}

/** The workspace pods' token (the server's exec and port-forward streams carry it), read by the agent from a file. */
export function agentTokenSecret(team: TeamKey, workspaceId: number, token: string): ISecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: agentTokenSecretName(workspaceId), namespace: teamNamespace(team), labels: labelsOf({ team, workspaceId, component: 'editor' }) },
    type: 'Opaque',
    stringData: { token },
  };
}

/** The index written in a replica pod's label, or undefined for a pod that is not one. */
export function replicaIndexOf(pod: { metadata?: { labels?: Record<string, string> } }): number | undefined {
  const text = pod.metadata?.labels?.[labelKeys.replica];
  return text !== undefined && /^\d{1,6}$/.test(text) ? Number(text) : undefined;
}
