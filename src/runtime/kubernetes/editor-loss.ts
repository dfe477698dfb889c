// The editor pods the cluster takes away (a node drained, an eviction): told once per pod, so the server puts the
// workspace to sleep with the reason spec 3.1 gives ("Asleep since its pod was evicted") instead of waiting for a
// start that finds no pod.
import type { V1Pod } from '@kubernetes/client-node';
import { labelKeys } from './manifests.ts';
import type { ObjectStore } from './object-store.ts';
import { podLossOf } from './pod-state.ts';

export function onEditorPodLoss(pods: ObjectStore<V1Pod>, listener: (workspaceId: number, reason: string, loss: 'node-drained') => void): () => void {
  const told = new Set<string>();
  return pods.onChange((_event, pod) => {
    const labels = pod.metadata?.labels ?? {};
    const uid = pod.metadata?.uid;
    if (labels[labelKeys.component] !== 'editor' || !uid || told.has(uid)) return;
    const loss = podLossOf(pod);
    const workspaceId = Number(labels[labelKeys.workspace]);
    if (!loss || !Number.isInteger(workspaceId)) return;
    told.add(uid);
    listener(workspaceId, `the cluster evicted its pod from node ${pod.spec?.nodeName ?? 'unknown'}`, loss);
  });
}
