// Offline validation of manifests against the Kubernetes OpenAPI schemas shipped by `kubernetes-models` (see
// docs/kubernetes.md for which Kubernetes version they are). Types, required fields, enums and formats are checked;
// unknown field names are not (the schemas allow them), which is why the manifests are built with the package's
// TypeScript types: a misspelt field fails `tsc`.
import { Namespace, PersistentVolumeClaim, Pod, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';

type Model = { validate(): void };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ModelClass = new (data: any) => Model;

/** The kinds svc writes (the driver's manifests and deploy/kubernetes), by `apiVersion/kind`. */
const models: Record<string, ModelClass> = {
  'v1/Namespace': Namespace,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Pod': Pod,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
};

export const validatedKinds = Object.keys(models);

/** What is wrong with `manifest` (empty when it passes): `<kind>/<name>: <schema error>`. */
export function manifestErrors(manifest: unknown): string[] {
  if (!manifest || typeof manifest !== 'object') return ['not an object'];
  const { apiVersion, kind, metadata } = manifest as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  const key = `${String(apiVersion)}/${String(kind)}`;
  const where = `${String(kind)}/${String(metadata?.name ?? '?')}`;
  const Model = models[key];
  if (!Model) return [`${where}: ${key} is not a kind svc writes (${validatedKinds.join(', ')})`];
  try {
    new Model(structuredClone(manifest)).validate();
    return [];
  } catch (error) {
    return [`${where}: ${(error as Error).message}`];
  }
}
