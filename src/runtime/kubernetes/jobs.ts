// The one-off work on a workspace's volume as Jobs: clone a repository into it, pack it into an archive, refill it
// from one. Each runs once (no retries: the server's operation decides), as the workspace UID with group 0, in the
// agent image (git, tar, gzip). Archives sit on the team's archive claim. Pure.
import type { IJob } from 'kubernetes-models/batch/v1';
import type { IContainer, IVolume } from 'kubernetes-models/v1';
import type { GitSource } from '../driver.ts';
import { jobName, labelKeys, labelsOf, teamNamespace, volumeClaimName } from './names.ts';
import { containerSecurity, podSecurity, quietPodSpec, resourcesOf, sameNodeAffinity, HOME_DIR, VOLUME_ROOT, WORKSPACE_DIR } from './pod-parts.ts';
import type { KubernetesSettings, WorkspaceManifestInput } from './settings.ts';

export type VolumeJobKind = 'clone' | 'prepare' | 'usage' | 'archive' | 'restore';

const ARCHIVES_DIR = '/archives';

/** Archive of the workspace on the archive claim (the local driver's `archives/<id>.tar.gz`). */
export const archivePath = (workspaceId: number) => `${ARCHIVES_DIR}/${workspaceId}.tar.gz`;

/** Shell scripts of each job; arguments come in as "$1", "$2", never spliced into the script. */
const LAYOUT = `mkdir -p ${WORKSPACE_DIR} ${HOME_DIR} ${VOLUME_ROOT}/.svc`;
const scripts: Record<VolumeJobKind, string> = {
  // The volume's layout made first, by the workspace UID (under the volume's root, writable by group 0): /data/app is
  // then the UID's own, which git asks of a work tree. Cloned beside it and moved in (an existing directory).
  clone:
    `set -eu; umask 0002; ${LAYOUT}; ` + 'rm -rf "$2/.svc-clone"; git clone --no-tags --no-checkout --origin origin -- "$1" "$2/.svc-clone"; ' +
    'mv "$2/.svc-clone/.git" "$2/.git"; rmdir "$2/.svc-clone"; git -C "$2" reset --hard -q; if [ -n "$3" ]; then git -C "$2" checkout -q "$3"; fi',
  // The volume is writable by the workspace UID with group 0 (fsGroup 0), as every pod of the workspace needs it.
  prepare: `set -eu; umask 0002; ${LAYOUT}; ` + 'touch "$1/.svc-volume-check" && rm "$1/.svc-volume-check"',
  // KiB in use: `du -sk` is in GNU and busybox alike.
  usage: 'set -eu; du -sk "$1" | cut -f1',
  // The last line is `<sha256> <bytes>` of the archive.
  archive: 'set -eu; umask 0077; tar -C "$1" -czf "$2.partial" . && mv "$2.partial" "$2" && printf "%s %s\\n" "$(sha256sum < "$2" | cut -d" " -f1)" "$(wc -c < "$2" | tr -d " ")"',
  restore: `set -eu; umask 0002; ${LAYOUT}; ` + 'tar -C "$1" -xzf "$2"',
};

function argumentsOf(kind: VolumeJobKind, workspaceId: number, source?: GitSource): string[] {
  if (kind === 'clone') {
    if (!source) throw new Error('a clone job needs a repository');
    return [source.url, WORKSPACE_DIR, source.ref ?? ''];
  }
  if (kind === 'prepare' || kind === 'usage') return [VOLUME_ROOT];
  return [VOLUME_ROOT, archivePath(workspaceId)];
}

/** `attempt` keeps the names of an operation's retries apart (a Job's pod template cannot change). */
export function volumeJobManifest(
  input: WorkspaceManifestInput,
  settings: KubernetesSettings,
  job: { kind: VolumeJobKind; attempt: number; source?: GitSource },
): IJob {
  const { team, workspace } = input;
  const labels = { ...labelsOf({ team, workspaceId: workspace.id, component: 'job' }), [labelKeys.job]: job.kind };
  const volumes: IVolume[] = [{ name: 'data', persistentVolumeClaim: { claimName: volumeClaimName(workspace.id) } }];
  const container: IContainer = {
    name: job.kind,
    image: settings.agentImage,
    command: ['/bin/sh', '-c', scripts[job.kind], job.kind, ...argumentsOf(job.kind, workspace.id, job.source)],
    workingDir: VOLUME_ROOT,
    env: [{ name: 'HOME', value: '/tmp' }, { name: 'GIT_TERMINAL_PROMPT', value: '0' }],
    resources: resourcesOf(input.limits, settings.requestPercent),
    securityContext: containerSecurity(),
    volumeMounts: [{ name: 'data', mountPath: VOLUME_ROOT }, { name: 'tmp', mountPath: '/tmp' }],
  };
  volumes.push({ name: 'tmp', emptyDir: {} });
  if (job.kind === 'archive' || job.kind === 'restore') {
    volumes.push({ name: 'archives', persistentVolumeClaim: { claimName: settings.archiveClaim } });
    container.volumeMounts!.push({ name: 'archives', mountPath: ARCHIVES_DIR, readOnly: job.kind === 'restore' });
  }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobName(workspace.id, job.kind, job.attempt), namespace: teamNamespace(team), labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 3600,
      ttlSecondsAfterFinished: 600,
      template: {
        metadata: { labels },
        spec: {
          ...quietPodSpec,
          restartPolicy: 'Never',
          securityContext: podSecurity(workspace.uid),
          affinity: sameNodeAffinity(settings, workspace.id),
          containers: [container],
          volumes,
        },
      },
    },
  };
}
