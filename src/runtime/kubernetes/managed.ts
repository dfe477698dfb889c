// A managed instance (src/runtime/managed-process.ts) on the cluster: a StatefulSet of one replica (0 while paused)
// running the description's script in the managed image, its data on a claim of its own, its secret files in a Secret,
// and a Service giving it its name on the workspace network. Its pod carries the workspace's labels, so the team
// namespace's policies apply as to the workspace's other pods: its own pods and svc's router reach it, nothing else.
// Pure: manifests and states.
import { createHash } from 'node:crypto';
import type { V1Pod as IPod } from '@kubernetes/client-node';
import type { IStatefulSet } from 'kubernetes-models/apps/v1';
import type { IPersistentVolumeClaim, ISecret, IService } from 'kubernetes-models/v1';
import { managedProcessEnv, type ManagedProcess } from '../managed-process.ts';
import { labelKeys, labelsOf, managedClaimName, managedObjectName, managedSecretName, teamNamespace } from './names.ts';
import { containerSecurity, podSecurity, quietPodSpec, resourcesOf, sameNodeAffinity } from './pod-parts.ts';
import { isGone, isReady, podFailure, unschedulableReason } from './pod-state.ts';
import type { KubernetesSettings, TeamRef } from './settings.ts';

/** Where the managed image holds each provider's binaries (scripts/test-cluster/images.sh builds it so). */
export const managedBinDir = (provider: string, version: string) => `/opt/svc-managed/${provider}/${version}/bin`;
export const MANAGED_DATA_DIR = '/var/lib/svc-managed';
export const MANAGED_SECRETS_DIR = '/run/svc-managed';
/** The pod template's annotation: a digest of the description it runs (a change rolls the pod). */
export const PROCESS_DIGEST_ANNOTATION = 'svc.dev/process-digest';
const PASSWD_KEY = 'passwd';

export interface ManagedManifestInput {
  team: TeamRef;
  workspaceId: number;
  name: string;
  process: ManagedProcess;
}

const labelsOfInstance = (input: Pick<ManagedManifestInput, 'team' | 'workspaceId' | 'name'>) =>
  labelsOf({ team: input.team, workspaceId: input.workspaceId, service: input.name, component: 'managed' });
const selectorOf = (input: Pick<ManagedManifestInput, 'workspaceId' | 'name'>) => ({
  [labelKeys.workspace]: String(input.workspaceId), [labelKeys.service]: input.name, [labelKeys.component]: 'managed',
});

/** A digest of everything the process runs and reads: two descriptions that differ restart it. */
export function processDigest(process: ManagedProcess): string {
  return createHash('sha256').update(JSON.stringify(process)).digest('hex').slice(0, 32);
}

/** Its secret files, and an /etc/passwd naming its UID (initdb looks its user up). */
export function managedSecretManifest(input: ManagedManifestInput): ISecret {
  const { process } = input;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: managedSecretName(input.workspaceId, input.name), namespace: teamNamespace(input.team), labels: labelsOfInstance(input) },
    type: 'Opaque',
    stringData: { ...process.secretFiles, [PASSWD_KEY]: `${process.provider}:x:${process.uid}:0:${process.provider}:${MANAGED_DATA_DIR}:/usr/sbin/nologin\n` },
  };
}

export function managedClaimManifest(input: ManagedManifestInput, settings: KubernetesSettings): IPersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: managedClaimName(input.workspaceId, input.name), namespace: teamNamespace(input.team), labels: labelsOfInstance(input) },
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(settings.storageClass ? { storageClassName: settings.storageClass } : {}),
      resources: { requests: { storage: `${input.process.storageMiB}Mi` } },
    },
  };
}

/** Its name on the workspace network (every pod's /etc/hosts maps it to the cluster IP), in front of its ready pod. */
export function managedServiceManifest(input: ManagedManifestInput): IService {
  const { process } = input;
  const ports = [process.port, ...(process.extraPorts ?? [])];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: managedObjectName(input.workspaceId, input.name), namespace: teamNamespace(input.team), labels: labelsOfInstance(input) },
    spec: { type: 'ClusterIP', selector: selectorOf(input), ports: ports.map((port) => ({ name: `port-${port}`, port, targetPort: port })) },
  };
}

/** The StatefulSet: `replicas` 1 runs the instance, 0 pauses it (the claim stays). */
export function managedStatefulSetManifest(input: ManagedManifestInput, settings: KubernetesSettings & { managedImage: string }, replicas: 0 | 1): IStatefulSet {
  const { process, workspaceId, name } = input;
  const labels = labelsOfInstance(input);
  const secrets = managedSecretName(workspaceId, name);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: managedObjectName(workspaceId, name), namespace: teamNamespace(input.team), labels },
    spec: {
      serviceName: managedObjectName(workspaceId, name),
      replicas,
      selector: { matchLabels: selectorOf(input) },
      template: {
        metadata: { labels, annotations: { [PROCESS_DIGEST_ANNOTATION]: processDigest(process) } },
        spec: {
          ...quietPodSpec,
          // a volume whose group the kubelet set once is not walked again at every start (PostgreSQL's modes stay)
          securityContext: { ...podSecurity(process.uid), fsGroupChangePolicy: 'OnRootMismatch' },
          affinity: sameNodeAffinity(settings, workspaceId),
          terminationGracePeriodSeconds: process.stopGraceSeconds,
          containers: [{
            name: 'server',
            image: settings.managedImage,
            command: ['/bin/sh', '-c', process.script],
            workingDir: MANAGED_DATA_DIR,
            env: [
              { name: managedProcessEnv.bin, value: managedBinDir(process.provider, process.version) },
              { name: managedProcessEnv.data, value: MANAGED_DATA_DIR },
              { name: managedProcessEnv.secrets, value: MANAGED_SECRETS_DIR },
              ...Object.entries(process.env).map(([envName, value]) => ({ name: envName, value })),
            ],
            ports: [process.port, ...(process.extraPorts ?? [])].map((port) => ({ containerPort: port })),
            readinessProbe: { tcpSocket: { port: process.port }, periodSeconds: 2, failureThreshold: 3 },
            // the server's own clean shutdown (PostgreSQL: SIGINT, fast) rather than the runtime's SIGTERM
            ...(process.stopSignal && { lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', `kill -${process.stopSignal.replace(/^SIG/, '')} 1`] } } } }),
            ...(process.limits && { resources: resourcesOf(process.limits) }),
            securityContext: containerSecurity(),
            volumeMounts: [
              { name: 'data', mountPath: MANAGED_DATA_DIR },
              { name: 'secrets', mountPath: MANAGED_SECRETS_DIR, readOnly: true },
              { name: 'passwd', mountPath: '/etc/passwd', subPath: PASSWD_KEY, readOnly: true },
              { name: 'tmp', mountPath: '/tmp' },
            ],
          }],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: managedClaimName(workspaceId, name) } },
            { name: 'secrets', secret: { secretName: secrets, defaultMode: 0o440, items: Object.keys(process.secretFiles).map((key) => ({ key, path: key })) } },
            { name: 'passwd', secret: { secretName: secrets, defaultMode: 0o444, items: [{ key: PASSWD_KEY, path: PASSWD_KEY }] } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

export type ManagedPodState =
  | { state: 'absent' }
  | { state: 'starting'; detail?: string }
  | { state: 'ready'; address: string }
  | { state: 'failed'; reason: string };

/** The instance's pod as the watch saw it; `digest`: only a pod of that description counts (an old one is rolling out). */
export function managedPodState(pod: IPod | undefined, digest?: string): ManagedPodState {
  if (isGone(pod)) return { state: 'absent' };
  if (digest !== undefined && pod!.metadata?.annotations?.[PROCESS_DIGEST_ANNOTATION] !== digest) return { state: 'starting', detail: 'the previous pod is being replaced' };
  const ip = pod!.status?.podIP;
  if (isReady(pod!) && ip) return { state: 'ready', address: ip };
  const failure = podFailure(pod!);
  if (failure) return { state: 'failed', reason: failure };
  const server = pod!.status?.containerStatuses?.find((status) => status.name === 'server');
  const ended = server?.state?.terminated ?? (server?.restartCount ? server.lastState?.terminated : undefined);
  if (ended) return { state: 'failed', reason: `the server exited with ${ended.exitCode}${ended.reason ? ` (${ended.reason})` : ''}` };
  const waiting = unschedulableReason(pod!);
  if (waiting) return { state: 'starting', detail: `Waiting for a node: ${waiting}` };
  return { state: 'starting' };
}
