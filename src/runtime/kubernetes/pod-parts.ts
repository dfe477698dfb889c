// Parts every pod of a workspace shares: the security context (the workspace UID with group 0, non-root, no
// privilege escalation, no capabilities: Pod Security "restricted"), requests and limits from a plan, the agent
// copied in by an init container, the volume at /data (code in /data/app, HOME /data/home), the service names in
// /etc/hosts. Pure.
import type { IContainer, IHostAlias, IPodSecurityContext, IResourceRequirements, ISecurityContext, IVolume, IVolumeMount, IAffinity } from 'kubernetes-models/v1';
import type { PlanLimits } from '../../capacity/plans.ts';
import { agentEnv } from '../../agent/protocol.ts';
import { EDITOR_MAIN } from '../local/agent-bundle.ts';
import { labelKeys, volumeClaimName } from './names.ts';
import type { KubernetesSettings } from './settings.ts';

export const AGENT_DIR = '/opt/svc';
/** The volume's root in every pod: the code in app/, HOME in home/, svc's own files in .svc/ (as the local driver). */
export const VOLUME_ROOT = '/data';
export const WORKSPACE_DIR = '/data/app';
export const HOME_DIR = '/data/home';
const AGENT_VOLUME = 'svc-agent';
const DATA_VOLUME = 'data';

/** Pod-level: every process runs as `uid` with group 0; files on the volume get group 0 (fsGroup). */
export function podSecurity(uid: number): IPodSecurityContext {
  return { runAsUser: uid, runAsGroup: 0, fsGroup: 0, runAsNonRoot: uid !== 0, seccompProfile: { type: 'RuntimeDefault' } };
}

/** Container-level: no privilege escalation, every capability dropped. */
export function containerSecurity(): ISecurityContext {
  return { allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'] } };
}

/**
 * Limits from the plan; requests the installation's percentage of them (`requestPercent`): at 100, the default, a pod
 * gets what its plan says, no more, no less (QoS class Guaranteed).
 */
export function resourcesOf(limits: PlanLimits, requestPercent = 100): IResourceRequirements {
  const amounts = { cpu: `${limits.cpuMillis}m`, memory: `${limits.memoryMiB}Mi` };
  if (requestPercent >= 100) return { requests: { ...amounts }, limits: { ...amounts } };
  const part = (value: number, least: number) => Math.max(least, Math.floor((value * requestPercent) / 100));
  return { requests: { cpu: `${part(limits.cpuMillis, 10)}m`, memory: `${part(limits.memoryMiB, 16)}Mi` }, limits: { ...amounts } };
}

/** Copies the agent (bundle and node) from the agent image into the pod's /opt/svc. */
export function agentInitContainer(settings: KubernetesSettings, uid: number): IContainer {
  return {
    name: 'install-agent',
    image: settings.agentImage,
    // not `cp -a`: the emptyDir's root is not the UID's, and preserving its times or mode is refused
    command: ['cp', '-R', '-P', `${AGENT_DIR}/.`, '/svc-agent/'],
    volumeMounts: [{ name: AGENT_VOLUME, mountPath: '/svc-agent' }],
    securityContext: { ...containerSecurity(), runAsUser: uid, runAsNonRoot: uid !== 0, readOnlyRootFilesystem: true },
    resources: resourcesOf({ cpuMillis: 100, memoryMiB: 64 }, settings.requestPercent),
  };
}

/** The agent as the main process, with umask 0002 as in every pod of the local driver. */
export function agentCommand(): string[] {
  return ['/bin/sh', '-c', `umask 0002; exec ${AGENT_DIR}/bin/node ${AGENT_DIR}/main.mjs`];
}

export function agentEnvironment(): Array<{ name: string; value: string }> {
  return [
    { name: agentEnv.node, value: JSON.stringify([`${AGENT_DIR}/bin/node`]) },
    { name: agentEnv.workspaceDir, value: WORKSPACE_DIR },
    // the built-in editor from the bundle (the agent runs without a TypeScript loader here)
    { name: agentEnv.editorScript, value: `${AGENT_DIR}/${EDITOR_MAIN}` },
    { name: agentEnv.tokenFile, value: '/run/svc-token/token' },
    { name: 'HOME', value: HOME_DIR },
    { name: 'LANG', value: 'C.UTF-8' },
  ];
}

export function agentMounts(): IVolumeMount[] {
  return [
    { name: AGENT_VOLUME, mountPath: AGENT_DIR, readOnly: true },
    { name: 'agent-token', mountPath: '/run/svc-token', readOnly: true },
    { name: DATA_VOLUME, mountPath: VOLUME_ROOT },
    { name: 'tmp', mountPath: '/tmp' },
  ];
}

export function podVolumes(workspaceId: number, tokenSecret: string): IVolume[] {
  return [
    { name: AGENT_VOLUME, emptyDir: {} },
    { name: 'agent-token', secret: { secretName: tokenSecret, defaultMode: 0o440 } },
    { name: DATA_VOLUME, persistentVolumeClaim: { claimName: volumeClaimName(workspaceId) } },
    { name: 'tmp', emptyDir: {} },
  ];
}

/** The workspace's service names, resolving to their Services' cluster IPs in every pod. */
export function serviceHostAliases(addresses: Record<string, string>): IHostAlias[] | undefined {
  const names = Object.keys(addresses).sort();
  if (names.length === 0) return undefined;
  return names.map((name) => ({ ip: addresses[name], hostnames: [name] }));
}

/** With a ReadWriteOnce volume, every pod of the workspace goes to the node of the others. */
export function sameNodeAffinity(settings: KubernetesSettings, workspaceId: number): IAffinity | undefined {
  if (settings.volumeAccessMode !== 'ReadWriteOnce') return undefined;
  return {
    podAffinity: {
      // The first pod matches its own term, so it is placed anywhere; the rest follow it.
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { [labelKeys.workspace]: String(workspaceId) } }, topologyKey: 'kubernetes.io/hostname' },
      ],
    },
  };
}

/** What every pod of a workspace leaves out: no service-account token, no service environment variables. */
export const quietPodSpec = { automountServiceAccountToken: false, enableServiceLinks: false } as const;
