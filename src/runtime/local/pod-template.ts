// The pod template of the local driver's editor pods (spec 2.3 `upgrade_pending`): a fingerprint of what a pod
// started now is made of. It moves with a platform upgrade (svc's version, which brings its agent), another editor
// (code-server installed or upgraded, an editor command), the workspace plan's CPU and memory limits (the plans
// file) and the base image. A running pod made from another fingerprint shows `upgrade_pending`.
import { createHash } from 'node:crypto';
import { SERVER_VERSION } from '../../core/version.ts';
import type { WorkspaceRef } from '../driver.ts';
import { editorPlan, type LimitsHost } from './pod-limits.ts';

export interface TemplateHost extends LimitsHost {
  editorCommand?: string;
  codeServerTools?: string;
}

export function editorPodTemplate(host: TemplateHost, workspace: WorkspaceRef): string {
  const plan = editorPlan(host, workspace);
  const parts = {
    platform: SERVER_VERSION,
    editor: host.editorCommand ?? 'built-in',
    tools: host.codeServerTools ?? null,
    limits: host.cgroups ? { cpu: plan.cpuMillis, memory: plan.memoryMiB } : null,
    image: workspace.baseImage?.digest ?? null,
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}
