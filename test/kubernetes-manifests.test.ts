// The manifests the Kubernetes driver will write, checked offline against the Kubernetes OpenAPI schemas of
// kubernetes-models, and shown in golden files (test/fixtures/kubernetes/; `UPDATE_GOLDEN=1` rewrites them).
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import YAML from 'yaml';
import { builtInPlans, servicePlan, workspacePlan } from '../src/capacity/plans.ts';
import {
  labelKeys, teamManifests, volumeJobManifest, workspaceManifests,
  type KubernetesSettings, type Manifest, type TeamRef, type WorkspaceManifestInput,
} from '../src/runtime/kubernetes/manifests.ts';
import { manifestErrors } from '../src/runtime/kubernetes/validate.ts';

const fixtures = new URL('./fixtures/kubernetes/', import.meta.url);

const settings: KubernetesSettings = {
  systemNamespace: 'svc',
  storageClass: 'fast-ssd',
  volumeAccessMode: 'ReadWriteOnce',
  agentImage: 'registry.example.com/svc/agent:1.5.0',
  baseImage: 'registry.example.com/svc/base:1.5.0',
  archiveClaim: 'svc-archives',
  archiveClaimGib: 100,
};
const team: TeamRef = { id: 7 };
const sha = (c: string) => `sha256:${c.repeat(64)}`;
const config = { Env: [], WorkingDir: '' } as never;
const large = workspacePlan(builtInPlans, 'large')!;
const small = servicePlan(builtInPlans, 'small')!;
const standard = servicePlan(builtInPlans, undefined)!;

/** A workspace with two services (one with replicas and a health check), a plan and the restricted flag. */
const input: WorkspaceManifestInput = {
  team,
  workspace: {
    id: 42, uid: 1_000_123, storageGib: 20, plan: 'large', restricted: true,
    baseImage: { image: 'registry.example.com/team/base:2', digest: sha('b'), rootfs: '/unused', config },
  },
  limits: large,
  services: [
    {
      replicas: 3,
      limits: standard,
      spec: {
        service: 'api',
        steps: [{ name: 'install', run: 'npm ci' }, { run: 'npm start' }],
        env: { PORT: '8080', DATABASE_HOST: 'db' },
        ports: [8080],
        health: { port: 8080, path: '/healthz', mode: 'http-2xx' },
        mounts: [{ from: 'config/api', to: '/etc/api' }],
        needs: [{ name: 'db', port: 5432 }],
      },
    },
    {
      replicas: 1,
      limits: small,
      spec: {
        service: 'db',
        steps: [],
        container: { image: 'postgres:16', digest: sha('d'), rootfs: '/unused', config, args: ['-c', 'fsync=off'] },
        env: { POSTGRES_PASSWORD: 'dev' },
        ports: [5432],
        health: { port: 5432, path: '/', mode: 'any-http' },
        mounts: [],
        needs: [],
      },
    },
  ],
  serviceAddresses: { api: '10.96.0.21', db: '10.96.0.22' },
};

const jobs = [
  volumeJobManifest(input, settings, { kind: 'clone', attempt: 1, source: { url: 'https://git.example.com/team/app.git', ref: 'main' } }),
  volumeJobManifest(input, settings, { kind: 'archive', attempt: 1 }),
  volumeJobManifest(input, settings, { kind: 'restore', attempt: 2 }),
];

const sets: Record<string, Manifest[]> = {
  'team.yaml': teamManifests(team, settings),
  'workspace.yaml': workspaceManifests(input, settings),
  'jobs.yaml': jobs,
};

const asYaml = (manifests: Manifest[]) => manifests.map((manifest) => YAML.stringify(manifest, { lineWidth: 0 })).join('---\n');

test('every manifest for a team and a workspace with two services, replicas, a health check, a plan and the restricted flag passes the Kubernetes schemas', () => {
  const all = Object.values(sets).flat();
  assert.equal(all.length, 4 + 7 + 3);
  assert.deepEqual(all.flatMap(manifestErrors), []);
});

for (const [file, manifests] of Object.entries(sets)) {
  test(`golden file ${file} shows the manifests (UPDATE_GOLDEN=1 rewrites it)`, async () => {
    const text = asYaml(manifests);
    const golden = new URL(file, fixtures);
    if (process.env.UPDATE_GOLDEN === '1') await writeFile(golden, text);
    assert.equal(text, await readFile(golden, 'utf8'), `${file} differs; rerun with UPDATE_GOLDEN=1 if the change is meant`);
  });
}

test('a broken manifest fails validation, with where and why', () => {
  const pod = structuredClone(sets['workspace.yaml'].find((manifest) => manifest.kind === 'Pod')) as unknown as { spec: Record<string, unknown> & { containers: Array<{ ports: Array<Record<string, unknown>> }> } };
  pod.spec.restartPolicy = 'Sometimes';
  assert.match(manifestErrors(pod).join('\n'), /^Pod\/ws-42-editor: .*restartPolicy must be equal to one of the allowed values/);
  const portAsText = structuredClone(sets['workspace.yaml'].find((manifest) => manifest.kind === 'Pod')) as unknown as typeof pod;
  portAsText.spec.containers[0].ports[0].containerPort = '7070';
  assert.match(manifestErrors(portAsText).join('\n'), /containerPort must be integer/);
  const policy = structuredClone(sets['team.yaml'][1]) as unknown as { spec: Record<string, unknown> };
  delete policy.spec.podSelector;
  assert.match(manifestErrors(policy).join('\n'), /podSelector/);
  assert.match(manifestErrors({ apiVersion: 'v1', kind: 'Pood', metadata: { name: 'x' } }).join('\n'), /v1\/Pood is not a kind svc writes/);
});

test('the schemas are those of Kubernetes 1.33: they know Lifecycle.stopSignal, new in 1.33', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [{ name: 'x', image: 'x', lifecycle: { stopSignal: 15 } }] } };
  assert.match(manifestErrors(pod).join('\n'), /stopSignal must be/);
});

test('pods run as the workspace UID with group 0, non-root, without privilege escalation, within the plan', () => {
  const [, , , , editor, api, db] = sets['workspace.yaml'] as Array<Manifest & { spec: any }>;
  assert.equal(editor.kind, 'Pod');
  assert.deepEqual(editor.spec.securityContext, { runAsUser: 1_000_123, runAsGroup: 0, fsGroup: 0, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  const main = editor.spec.containers[0];
  assert.equal(main.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(main.resources, { requests: { cpu: '4000m', memory: '8192Mi' }, limits: { cpu: '4000m', memory: '8192Mi' } });
  assert.equal(main.image, `registry.example.com/team/base:2@${sha('b')}`);
  assert.deepEqual(editor.spec.hostAliases, [{ ip: '10.96.0.21', hostnames: ['api'] }, { ip: '10.96.0.22', hostnames: ['db'] }]);
  assert.equal(api.kind, 'StatefulSet');
  assert.equal(api.spec.replicas, 3);
  const replica = api.spec.template.spec.containers[0];
  assert.deepEqual(replica.readinessProbe.httpGet, { port: 8080, path: '/healthz' });
  assert.deepEqual(replica.resources.limits, { cpu: '1000m', memory: '1024Mi' });
  assert.deepEqual(db.spec.template.spec.containers[0].readinessProbe.tcpSocket, { port: 5432 });
  assert.equal(db.spec.template.spec.containers[0].image, `postgres:16@${sha('d')}`);
});

test('every object is named as a DNS-1123 label and labelled with its team, workspace and service', () => {
  for (const manifest of Object.values(sets).flat() as Array<Manifest & { metadata: { name: string; labels: Record<string, string> } }>) {
    assert.match(manifest.metadata.name, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    assert.equal(manifest.metadata.labels[labelKeys.team], '7', manifest.metadata.name);
    if (manifest.kind !== 'Namespace' && manifest.metadata.namespace !== undefined) assert.equal(manifest.metadata.namespace, 'svc-team-7');
  }
  for (const manifest of sets['workspace.yaml'] as Array<Manifest & { metadata: { labels: Record<string, string> } }>) {
    assert.equal(manifest.metadata.labels[labelKeys.workspace], '42');
  }
  const services = sets['workspace.yaml'].filter((manifest) => manifest.kind === 'Service') as Array<Manifest & { metadata: { labels: Record<string, string> } }>;
  assert.deepEqual(services.map((service) => service.metadata.labels[labelKeys.service]), ['api', 'db']);
});

test('a container service allowed a fixed runAsUser 0 gets it, and its team namespace is baseline rather than restricted', () => {
  const rootTeam: TeamRef = { id: 8, runAsAnyUser: true };
  const db = input.services[1];
  const rooted = { ...input, team: rootTeam, services: [{ ...db, spec: { ...db.spec, container: { ...db.spec.container!, runAsUser: 0 } } }] };
  const manifests = workspaceManifests(rooted, settings) as Array<Manifest & { spec: any }>;
  const set = manifests.find((manifest) => manifest.kind === 'StatefulSet')!;
  assert.deepEqual(set.spec.template.spec.securityContext, { runAsUser: 0, runAsGroup: 0, fsGroup: 0, runAsNonRoot: false, seccompProfile: { type: 'RuntimeDefault' } });
  assert.deepEqual(manifests.flatMap(manifestErrors), []);
  const namespace = teamManifests(rootTeam, settings)[0] as Manifest & { metadata: { labels: Record<string, string> } };
  assert.equal(namespace.metadata.labels['pod-security.kubernetes.io/enforce'], 'baseline');
});

test('a service name too long for a StatefulSet is refused, not cut', () => {
  const long = { ...input.services[0], spec: { ...input.services[0].spec, service: 'a'.repeat(60) } };
  assert.throws(() => workspaceManifests({ ...input, services: [long] }, settings), /not a DNS-1123 label of at most 52/);
});
