// A workspace's volume (a PersistentVolumeClaim of its `storage_gib`) and its editor pod: the agent as the main
// process (it starts the editor, as in the local driver), the workspace UID with group 0, the plan's CPU and memory.
// Pure.
import type { IPersistentVolumeClaim, IPod } from 'kubernetes-models/v1';
import { DEFAULT_AGENT_PORT, DEFAULT_EDITOR_PORT, AGENT_STATUS_PATH, agentEnv } from '../../agent/protocol.ts';
import { agentTokenSecretName, editorPodName, labelsOf, teamNamespace, volumeClaimName, workspaceName, LABEL_PREFIX } from './names.ts';
import {
  agentCommand, agentEnvironment, agentInitContainer, agentMounts, containerSecurity, podSecurity, podVolumes, quietPodSpec,
  resourcesOf, sameNodeAffinity, serviceHostAliases,
} from './pod-parts.ts';
import { pinnedImage, type KubernetesSettings, type WorkspaceManifestInput } from './settings.ts';

export function volumeClaimManifest(input: WorkspaceManifestInput, settings: KubernetesSettings): IPersistentVolumeClaim {
  const { team, workspace } = input;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: volumeClaimName(workspace.id), namespace: teamNamespace(team), labels: labelsOf({ team, workspaceId: workspace.id, component: 'volume' }) },
    spec: {
      accessModes: [settings.volumeAccessMode],
      ...(settings.storageClass ? { storageClassName: settings.storageClass } : {}),
      resources: { requests: { storage: `${workspace.storageGib}Gi` } },
    },
  };
}

export function editorPodManifest(input: WorkspaceManifestInput, settings: KubernetesSettings): IPod {
  const { team, workspace } = input;
  const env = [
    ...agentEnvironment(),
    { name: agentEnv.agentHost, value: '0.0.0.0' },
    { name: agentEnv.agentPort, value: String(DEFAULT_AGENT_PORT) },
    { name: agentEnv.editorHost, value: '0.0.0.0' },
    { name: agentEnv.editorPort, value: String(DEFAULT_EDITOR_PORT) },
    ...(input.editorCommand ? [{ name: agentEnv.editorCommand, value: input.editorCommand }] : []),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: editorPodName(workspace.id),
      namespace: teamNamespace(team),
      labels: labelsOf({ team, workspaceId: workspace.id, component: 'editor' }),
      // The router enforces `restricted` (spec 2.3); the pod carries it so it is seen where the pod is.
      annotations: { [`${LABEL_PREFIX}/restricted`]: String(workspace.restricted), ...(workspace.plan ? { [`${LABEL_PREFIX}/plan`]: workspace.plan } : {}) },
    },
    spec: {
      ...quietPodSpec,
      hostname: workspaceName(workspace.id),
      restartPolicy: 'Always',
      securityContext: podSecurity(workspace.uid),
      affinity: sameNodeAffinity(settings, workspace.id),
      hostAliases: serviceHostAliases(input.serviceAddresses),
      initContainers: [agentInitContainer(settings, workspace.uid)],
      containers: [{
        name: 'agent',
        image: workspace.baseImage ? pinnedImage(workspace.baseImage) : settings.baseImage,
        command: agentCommand(),
        workingDir: '/data/app',
        env,
        ports: [{ name: 'agent', containerPort: DEFAULT_AGENT_PORT }, { name: 'editor', containerPort: DEFAULT_EDITOR_PORT }],
        readinessProbe: { httpGet: { path: AGENT_STATUS_PATH, port: 'agent' }, periodSeconds: 2, failureThreshold: 3 },
        resources: resourcesOf(input.limits, settings.requestPercent),
        securityContext: containerSecurity(),
        volumeMounts: agentMounts(),
      }],
      volumes: podVolumes(workspace.id, agentTokenSecretName(workspace.id)),
    },
  };
}
