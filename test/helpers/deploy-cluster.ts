// deploy/kubernetes on the test cluster (test/kubernetes-deploy.test.ts): the operator's manifests made the test's
// own (its namespace, cluster-wide names and installation derived from it, the images under test, small requests,
// a ClusterIP Service since the test cluster has no load balancer), and a PostgreSQL in that namespace standing for
// the operator's, run from the managed image's binaries under the namespace's restricted Pod Security.
type Manifest = Record<string, any>;

/** The manifests as the test applies them: nothing shared with another test or a real installation. */
export function deployedForTest(manifests: Manifest[], namespace: string, env: NodeJS.ProcessEnv): Manifest[] {
  const images: Record<string, string | undefined> = {
    SVC_KUBE_AGENT_IMAGE: env.SVC_TEST_KUBE_AGENT_IMAGE, SVC_KUBE_BASE_IMAGE: env.SVC_TEST_KUBE_BASE_IMAGE, SVC_KUBE_MANAGED_IMAGE: env.SVC_TEST_KUBE_MANAGED_IMAGE,
  };
  const values: Record<string, string> = {
    SVC_KUBE_NAMESPACE: namespace, SVC_KUBE_INSTALLATION: namespace, SVC_BASE_URL: `http://svc-router.${namespace}.svc`,
    SVC_KUBE_REQUEST_PERCENT: '10', SVC_KUBE_ARCHIVE_SIZE: '1',
  };
  const out = structuredClone(manifests);
  for (const manifest of out) {
    if (manifest.kind === 'Namespace') manifest.metadata.name = namespace;
    else if (manifest.metadata.namespace) manifest.metadata.namespace = namespace;
    if (manifest.kind === 'ClusterRole' || manifest.kind === 'ClusterRoleBinding') manifest.metadata.name = `${namespace}-runtime`;
    if (manifest.kind === 'ClusterRoleBinding') {
      manifest.roleRef.name = `${namespace}-runtime`;
      for (const subject of manifest.subjects) subject.namespace = namespace;
    }
    if (manifest.kind === 'Service') manifest.spec.type = 'ClusterIP';
    if (manifest.kind === 'Deployment') {
      const [container] = manifest.spec.template.spec.containers;
      container.image = env.SVC_TEST_KUBE_SERVER_IMAGE;
      container.resources.requests = { cpu: '50m', memory: '256Mi' };
      const env_ = container.env as Array<{ name: string; value?: string }>;
      for (const entry of env_) {
        if (images[entry.name] !== undefined) entry.value = images[entry.name];
        if (values[entry.name] !== undefined) entry.value = values[entry.name];
      }
      for (const [name, value] of Object.entries(values)) if (!env_.some((entry) => entry.name === name)) env_.push({ name, value });
    }
  }
  return out;
}

const restricted = {
  allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001,
  capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
};

/** A PostgreSQL pod (`postgres`, the newest major in the image) and its Service; password auth from the pods. */
export function testPostgres(namespace: string, managedImage: string, password: string): Manifest[] {
  const labels = { 'app.kubernetes.io/name': 'svc-test-postgres' };
  const script = [
    'set -e',
    'bin=$(ls -d /opt/svc-managed/postgres/*/bin | sort -V | tail -n 1)',
    'data=/var/lib/postgresql/data',
    'printf %s "$POSTGRES_PASSWORD" > /tmp/password',
    '"$bin/initdb" -D "$data" -U postgres --pwfile=/tmp/password --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C > /dev/null',
    'rm /tmp/password',
    'echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"',
    'exec "$bin/postgres" -D "$data" -c listen_addresses=* -c unix_socket_directories=/tmp',
  ].join('\n');
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'postgres', namespace }, stringData: { password, passwd: 'root:x:0:0:root:/root:/bin/sh\npostgres:x:10001:10001:postgres:/tmp:/bin/sh\n' } },
    {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'postgres', namespace, labels },
      spec: {
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{
          name: 'postgres', image: managedImage, command: ['/bin/sh', '-c', script],
          env: [{ name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: 'postgres', key: 'password' } } }],
          ports: [{ name: 'postgres', containerPort: 5432 }],
          readinessProbe: { tcpSocket: { port: 5432 }, periodSeconds: 2 },
          resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          securityContext: restricted,
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql' }, { name: 'tmp', mountPath: '/tmp' }, { name: 'passwd', mountPath: '/etc/passwd', subPath: 'passwd', readOnly: true }],
        }],
        volumes: [
          { name: 'data', emptyDir: {} }, { name: 'tmp', emptyDir: {} },
          { name: 'passwd', secret: { secretName: 'postgres', defaultMode: 0o444, items: [{ key: 'passwd', path: 'passwd' }] } },
        ],
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'postgres', namespace }, spec: { selector: labels, ports: [{ name: 'postgres', port: 5432, targetPort: 'postgres' }] } },
  ];
}
