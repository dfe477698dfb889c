// deploy/kubernetes: the plain manifests installing svc itself, checked offline against the same Kubernetes
// schemas as the driver's manifests, and against what the driver writes (its RBAC rights, the router's label).
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import YAML from 'yaml';
import { routerIngressPolicy, teamManifests, workspaceManifests } from '../src/runtime/kubernetes/manifests.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';

const dir = new URL('../deploy/kubernetes/', import.meta.url);

async function deployManifests(): Promise<Array<Record<string, any>>> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort();
  assert.ok(files.length > 0);
  const documents = await Promise.all(files.map(async (name) => YAML.parseAllDocuments(await readFile(new URL(name, dir), 'utf8'))));
  return documents.flat().map((document) => {
    assert.deepEqual(document.errors, []);
    return document.toJS();
  });
}

const byKind = (manifests: Array<Record<string, any>>, kind: string) => manifests.filter((manifest) => manifest.kind === kind);

test('every manifest of deploy/kubernetes passes the Kubernetes schemas', async () => {
  const manifests = await deployManifests();
  assert.deepEqual(manifests.flatMap(manifestErrors), []);
  assert.deepEqual(manifests.map((manifest) => manifest.kind).sort(), ['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Namespace', 'Service', 'ServiceAccount']);
});

test('two servers, DATABASE_URL and the secrets key from Secrets, the router Service in front', async () => {
  const manifests = await deployManifests();
  const [deployment] = byKind(manifests, 'Deployment');
  assert.equal(deployment.spec.replicas, 2);
  const env = deployment.spec.template.spec.containers[0].env as Array<{ name: string; value?: string; valueFrom?: any }>;
  assert.deepEqual(env.find((entry) => entry.name === 'DATABASE_URL'), { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'svc-database', key: 'url' } } });
  assert.ok(env.find((entry) => entry.name === 'SVC_SECRETS_KEY')?.valueFrom?.secretKeyRef);
  const [service] = byKind(manifests, 'Service');
  assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
});

test('the server pods carry the label team namespaces admit the router by', async () => {
  const manifests = await deployManifests();
  const [deployment] = byKind(manifests, 'Deployment');
  const [namespace] = byKind(manifests, 'Namespace');
  const policy = routerIngressPolicy({ id: 1 }, { systemNamespace: namespace.metadata.name } as never);
  const from = policy.spec!.ingress![0].from![0];
  assert.equal(from.namespaceSelector!.matchLabels!['kubernetes.io/metadata.name'], deployment.metadata.namespace);
  for (const [key, value] of Object.entries(from.podSelector!.matchLabels!)) assert.equal(deployment.spec.template.metadata.labels[key], value);
});

test('the driver\'s role may create every kind the driver writes, and nothing beyond its list (no wildcards, no exec)', async () => {
  const manifests = await deployManifests();
  const [role] = byKind(manifests, 'ClusterRole');
  const rules = role.rules as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
  for (const rule of rules) {
    for (const field of [rule.apiGroups, rule.resources, rule.verbs]) assert.ok(!field.includes('*'), JSON.stringify(rule));
    assert.ok(!rule.resources.some((resource) => /exec|attach|portforward|escalate|bind/.test(resource)), JSON.stringify(rule));
  }
  const resourceOf: Record<string, [string, string]> = {
    Namespace: ['', 'namespaces'], NetworkPolicy: ['networking.k8s.io', 'networkpolicies'], PersistentVolumeClaim: ['', 'persistentvolumeclaims'],
    Service: ['', 'services'], Pod: ['', 'pods'], StatefulSet: ['apps', 'statefulsets'], Job: ['batch', 'jobs'], Secret: ['', 'secrets'],
  };
  const written = new Set([...teamManifests({ id: 1 }, {} as never), ...workspaceManifests(sampleWorkspace, {} as never)].map((manifest) => manifest.kind));
  for (const kind of [...written, 'Job', 'Secret']) {
    const [group, resource] = resourceOf[kind] ?? assert.fail(`no RBAC resource known for ${kind}`);
    assert.ok(rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(resource) && rule.verbs.includes('create') && rule.verbs.includes('delete')), `${kind} not granted`);
  }
});

const sampleWorkspace = {
  team: { id: 1 },
  workspace: { id: 1, uid: 1_000_001, storageGib: 1, restricted: false },
  limits: { cpuMillis: 1000, memoryMiB: 1024 },
  services: [{ replicas: 1, limits: { cpuMillis: 100, memoryMiB: 128 }, spec: { service: 'web', steps: [{ run: 'true' }], env: {}, ports: [], mounts: [], needs: [] } }],
  serviceAddresses: {},
};
