// Names and labels of everything the Kubernetes driver writes: a namespace per team, objects named after the
// workspace id (and the service name), all of them DNS-1123 labels. Pure.

/** DNS-1123 label: what Kubernetes asks of namespace, Service and Pod names. */
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A StatefulSet's pods carry `controller-revision-hash: <name>-<10 chars>` as a label value (at most 63), so its
 * name is kept to 52 characters.
 */
export const STATEFULSET_NAME_MAX = 52;

/** `name` when it is a DNS-1123 label of at most `max` characters; throws otherwise (a bug in the caller). */
export function dnsLabel(name: string, max = 63): string {
  if (name.length > max || !DNS_1123_LABEL.test(name)) throw new Error(`"${name}" is not a DNS-1123 label of at most ${max} characters`);
  return name;
}

export const LABEL_PREFIX = 'svc.dev';

export const labelKeys = {
  managedBy: 'app.kubernetes.io/managed-by',
  component: `${LABEL_PREFIX}/component`,
  team: `${LABEL_PREFIX}/team`,
  workspace: `${LABEL_PREFIX}/workspace`,
  service: `${LABEL_PREFIX}/service`,
  job: `${LABEL_PREFIX}/job`,
  replica: `${LABEL_PREFIX}/replica`,
  installation: `${LABEL_PREFIX}/installation`,
} as const;

/** The installation of a cluster svc is alone on, and of objects made before installations were named. */
export const DEFAULT_INSTALLATION = 'svc';

/**
 * A team as names see it: its id within an installation. Several installations share a cluster (`--kube-installation`
 * names each): their namespaces (`<installation>-team-<id>`) and labels never meet.
 */
export interface TeamKey {
  id: number;
  installation?: string;
}

export type Component = 'editor' | 'replica' | 'managed' | 'job' | 'volume' | 'network' | 'router' | 'server';

export const teamNamespace = (team: TeamKey) => dnsLabel(`${team.installation ?? DEFAULT_INSTALLATION}-team-${team.id}`);
export const workspaceName = (workspaceId: number) => dnsLabel(`ws-${workspaceId}`);
export const editorPodName = (workspaceId: number) => dnsLabel(`ws-${workspaceId}-editor`);
export const volumeClaimName = (workspaceId: number) => dnsLabel(`ws-${workspaceId}-data`);
/** The Secret (created by the driver, never written here) holding the pods' agent token under key `token`. */
export const agentTokenSecretName = (workspaceId: number) => dnsLabel(`ws-${workspaceId}-agent`);
export const serviceObjectName = (workspaceId: number, service: string) => dnsLabel(`ws-${workspaceId}-${service}`, STATEFULSET_NAME_MAX);
/** The Secret (created by the driver) holding a service's replica config (`config.json`, as the local driver writes it). */
export const replicaConfigSecretName = (workspaceId: number, service: string) => dnsLabel(`ws-${workspaceId}-${service}-config`);
export const jobName = (workspaceId: number, kind: string, attempt: number) => dnsLabel(`ws-${workspaceId}-${kind}-${attempt}`);
/** A replica of a service as a Pod of its own (the driver's form; the StatefulSet form names its pods the same). */
export const replicaPodName = (workspaceId: number, service: string, index: number) => dnsLabel(`${serviceObjectName(workspaceId, service)}-${index}`);
/** The Secret holding one replica's config (`config.json`): the driver writes one per replica pod. */
export const replicaPodConfigSecretName = (workspaceId: number, service: string, index: number) => dnsLabel(`${serviceObjectName(workspaceId, service)}-${index}-config`);

export interface LabelSubject {
  team: TeamKey;
  workspaceId?: number;
  service?: string;
  component: Component;
}

/** The labels every object carries: who manages it, its installation, team, workspace and service. */
export function labelsOf(subject: LabelSubject): Record<string, string> {
  const labels: Record<string, string> = {
    [labelKeys.managedBy]: 'svc',
    [labelKeys.component]: subject.component,
    [labelKeys.installation]: subject.team.installation ?? DEFAULT_INSTALLATION,
    [labelKeys.team]: String(subject.team.id),
  };
  if (subject.workspaceId !== undefined) labels[labelKeys.workspace] = String(subject.workspaceId);
  if (subject.service !== undefined) labels[labelKeys.service] = subject.service;
  return labels;
}

/** A managed instance's StatefulSet and Service: its name on the workspace network, as a replica service's. */
export const managedObjectName = (workspaceId: number, name: string) => serviceObjectName(workspaceId, name);
/** Its one pod (the StatefulSet's ordinal 0). */
export const managedPodName = (workspaceId: number, name: string) => dnsLabel(`${managedObjectName(workspaceId, name)}-0`);
/** Its data: a claim of its own, kept while it is paused, deleted with it. */
export const managedClaimName = (workspaceId: number, name: string) => dnsLabel(`${managedObjectName(workspaceId, name)}-data`);
/** Its secret files (passwords) and its /etc/passwd. */
export const managedSecretName = (workspaceId: number, name: string) => dnsLabel(`${managedObjectName(workspaceId, name)}-managed`);
