// `svc images build --push`: the Kubernetes driver's images (base, agent, managed) and svc's server image built offline by
// scripts/test-cluster/images.sh through the installed `svc` (bin/svc.js, the prebuilt CLI), pushed with skopeo to
// a real registry that wants basic auth (credentials from the environment), their manifests read back by digest, the
// agent's own layer holding the bundle and node; a second build is answered from the cache. The images are cached
// in the tools directory the cluster scripts use, so a warm machine builds nothing here (a cold one takes minutes).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Parser } from 'tar';
import { runSvc } from './helpers/process.ts';
import { startRegistry, type TestRegistry } from './helpers/oci.ts';

const credentials = { username: 'operator', password: `p-${Math.random().toString(36).slice(2)}` };
const missing = ['mmdebstrap', 'umoci', 'skopeo', 'docker-registry', 'htpasswd'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const skip = process.getuid?.() !== 0 ? 'building the images needs root (mmdebstrap in root mode)' : missing.length > 0 ? `missing ${missing.join(', ')} (scripts/setup.sh installs them)` : false;

let registry: TestRegistry;
before(async () => {
  if (!skip) registry = await startRegistry({ basicAuth: credentials });
});
after(async () => {
  await registry?.close();
});

const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
const manifestTypes = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

async function registryGet(pathname: string, accept?: string): Promise<Buffer> {
  const answer = await fetch(`http://${registry.host}${pathname}`, { headers: { authorization, ...(accept ? { accept } : {}) } });
  assert.equal(answer.status, 200, `GET ${pathname}`);
  return Buffer.from(await answer.arrayBuffer());
}

function tarNames(layer: Buffer): Map<string, number> {
  const names = new Map<string, number>();
  const parser = new Parser({ onReadEntry: (entry) => {
    names.set(entry.path.replace(/^\.\//, ''), entry.mode ?? 0);
    entry.resume();
  } });
  parser.end(layer);
  return names;
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

test('svc images build --push puts base, agent, managed and server in the registry with their digests', { skip, timeout: 20 * 60_000 }, async () => {
  const env = { SVC_REGISTRY_USERNAME: credentials.username, SVC_REGISTRY_PASSWORD: credentials.password };
  const result = await runSvc(['images', 'build', '--push', `${registry.host}/team/svc`, '--tls-verify=false'], env);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split('\n');
  assert.deepEqual(lines.map((line) => line.split('=')[0]), ['--kube-base-image', '--kube-agent-image', '--kube-managed-image', 'server-image']);
  const references = new Map<string, { repository: string; tag: string; digest: string }>();
  for (const line of lines) {
    const match = /^(?:--kube-)?(\w+)-image=([^/]+)\/(team\/svc\/\w+):([0-9a-f]{16})@(sha256:[0-9a-f]{64})$/.exec(line);
    assert.ok(match, line);
    assert.equal(match[2], registry.host);
    assert.equal(match[3], `team/svc/${match[1]}`);
    references.set(match[1], { repository: match[3], tag: match[4], digest: match[5] });
  }
  for (const { repository, tag, digest } of references.values()) {
    const manifest = await registryGet(`/v2/${repository}/manifests/${digest}`, manifestTypes);
    assert.equal(sha256(manifest), digest, `${repository}'s manifest has the digest printed`);
    assert.equal(sha256(await registryGet(`/v2/${repository}/manifests/${tag}`, manifestTypes)), digest, `${repository}:${tag} is that manifest`);
  }
  // The agent image: the base's layer, then its own holding /opt/svc (the bundle and node), readable by any UID.
  const agent = references.get('agent')!;
  const manifest = JSON.parse((await registryGet(`/v2/${agent.repository}/manifests/${agent.digest}`, manifestTypes)).toString()) as { config: { digest: string }; layers: { digest: string }[] };
  const base = references.get('base')!;
  const baseManifest = JSON.parse((await registryGet(`/v2/${base.repository}/manifests/${base.digest}`, manifestTypes)).toString()) as { layers: { digest: string }[] };
  assert.equal(manifest.layers.length, 2);
  assert.deepEqual(manifest.layers[0], baseManifest.layers[0]);
  const layer = await registryGet(`/v2/${agent.repository}/blobs/${manifest.layers[1].digest}`);
  const names = tarNames(gunzipSync(layer));
  for (const name of ['opt/svc/main.mjs', 'opt/svc/editor.mjs', 'opt/svc/bin/node', 'opt/svc/node_modules/node-pty/build/Release/pty.node']) {
    assert.ok(names.has(name), `the agent layer holds ${name}`);
    assert.equal(names.get(name)! & 0o004, 0o004, `${name} is readable by all`);
  }
  assert.equal(names.get('opt/svc/bin/node')! & 0o001, 0o001, 'node is executable by all');
  const config = JSON.parse((await registryGet(`/v2/${agent.repository}/blobs/${manifest.config.digest}`)).toString()) as { config: { User?: string; Cmd?: string[]; Env?: string[] } };
  assert.equal(config.config.User, '0');
  assert.deepEqual(config.config.Cmd, ['/bin/bash']);
  assert.ok(config.config.Env?.some((entry) => entry.startsWith('PATH=/usr/local/sbin:')));
});

test('a push without the registry credentials fails naming the registry answer', { skip, timeout: 20 * 60_000 }, async () => {
  const result = await runSvc(['images', 'build', '--push', `${registry.host}/team/svc`, '--tls-verify=false'], { SVC_REGISTRY_USERNAME: undefined, SVC_REGISTRY_PASSWORD: undefined, REGISTRY_AUTH_FILE: '/nonexistent/auth.json' });
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /svc images: pushing base to \S+ failed: .*(unauthorized|authentication required)/is);
  assert.equal(result.stdout, '');
});

test('a second build is answered from the cache: nothing built, the same archives', { skip, timeout: 20 * 60_000 }, async () => {
  const first = await runSvc(['images', 'build', '--json'], {});
  assert.equal(first.code, 0, first.stderr);
  const built = JSON.parse(first.stdout) as { images: { name: string; reference: string; archive: string }[] };
  assert.deepEqual(built.images.map((image) => image.name), ['base', 'agent', 'managed', 'server']);
  const before = await Promise.all(built.images.map(async (image) => (await stat(image.archive)).mtimeMs));
  const second = await runSvc(['images', 'build', '--json'], {});
  assert.equal(second.code, 0, second.stderr);
  // The script says "images: building <name>" (or "staging") for every image it makes; from the cache it says nothing.
  assert.doesNotMatch(second.stderr, /images: (building|staging)/);
  assert.deepEqual((JSON.parse(second.stdout) as typeof built).images, built.images);
  assert.deepEqual(await Promise.all(built.images.map(async (image) => (await stat(image.archive)).mtimeMs)), before, 'the archives were not written again');
});

test('svc images refuses what it cannot do, before building anything', async () => {
  const bad = await runSvc(['images', 'build', '--push', 'svc'], {});
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--push "svc": give the registry and a repository prefix/);
  const host = await runSvc(['images', 'build', '--push', 'team/svc'], {});
  assert.equal(host.code, 2);
  assert.match(host.stderr, /team is not a registry host/);
  const half = await runSvc(['images', 'build', '--push', 'registry.example.com/svc'], { SVC_REGISTRY_USERNAME: 'x', SVC_REGISTRY_PASSWORD: undefined });
  assert.equal(half.code, 2);
  assert.match(half.stderr, /SVC_REGISTRY_USERNAME and SVC_REGISTRY_PASSWORD go together/);
  const tls = await runSvc(['images', 'build', '--tls-verify=false'], {});
  assert.equal(tls.code, 2);
  assert.match(tls.stderr, /--tls-verify=false is only for --push/);
});

test('the images script run by another user than root is refused saying so, before it touches the cache', { skip: process.getuid?.() !== 0 ? 'needs root to run it as another user' : false }, () => {
  // a copy the other user can read (the checkout may sit in a private directory, as CI's clone does)
  const readable = mkdtempSync(path.join(os.tmpdir(), 'svc-images-script-'));
  chmodSync(readable, 0o755);
  const script = path.join(readable, 'images.sh');
  copyFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'test-cluster', 'images.sh'), script);
  chmodSync(script, 0o644);
  const result = spawnSync('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', 'bash', script], { encoding: 'utf8' });
  rmSync(readable, { recursive: true, force: true });
  assert.equal(result.status, 1);
  assert.equal(result.stderr, 'images.sh: needs root (mmdebstrap installs the packages in a chroot, owned by root)\n');
  assert.equal(result.stdout, '');
});
