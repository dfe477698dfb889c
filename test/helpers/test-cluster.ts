// The project's test cluster as tests see it (scripts/test-cluster/: `npm run test-cluster -- start`, then its `env`
// in the environment: KUBECONFIG, SVC_TEST_CLUSTER_HOST and the images as SVC_TEST_KUBE_*_IMAGE — not the server's
// SVC_KUBE_* names, which a local server started by another test would read and refuse): why it cannot be used here, the driver's settings for an installation of the test's own
// (every test file shares the cluster: namespaces and watches are kept apart by installation), and the cleanup
// that deletes that installation's namespaces.
import { Cluster, loadKubeConfig } from '../../src/runtime/kubernetes/cluster.ts';
import { labelKeys } from '../../src/runtime/kubernetes/names.ts';
import type { KubernetesSettings } from '../../src/runtime/kubernetes/settings.ts';

const NEEDED = ['SVC_TEST_KUBE_AGENT_IMAGE', 'SVC_TEST_KUBE_BASE_IMAGE', 'SVC_TEST_CLUSTER_HOST'] as const;

/** Why the Kubernetes tests cannot run here (one line for the skipped test), or undefined when they can. */
export function testClusterMissing(also: string[] = []): string | undefined {
  if (!process.env.KUBECONFIG) return 'KUBECONFIG is not set: no Kubernetes cluster is configured on this machine (npm run test-cluster -- start)';
  for (const name of [...NEEDED, ...also]) if (!process.env[name]) return `KUBECONFIG is set but ${name} is not (npm run test-cluster -- env)`;
  return undefined;
}

/** An installation name of this test process's own: `<prefix>-<pid>`, a DNS label. */
export function testInstallation(prefix: string): string {
  return `${prefix}-${process.pid}`.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 30).replace(/-+$/, '');
}

/** The driver's settings on the test cluster for `installation`, pods requesting a tenth of their plan (2 cores). */
export function testClusterSettings(installation: string): KubernetesSettings {
  const env = process.env;
  return {
    installation, requestPercent: 10, systemNamespace: env.SVC_TEST_KUBE_NAMESPACE ?? 'svc',
    agentImage: env.SVC_TEST_KUBE_AGENT_IMAGE!, baseImage: env.SVC_TEST_KUBE_BASE_IMAGE!, managedImage: env.SVC_TEST_KUBE_MANAGED_IMAGE,
    storageClass: env.SVC_TEST_KUBE_STORAGE_CLASS, volumeAccessMode: 'ReadWriteOnce', archiveClaim: 'svc-archives', archiveClaimGib: 1,
  };
}

/** The `svc server` flags' environment for the same settings (a server process of the test's own). */
export function testClusterServerEnv(installation: string): Record<string, string> {
  const env = process.env;
  return {
    SVC_RUNTIME: 'kubernetes', KUBECONFIG: env.KUBECONFIG!, SVC_KUBE_INSTALLATION: installation, SVC_KUBE_REQUEST_PERCENT: '10',
    SVC_KUBE_AGENT_IMAGE: env.SVC_TEST_KUBE_AGENT_IMAGE!, SVC_KUBE_BASE_IMAGE: env.SVC_TEST_KUBE_BASE_IMAGE!, SVC_KUBE_ARCHIVE_SIZE: '1',
    ...(env.SVC_TEST_KUBE_MANAGED_IMAGE ? { SVC_KUBE_MANAGED_IMAGE: env.SVC_TEST_KUBE_MANAGED_IMAGE } : {}),
  };
}

/** Deletes every namespace of `installation` (and so everything in it), without waiting for them to be gone. */
export async function removeTestInstallation(installation: string): Promise<void> {
  const cluster = new Cluster(loadKubeConfig());
  const selector = `${labelKeys.installation}=${installation}`;
  const namespaces = await cluster.list<{ metadata?: { name?: string } }>('v1', 'Namespace', '', selector).catch(() => []);
  for (const namespace of namespaces) await cluster.remove('v1', 'Namespace', undefined, namespace.metadata!.name!).catch(() => undefined);
}
