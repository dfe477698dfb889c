// `svc server` and `svc admin sign-in-link` as real processes against a real database.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { NGINX_MODULES } from '../src/router/nginx-config.ts';
import { readNginxPidFile } from '../src/router/nginx.ts';
import { madeCertificate } from './helpers/certificates.ts';
import { ApiClient } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { runSvc, startSvc, stopSvc } from './helpers/process.ts';

let database: TestDatabase;
let dataDir: string;
before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-'));
});
after(async () => {
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

test('svc server --runtime kubernetes on a machine without a cluster stops at start and says why', async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-home-'));
  try {
    const args = ['server', '--listen', '127.0.0.1:0', '--data-dir', path.join(home, 'data'), '--data-plane', 'node', '--runtime', 'kubernetes', '--kube-agent-image', 'agent:1', '--kube-base-image', 'base:1'];
    const refused = await runSvc(args, { DATABASE_URL: database.url, KUBECONFIG: undefined, KUBERNETES_SERVICE_HOST: undefined, HOME: home });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /^svc server: no Kubernetes cluster is configured: set KUBECONFIG, or run svc in a pod of the cluster$/m);
    assert.doesNotMatch(refused.stdout, /listening on/);
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('svc server prints its address and a first sign-in link; admin sign-in-link prints only a link; SIGTERM stops it', async () => {
  const server = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir], { DATABASE_URL: database.url });
  try {
    const [, url] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)\n/);
    const [, link] = await server.waitFor(/^\s+(http\S+\/sign-in#token=\S+)$/m);
    assert.ok(link.startsWith(`${url}/sign-in#token=`));
    const anonymous = new ApiClient(url);
    const admin = await anonymous.signInWithLink(new URL(link).hash.slice('#token='.length));
    const key = await admin.mintKey();
    const me = await key.get('/me');
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.permissions, ['platform.admin']);
    assert.ok(existsSync(path.join(dataDir, 'server.json')));

    const printed = await runSvc(['admin', 'sign-in-link', '--data-dir', dataDir], { DATABASE_URL: undefined });
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^http:\/\/127\.0\.0\.1:\d+\/sign-in#token=[A-Za-z0-9_-]+\n$/);
    const again = await anonymous.signInWithLink(new URL(printed.stdout.trim()).hash.slice('#token='.length));
    assert.equal((await again.get('/me')).body.email, 'admin@localhost');

    const unknown = await runSvc(['admin', 'sign-in-link', '--user', 'ghost@example.com', '--data-dir', dataDir]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no user with the e-mail ghost@example.com/);

    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.stderr());
    assert.ok(!existsSync(path.join(dataDir, 'server.json')), 'server.json is removed on shutdown');
  } finally {
    await stopSvc(server);
  }
});

test('a second start does not create another administrator or link', async () => {
  const server = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir], { DATABASE_URL: database.url });
  try {
    await server.waitFor(/Database: DATABASE_URL\n/);
    assert.doesNotMatch(server.stdout(), /sign-in#token=/);
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 0);
  } finally {
    await stopSvc(server);
  }
});

test('bad settings exit 2 with the reason and the usage', async () => {
  for (const args of [['--listen', 'nowhere'], ['--listen', '127.0.0.1:70000'], ['--base-url', 'ftp://x'], ['--bogus', '1'], ['--rate-limit', 'many']]) {
    const run = await runSvc(['server', ...args], { DATABASE_URL: database.url });
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /Usage: svc server/);
  }
  // Single sign-on settings that break a rule name the provider and the rule.
  const oidc = await runSvc(['server', '--oidc-providers', '[{"id":"corp","issuer":"http://sso.example","clientId":"svc"}]'], { DATABASE_URL: database.url });
  assert.equal(oidc.code, 2, oidc.stderr);
  assert.match(oidc.stderr, /^svc server: OIDC providers: provider corp: issuer must be https:\/\/ \(http:\/\/ only on loopback\)$/m);
  const missing = await runSvc(['server', '--oidc-providers-file', '/nonexistent/providers.yaml'], { DATABASE_URL: database.url });
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /OIDC providers file \/nonexistent\/providers\.yaml: ENOENT/);
  const help = await runSvc(['server', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--listen \/ SVC_LISTEN/);
});

test('a wildcard certificate that cannot serve stops svc server with the reason (exit 2)', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-wildcard-bad-'));
  try {
    const wildcard = await madeCertificate(dir, ['*.apps.test']);
    const other = await madeCertificate(dir, ['*.other.test']);
    await writeFile(path.join(dir, 'w.pem'), wildcard.certificate);
    await writeFile(path.join(dir, 'o.key'), other.key);
    const tls = ['--tls-listen', '127.0.0.1:0', '--tls-wildcard-cert', path.join(dir, 'w.pem')];
    const mismatch = await runSvc(['server', ...tls, '--tls-wildcard-key', path.join(dir, 'o.key')], { DATABASE_URL: database.url });
    assert.equal(mismatch.code, 2, mismatch.stderr);
    assert.match(mismatch.stderr, /the key does not match the certificate/);
    const missing = await runSvc(['server', ...tls, '--tls-wildcard-key', path.join(dir, 'missing.key')], { DATABASE_URL: database.url });
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /--tls-wildcard-key: cannot read/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('admin sign-in-link without an installation says so and exits 2', async () => {
  const empty = await mkdtemp(path.join(os.tmpdir(), 'svc-empty-'));
  const run = await runSvc(['admin', 'sign-in-link', '--data-dir', empty], { DATABASE_URL: undefined });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /no svc installation/);
  await rm(empty, { recursive: true, force: true });
});

const nginxReady = NGINX_MODULES.every((file) => existsSync(file));

test('with the nginx data plane, a start after svc was killed ends the nginx it left behind and removes its directory', { skip: nginxReady ? false : 'nginx or its Lua module is not installed' }, async () => {
  const port = await freeLoopbackPort();
  const args = ['server', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, '--data-plane', 'nginx'];
  const first = startSvc(args, { DATABASE_URL: database.url });
  let second: ReturnType<typeof startSvc> | undefined;
  try {
    await first.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\n/);
    const { pid: left, dir: leftDir } = await readNginxPidFile(path.join(dataDir, 'nginx.pid'));
    assert.ok(existsSync(path.join(leftDir, 'nginx.conf')), 'the pid file names the directory of its configuration');
    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(alive(left), 'nginx outlives a killed svc');
    second = startSvc(args, { DATABASE_URL: database.url });
    await second.waitFor(new RegExp(`listening on http://127\\.0\\.0\\.1:${port}\\n`));
    assert.ok(!alive(left), 'the nginx left behind was ended');
    assert.ok(!existsSync(leftDir), 'and its directory removed');
    assert.equal((await fetch(`http://127.0.0.1:${port}/api/v1/openapi.yaml`)).status, 200);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.stderr());
    assert.ok(!existsSync(path.join(dataDir, 'nginx.pid')));
  } finally {
    await stopSvc(first);
    await stopSvc(second);
  }
});

/** Whether the process runs (a zombie nobody reaped yet does not). */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== '';
  } catch {
    return false;
  }
}
