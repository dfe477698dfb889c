// Every Kubernetes manifest the Kubernetes driver writes for a team and a workspace, in the order it would
// apply them: namespace and its policies, the workspace's policy and volume, Services (their cluster IPs go into
// every pod's /etc/hosts), the editor pod, the service replicas. Jobs are written per operation (jobs.ts). Pure.
import type { KubernetesSettings, TeamRef, WorkspaceManifestInput } from './settings.ts';
import { archiveClaimManifest, defaultDenyPolicy, routerIngressPolicy, teamNamespaceManifest, workspaceNetworkPolicy } from './namespace.ts';
import { editorPodManifest, volumeClaimManifest } from './workspace-pods.ts';
import { serviceManifest, statefulSetManifest } from './replicas.ts';

export * from './names.ts';
export * from './settings.ts';
export { archiveClaimManifest, defaultDenyPolicy, routerIngressPolicy, teamNamespaceManifest, workspaceNetworkPolicy } from './namespace.ts';
export { editorPodManifest, volumeClaimManifest } from './workspace-pods.ts';
export { readinessProbe, serviceManifest, statefulSetManifest } from './replicas.ts';
export { archivePath, volumeJobManifest, type VolumeJobKind } from './jobs.ts';

/** A manifest as the driver sends it: any object with apiVersion and kind. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string };
}

/** The team's namespace, the policies every team namespace has, and its archive claim. */
export function teamManifests(team: TeamRef, settings: KubernetesSettings): Manifest[] {
  return [teamNamespaceManifest(team), defaultDenyPolicy(team), routerIngressPolicy(team, settings), archiveClaimManifest(team, settings)];
}

/** A running workspace: its network policy, volume, Services, editor pod and service replicas. */
export function workspaceManifests(input: WorkspaceManifestInput, settings: KubernetesSettings): Manifest[] {
  const names = new Set<string>();
  for (const service of input.services) {
    if (names.has(service.spec.service)) throw new Error(`service "${service.spec.service}" appears twice`);
    names.add(service.spec.service);
  }
  return [
    workspaceNetworkPolicy(input.team, input.workspace.id),
    volumeClaimManifest(input, settings),
    ...input.services.map((service) => serviceManifest(input, service)),
    editorPodManifest(input, settings),
    ...input.services.map((service) => statefulSetManifest(input, service, settings)),
  ];
}
export { replicaPodManifest, replicaConfigSecret, agentTokenSecret, replicaIndexOf, REPLICA_INDEX_ENV } from './replica-pods.ts';
