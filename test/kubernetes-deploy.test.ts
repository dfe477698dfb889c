// deploy/kubernetes: the plain manifests installing svc itself, checked offline against the same Kubernetes
// schemas as the driver's manifests, and against what the driver writes (its RBAC rights, the router's label); then
// applied to the test cluster (the server image from images.sh, a PostgreSQL of the test's own in the namespace):
// both replicas Ready, svc answering through the Service's ClusterIP behind nginx, the first sign-in link taken. Skipped with one
// line without the test cluster (test/helpers/test-cluster.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { test } from 'node:test';
import YAML from 'yaml';
import { Cluster, loadKubeConfig } from '../src/runtime/kubernetes/cluster.ts';
import { routerIngressPolicy, teamManifests, workspaceManifests } from '../src/runtime/kubernetes/manifests.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';
import { deployedForTest, testPostgres } from './helpers/deploy-cluster.ts';
import { removeTestInstallation, testClusterMissing, testInstallation } from './helpers/test-cluster.ts';
import { until } from './helpers/wait.ts';

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

const missing = testClusterMissing(['SVC_TEST_KUBE_SERVER_IMAGE', 'SVC_TEST_KUBE_MANAGED_IMAGE']);

test('on the test cluster: two servers Ready on one PostgreSQL, svc answering through the Service, the first sign-in', { skip: missing, timeout: 15 * 60_000 }, async (t) => {
  const namespace = testInstallation('svc-deploy');
  const cluster = new Cluster(loadKubeConfig());
  const manifests = deployedForTest(await deployManifests(), namespace, process.env);
  t.after(async () => {
    for (const manifest of [...manifests].reverse()) {
      if (manifest.kind === 'ClusterRole' || manifest.kind === 'ClusterRoleBinding' || manifest.kind === 'Namespace') await cluster.remove(manifest.apiVersion, manifest.kind, undefined, manifest.metadata.name).catch(() => undefined);
    }
    await removeTestInstallation(namespace);
    await cluster.close();
  });
  const [first, ...rest] = manifests;
  assert.equal(first.kind, 'Namespace');
  await cluster.ensure(first as never);

  // The operator's PostgreSQL: here one of the test's own in the namespace, on the managed image's binaries.
  const password = randomBytes(12).toString('hex');
  for (const manifest of testPostgres(namespace, process.env.SVC_TEST_KUBE_MANAGED_IMAGE!, password)) await cluster.ensure(manifest as never);
  await until(async () => {
    const pod = await cluster.read<any>('v1', 'Pod', namespace, 'postgres');
    return pod?.status?.conditions?.some((condition: any) => condition.type === 'Ready' && condition.status === 'True') || undefined;
  }, 'the PostgreSQL pod to be Ready', 5 * 60_000);

  // The Secrets the operator makes (docs/kubernetes.md), then every manifest of deploy/kubernetes.
  const secret = (name: string, key: string, value: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData: { [key]: value } });
  // By the Service's ClusterIP: the test cluster runs no cluster DNS.
  const postgres = await cluster.read<any>('v1', 'Service', namespace, 'postgres');
  await cluster.ensure(secret('svc-database', 'url', `postgres://postgres:${password}@${postgres.spec.clusterIP}:5432/postgres`) as never);
  await cluster.ensure(secret('svc-secrets', 'key', randomBytes(32).toString('base64')) as never);
  for (const manifest of rest) await cluster.ensure(manifest as never);

  const deployment = await until(async () => {
    const found = await cluster.read<any>('apps/v1', 'Deployment', namespace, 'svc-server');
    return found?.status?.readyReplicas === 2 ? found : undefined;
  }, 'both svc-server replicas to be Ready', 10 * 60_000).catch(async (error: Error) => {
    const pods = await cluster.list<any>('v1', 'Pod', namespace, 'app.kubernetes.io/name=svc-server');
    const logs = await Promise.all(pods.map((pod) => cluster.podLog(namespace, pod.metadata.name, 'server', { tailLines: 20 }).catch((e: Error) => e.message)));
    throw new Error(`${error.message}\n${pods.map((pod, i) => `${pod.metadata.name} ${JSON.stringify(pod.status?.containerStatuses?.[0]?.state)}\n${logs[i]}`).join('\n')}`);
  });
  assert.equal(deployment.spec.replicas, 2);

  // From the host, through the Service's ClusterIP (kube-proxy): the API answers.
  const service = await cluster.read<any>('v1', 'Service', namespace, 'svc-router');
  const base = `http://${service.spec.clusterIP}:${service.spec.ports[0].port}`;
  const version = await until(async () => {
    const answer = await fetch(`${base}/api/v1/version`);
    return answer.status === 200 ? ((await answer.json()) as Record<string, unknown>) : undefined;
  }, 'GET /api/v1/version through the Service');
  assert.ok(version);
  // nginx is the listener (the data plane as the manifest sets it), svc behind it in the same pod.
  assert.match((await fetch(`${base}/api/v1/version`)).headers.get('server') ?? '', /^nginx/);

  // Both servers share the database: one of them created the administrator and printed the sign-in link, the
  // other found the administrator there. The link's token opens a session through the Service.
  const pods = await cluster.list<any>('v1', 'Pod', namespace, 'app.kubernetes.io/name=svc-server');
  assert.equal(pods.length, 2);
  const logs = await Promise.all(pods.map((pod) => cluster.podLog(namespace, pod.metadata.name, 'server')));
  const links = logs.flatMap((log) => [...log.matchAll(/sign-in#token=([\w-]+)/g)].map((match) => match[1]));
  assert.equal(links.length, 1, logs.join('\n---\n'));
  assert.equal(logs.filter((log) => /listening on/.test(log)).length, 2, logs.join('\n---\n'));
  const signIn = await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ link_token: links[0] }) });
  assert.equal(signIn.status, 201, await signIn.clone().text());
  const cookie = /__Host-svc_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')![0];
  const me = await fetch(`${base}/api/v1/me`, { headers: { cookie } });
  assert.equal(me.status, 200);
  assert.equal(((await me.json()) as { email: string }).email, 'admin@example.com');
});
