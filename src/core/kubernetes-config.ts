// The Kubernetes driver's settings of `svc server` (docs/kubernetes.md, "Settings"): their flags and environment
// variables, and how `--runtime` and the `--kube-*` flags are read into KubernetesSettings. Pure; src/core/config.ts
// lists the flags among the server's and passes its reader and its error in.
import type { KubernetesSettings } from '../runtime/kubernetes/settings.ts';

export const kubernetesServerSettings = {
  kubeNamespace: { flag: '--kube-namespace', env: 'SVC_KUBE_NAMESPACE', describe: 'with --runtime kubernetes: the namespace svc runs in; its router pods reach workspace pods (default svc)' },
  kubeAgentImage: { flag: '--kube-agent-image', env: 'SVC_KUBE_AGENT_IMAGE', describe: 'with --runtime kubernetes: the image with the agent under /opt/svc, git and tar (required; svc images build)' },
  kubeBaseImage: { flag: '--kube-base-image', env: 'SVC_KUBE_BASE_IMAGE', describe: 'with --runtime kubernetes: the editor pods\' image when a workspace pins no base_image (required; svc images build)' },
  kubeManagedImage: { flag: '--kube-managed-image', env: 'SVC_KUBE_MANAGED_IMAGE', describe: 'with --runtime kubernetes: the image of managed services (PostgreSQL, Redis, NATS; svc images build)' },
  kubeStorageClass: { flag: '--kube-storage-class', env: 'SVC_KUBE_STORAGE_CLASS', describe: "with --runtime kubernetes: the StorageClass of workspace volumes (default: the cluster's default)" },
  kubeAccessMode: { flag: '--kube-access-mode', env: 'SVC_KUBE_ACCESS_MODE', describe: 'with --runtime kubernetes: ReadWriteOnce (default; a workspace\'s pods share a node) or ReadWriteMany' },
  kubeArchiveClaim: { flag: '--kube-archive-claim', env: 'SVC_KUBE_ARCHIVE_CLAIM', describe: 'with --runtime kubernetes: the claim in each team namespace holding archives (default svc-archives)' },
  kubeInstallation: { flag: '--kube-installation', env: 'SVC_KUBE_INSTALLATION', describe: 'with --runtime kubernetes: this installation\'s name on the cluster, in its namespaces (<name>-team-<id>) and labels; installations sharing a cluster take different names (default svc)' },
  kubeRequestPercent: { flag: '--kube-request-percent', env: 'SVC_KUBE_REQUEST_PERCENT', describe: 'with --runtime kubernetes: pods request this percentage of their plan\'s CPU and memory, limits stay the plan\'s (default 100: Guaranteed)' },
  kubeArchiveSize: { flag: '--kube-archive-size', env: 'SVC_KUBE_ARCHIVE_SIZE', describe: 'with --runtime kubernetes: GiB of each team\'s archive claim (default 100)' },
};

type KubeKey = keyof typeof kubernetesServerSettings;

/** `--runtime` and, for `kubernetes`, the driver's settings; a kube flag without `--runtime kubernetes` is refused. */
export function readRuntimeSettings(
  read: (key: KubeKey | 'runtime') => string | undefined,
  fail: (message: string) => never,
): { runtime: 'local' } | { runtime: 'kubernetes'; kubernetes: KubernetesSettings } {
  const runtime = read('runtime') ?? 'local';
  const kubeKeys = Object.keys(kubernetesServerSettings) as KubeKey[];
  if (runtime === 'local') {
    const stray = kubeKeys.find((key) => read(key) !== undefined);
    if (stray) fail(`${kubernetesServerSettings[stray].flag} needs --runtime kubernetes`);
    return { runtime };
  }
  if (runtime !== 'kubernetes') fail(`runtime must be local or kubernetes, got "${runtime}"`);
  const required = (key: 'kubeAgentImage' | 'kubeBaseImage') => read(key) || fail(`--runtime kubernetes needs ${kubernetesServerSettings[key].flag}`);
  const accessMode = read('kubeAccessMode') ?? 'ReadWriteOnce';
  if (accessMode !== 'ReadWriteOnce' && accessMode !== 'ReadWriteMany') fail(`kube access mode must be ReadWriteOnce or ReadWriteMany, got "${accessMode}"`);
  const namespace = read('kubeNamespace') ?? 'svc';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) fail(`kube namespace must be a DNS label, got "${namespace}"`);
  const managedImage = read('kubeManagedImage');
  const installation = read('kubeInstallation') ?? 'svc';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(installation) || installation.length > 30) fail(`kube installation must be a DNS label of at most 30 characters, got "${installation}"`);
  const percentText = read('kubeRequestPercent') ?? '100';
  const requestPercent = Number(percentText);
  if (!Number.isInteger(requestPercent) || requestPercent < 1 || requestPercent > 100) fail(`kube request percent must be a whole number from 1 to 100, got "${percentText}"`);
  const archiveSize = read('kubeArchiveSize') ?? '100';
  const archiveClaimGib = Number(archiveSize);
  if (!Number.isInteger(archiveClaimGib) || archiveClaimGib < 1) fail(`kube archive size must be a whole number, got "${archiveSize}"`);
  return {
    runtime: 'kubernetes',
    kubernetes: {
      systemNamespace: namespace,
      agentImage: required('kubeAgentImage'),
      baseImage: required('kubeBaseImage'),
      storageClass: read('kubeStorageClass'),
      volumeAccessMode: accessMode as KubernetesSettings['volumeAccessMode'],
      archiveClaim: read('kubeArchiveClaim') ?? 'svc-archives',
      archiveClaimGib,
      installation,
      requestPercent,
      ...(managedImage ? { managedImage } : {}),
    },
  };
}
