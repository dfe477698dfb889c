// The pods' egress policy as a NetworkPolicy (docs/runtime.md, "The pod network"): what the local driver enforces
// with nftables, for the Kubernetes driver. Egress `on`: the internet (0.0.0.0/0 but the refused ranges, the
// operator's `--egress-deny`, the cluster's pod and node networks), the operator's `--egress-allow`, the cluster's
// DNS and the workspace's own pods; `off`: the workspace's own pods only. IPv4 only, as locally. Pure; not applied by
// the driver yet (no cluster to check it against this session).
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { REFUSED_RANGES } from '../local/egress.ts';
import { labelKeys, labelsOf, teamNamespace, workspaceName } from './names.ts';
import type { TeamRef } from './settings.ts';

export interface ClusterEgress {
  egress: 'on' | 'off';
  /** `--egress-allow`, `--egress-deny` (IPv4 CIDRs). */
  allow: string[];
  deny: string[];
  /** The cluster's own networks (pods, services, nodes): refused like the host locally. */
  clusterRanges: string[];
}

export function workspaceEgressPolicy(team: TeamRef, workspaceId: number, settings: ClusterEgress): INetworkPolicy {
  const own = { matchLabels: { [labelKeys.workspace]: String(workspaceId) } };
  const ownPods = { to: [{ podSelector: own }] };
  const dns = {
    to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
    ports: [{ protocol: 'UDP' as const, port: 53 }, { protocol: 'TCP' as const, port: 53 }],
  };
  const internet = { to: [{ ipBlock: { cidr: '0.0.0.0/0', except: [...REFUSED_RANGES, ...settings.clusterRanges, ...settings.deny] } }] };
  const allowed = settings.allow.length > 0 ? [{ to: settings.allow.map((cidr) => ({ ipBlock: { cidr } })) }] : [];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: `${workspaceName(workspaceId)}-egress`, namespace: teamNamespace(team), labels: labelsOf({ team, workspaceId, component: 'network' }) },
    spec: {
      podSelector: own,
      policyTypes: ['Egress'],
      egress: settings.egress === 'off' ? [ownPods] : [ownPods, dns, internet, ...allowed],
    },
  };
}
