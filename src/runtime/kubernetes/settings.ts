// What the Kubernetes manifests are built from: the installation's settings (images, storage class, where svc
// itself runs) and a workspace as the driver sees it. Pure types.
import type { PlanLimits } from '../../capacity/plans.ts';
import type { PinnedRoot, ReplicaSpec, WorkspaceRef } from '../driver.ts';
import type { TeamKey } from './names.ts';

export interface KubernetesSettings {
  /** The installation's name (`--kube-installation`, default `svc`): in its namespaces' names and every object's labels. */
  installation?: string;
  /**
   * Pods request this percentage of their plan's CPU and memory (limits stay the plan's): 100 (the default) gives
   * every pod what its plan says (QoS Guaranteed); less packs idle workspaces tighter (Burstable).
   */
  requestPercent?: number;
  /** The namespace svc itself runs in; its router pods (label `svc.dev/component: router`) reach workspace pods. */
  systemNamespace: string;
  /** The StorageClass of workspace volumes; the cluster's default when absent. */
  storageClass?: string;
  /**
   * `ReadWriteOnce`: every pod of a workspace is scheduled on the node that holds its volume (pod affinity);
   * `ReadWriteMany`: replicas may run on any node (the storage class must support it).
   */
  volumeAccessMode: 'ReadWriteOnce' | 'ReadWriteMany';
  /** The image holding the agent bundle and its node under /opt/svc, plus git and tar (clone, archive, restore). */
  agentImage: string;
  /** The installation's base image: the editor pod's root when the workspace pinned none. */
  baseImage: string;
  /**
   * The image managed instances run (PostgreSQL, Redis and NATS binaries: managed.ts `managedBinDir`); without it the
   * driver runs no managed services.
   */
  managedImage?: string;
  /** A PersistentVolumeClaim in each team namespace holding volume archives (`archives/<workspace id>.tar.gz`). */
  archiveClaim: string;
  /** The size of each team's archive claim (GiB). */
  archiveClaimGib: number;
}

export interface TeamRef extends TeamKey {
  /** An administrator allowed the team's `container` services a fixed `runAsUser` (spec 2.8), root included. */
  runAsAnyUser?: boolean;
}

/** One `steps` or `container` service of the landscape, with its replica count and plan limits. */
export interface ServiceManifestInput {
  spec: Omit<ReplicaSpec, 'index'>;
  replicas: number;
  limits: PlanLimits;
}

export interface WorkspaceManifestInput {
  team: TeamRef;
  workspace: WorkspaceRef & { restricted: boolean };
  /** The workspace plan's limits (the editor pod's requests and limits). */
  limits: PlanLimits;
  /** The editor's shell command; the agent's built-in editor when absent. */
  editorCommand?: string;
  services: ServiceManifestInput[];
  /**
   * The cluster IP of each service's Service (the driver creates the Services first), written into every pod's
   * /etc/hosts so the bare service names resolve on the workspace network as with the local driver.
   */
  serviceAddresses: Record<string, string>;
}

/** `image@digest` of a pinned root (the tag, if any, kept for people reading it). */
export function pinnedImage(root: PinnedRoot): string {
  const at = root.image.indexOf('@');
  return `${at === -1 ? root.image : root.image.slice(0, at)}@${root.digest}`;
}
