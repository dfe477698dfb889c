// A `steps` or `container` service of a landscape: a StatefulSet (stable pod names `<name>-<index>`, the replica
// index of spec 3.2) whose pods run the agent in replica mode, with a readiness probe from the service's health
// check, and a Service so the service's name reaches its ready replicas on the workspace network. Pure.
import type { IProbe, IService } from 'kubernetes-models/v1';
import type { IStatefulSet } from 'kubernetes-models/apps/v1';
import { DEFAULT_AGENT_PORT, agentEnv } from '../../agent/protocol.ts';
import { REPLICA_CONFIG_FILE, REPLICA_POD_DIR, replicaEnv } from '../../agent/replica-protocol.ts';
import type { ReplicaSpec } from '../driver.ts';
import { agentTokenSecretName, labelKeys, labelsOf, replicaConfigSecretName, serviceObjectName, teamNamespace } from './names.ts';
import {
  agentCommand, agentEnvironment, agentInitContainer, agentMounts, containerSecurity, podSecurity, podVolumes, quietPodSpec,
  resourcesOf, sameNodeAffinity, serviceHostAliases,
} from './pod-parts.ts';
import { pinnedImage, type KubernetesSettings, type ServiceManifestInput, type WorkspaceManifestInput } from './settings.ts';

/**
 * `http-2xx`: an HTTP GET (Kubernetes also counts 3xx as ready). `any-http`: Kubernetes has no probe that takes any
 * HTTP answer, 5xx included, so the port accepting connections stands for it. No health check: the first port.
 */
export function readinessProbe(spec: Omit<ReplicaSpec, 'index'>): IProbe | undefined {
  const timing = { periodSeconds: 2, failureThreshold: 3 };
  if (spec.health?.mode === 'http-2xx') return { httpGet: { port: spec.health.port, path: spec.health.path }, ...timing };
  if (spec.health) return { tcpSocket: { port: spec.health.port }, ...timing };
  if (spec.ports.length > 0) return { tcpSocket: { port: spec.ports[0] }, ...timing };
  return undefined;
}

/** The image a replica's pod runs: the container service's pinned image, the steps service's, else the base image. */
function replicaImage(spec: Omit<ReplicaSpec, 'index'>, settings: KubernetesSettings): string {
  if (spec.container) return pinnedImage(spec.container);
  if (spec.root) return pinnedImage(spec.root);
  return settings.baseImage;
}

export function statefulSetManifest(input: WorkspaceManifestInput, service: ServiceManifestInput, settings: KubernetesSettings): IStatefulSet {
  const { team, workspace } = input;
  const { spec } = service;
  const name = serviceObjectName(workspace.id, spec.service);
  const labels = labelsOf({ team, workspaceId: workspace.id, service: spec.service, component: 'replica' });
  const selector = { [labelKeys.workspace]: labels[labelKeys.workspace], [labelKeys.service]: spec.service };
  const uid = spec.container?.runAsUser ?? workspace.uid;
  const configMounts = [
    { name: 'replica', mountPath: REPLICA_POD_DIR },
    { name: 'replica-config', mountPath: `${REPLICA_POD_DIR}/${REPLICA_CONFIG_FILE}`, subPath: REPLICA_CONFIG_FILE, readOnly: true },
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: teamNamespace(team), labels },
    spec: {
      serviceName: name,
      replicas: service.replicas,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          ...quietPodSpec,
          securityContext: podSecurity(uid),
          affinity: sameNodeAffinity(settings, workspace.id),
          hostAliases: serviceHostAliases(input.serviceAddresses),
          initContainers: [agentInitContainer(settings, uid)],
          containers: [{
            name: 'replica',
            image: replicaImage(spec, settings),
            command: agentCommand(),
            workingDir: '/data/app',
            env: [
              ...agentEnvironment(),
              { name: replicaEnv.mode, value: 'replica' },
              { name: replicaEnv.dir, value: REPLICA_POD_DIR },
              { name: agentEnv.agentPort, value: String(DEFAULT_AGENT_PORT) },
              { name: replicaEnv.log, value: 'stdout' },
              { name: replicaEnv.index, valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } } },
              ...Object.entries(spec.env).map(([envName, value]) => ({ name: envName, value })),
            ],
            ports: [{ name: 'agent', containerPort: DEFAULT_AGENT_PORT }, ...spec.ports.map((port) => ({ containerPort: port }))],
            readinessProbe: readinessProbe(spec),
            resources: resourcesOf(service.limits, settings.requestPercent),
            securityContext: containerSecurity(),
            volumeMounts: [
              ...agentMounts(),
              ...configMounts,
              ...spec.mounts.map((mount) => ({ name: 'data', mountPath: mount.to, subPath: `app/${mount.from}` })), // below the code, as the local driver
            ],
          }],
          volumes: [
            ...podVolumes(workspace.id, agentTokenSecretName(workspace.id)),
            { name: 'replica', emptyDir: {} },
            { name: 'replica-config', secret: { secretName: replicaConfigSecretName(workspace.id, spec.service), defaultMode: 0o440 } },
          ],
        },
      },
    },
  };
}

/**
 * The service's name on the workspace network: a Service with a stable cluster IP (every pod's /etc/hosts maps the
 * bare name to it) in front of the service's ready replicas.
 */
export function serviceManifest(input: WorkspaceManifestInput, service: ServiceManifestInput): IService {
  const { team, workspace } = input;
  const { spec } = service;
  const labels = labelsOf({ team, workspaceId: workspace.id, service: spec.service, component: 'replica' });
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: serviceObjectName(workspace.id, spec.service), namespace: teamNamespace(team), labels },
    spec: {
      type: 'ClusterIP',
      selector: { [labelKeys.workspace]: String(workspace.id), [labelKeys.service]: spec.service },
      ports: [{ name: 'agent', port: DEFAULT_AGENT_PORT, targetPort: DEFAULT_AGENT_PORT }, ...spec.ports.map((port) => ({ name: `port-${port}`, port, targetPort: port }))],
      // Needs wait on the service's own health check (the agent probes it), not on Kubernetes' readiness.
      publishNotReadyAddresses: false,
    },
  };
}
