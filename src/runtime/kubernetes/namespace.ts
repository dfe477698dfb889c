// A team's namespace and the NetworkPolicies that keep its workspaces apart: nothing reaches a pod of the namespace
// (default deny), except the pods of the same workspace and svc's router. Pure.
import type { INamespace, IPersistentVolumeClaim } from 'kubernetes-models/v1';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { labelKeys, labelsOf, teamNamespace, workspaceName } from './names.ts';
import type { KubernetesSettings, TeamRef } from './settings.ts';

/**
 * The team's namespace, under Pod Security "restricted" (the workspace UID, never root) unless an administrator
 * allowed the team a fixed `runAsUser` (then "baseline", which lets a container run as root).
 */
export function teamNamespaceManifest(team: TeamRef): INamespace {
  const level = team.runAsAnyUser ? 'baseline' : 'restricted';
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: teamNamespace(team),
      labels: {
        ...labelsOf({ team, component: 'network' }),
        'pod-security.kubernetes.io/enforce': level,
        'pod-security.kubernetes.io/warn': 'restricted',
      },
    },
  };
}

/** Every pod of the team's namespace refuses every incoming connection unless another policy admits it. */
export function defaultDenyPolicy(team: TeamRef): INetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'default-deny-ingress', namespace: teamNamespace(team), labels: labelsOf({ team, component: 'network' }) },
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  };
}

/** svc's router pods (in the system namespace) reach every pod of the team: editors, replicas, health checks. */
export function routerIngressPolicy(team: TeamRef, settings: KubernetesSettings): INetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'allow-svc-router', namespace: teamNamespace(team), labels: labelsOf({ team, component: 'network' }) },
    spec: {
      podSelector: { matchLabels: { [labelKeys.managedBy]: 'svc' } },
      policyTypes: ['Ingress'],
      ingress: [{
        from: [{
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': settings.systemNamespace } },
          podSelector: { matchLabels: { [labelKeys.component]: 'router' } },
        }],
      }],
    },
  };
}

/** The pods of one workspace reach each other (its service network); other workspaces' pods do not reach them. */
export function workspaceNetworkPolicy(team: TeamRef, workspaceId: number): INetworkPolicy {
  const own = { matchLabels: { [labelKeys.workspace]: String(workspaceId) } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: workspaceName(workspaceId), namespace: teamNamespace(team), labels: labelsOf({ team, workspaceId, component: 'network' }) },
    spec: { podSelector: own, policyTypes: ['Ingress'], ingress: [{ from: [{ podSelector: own }] }] },
  };
}

/** The team's archive claim (`settings.archiveClaim`): archived volumes as `<workspace id>.tar.gz`. */
export function archiveClaimManifest(team: TeamRef, settings: KubernetesSettings): IPersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: settings.archiveClaim, namespace: teamNamespace(team), labels: labelsOf({ team, component: 'volume' }) },
    spec: {
      accessModes: [settings.volumeAccessMode],
      ...(settings.storageClass ? { storageClassName: settings.storageClass } : {}),
      resources: { requests: { storage: `${settings.archiveClaimGib}Gi` } },
    },
  };
}
