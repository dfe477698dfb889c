// Pulling OCI images from a real registry (Debian's docker-registry on loopback) with images built offline.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { collectImages, ImageFailure, ImageStore, imageProblem, pullImage, resolveImage, type TransferBounds } from '../src/images/index.ts';
import { layerDigests, pushImage, rawTar, startRegistry, startRegistryProxy, type TestRegistry } from './helpers/oci.ts';
import { until } from './helpers/wait.ts';

const run = promisify(execFile);
let registry: TestRegistry;
const scratch: string[] = [];

before(async () => {
  registry = await startRegistry();
});
after(async () => {
  await registry?.close();
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

async function newStore(options: { maxBytes?: number; root?: string; insecure?: string[]; transferBounds?: TransferBounds } = {}): Promise<ImageStore> {
  const root = options.root ?? (await mkdtemp(path.join(os.tmpdir(), 'svc-images-')));
  scratch.push(root);
  return ImageStore.open({ root, maxBytes: options.maxBytes ?? 1 << 30, insecureRegistries: options.insecure ?? [registry.host], transferBounds: options.transferBounds });
}

const busybox = { 'bin/busybox': { busybox: true as const }, 'bin/sh': { symlink: 'busybox' }, 'bin/httpd': { symlink: 'busybox' } };
const webImage = { entrypoint: ['/bin/httpd'], cmd: ['-f', '-p', '8080'], env: ['PATH=/bin', 'GREETING=hello'], workdir: '/www', user: '1000', ports: ['8080/tcp'] };

async function failureOf(work: Promise<unknown>): Promise<ImageFailure> {
  try {
    await work;
  } catch (error) {
    if (error instanceof ImageFailure) return error;
    throw error;
  }
  assert.fail('expected an ImageFailure');
}

describe('pulling by tag and digest', () => {
  test('a tag pulls the image: the rootfs runs busybox, links and modes kept, the config comes back', async () => {
    const pushed = await pushImage(registry, 'demo/web:1', { layers: [busybox, { 'www/index.html': 'hi', 'bin/tool': { content: '#!/bin/sh\necho tool\n', mode: 0o750 } }], ...webImage });
    const store = await newStore();
    const image = await pullImage(store, `${registry.host}/demo/web:1`);
    assert.equal(image.digest, pushed);
    assert.equal(image.cached, false);
    assert.equal(image.reference, `${registry.host}/demo/web:1@${pushed}`);
    assert.deepEqual(image.config, { Entrypoint: ['/bin/httpd'], Cmd: ['-f', '-p', '8080'], Env: ['PATH=/bin', 'GREETING=hello'], WorkingDir: '/www', User: '1000', ExposedPorts: { '8080/tcp': {} } });
    assert.equal(await readlink(path.join(image.rootfs, 'bin/sh')), 'busybox');
    assert.equal((await stat(path.join(image.rootfs, 'bin/tool'))).mode & 0o7777, 0o750);
    assert.equal(await readFile(path.join(image.rootfs, 'www/index.html'), 'utf8'), 'hi');
    const { stdout } = await run('setpriv', ['--reuid', '10002', '--regid', '0', '--clear-groups', path.join(image.rootfs, 'bin/busybox'), 'echo', 'from the image']);
    assert.equal(stdout, 'from the image\n', 'a workspace UID of group 0 reaches and runs the rootfs');
    for (const mountPoint of ['dev', 'proc', 'tmp']) assert.ok((await lstat(path.join(image.rootfs, mountPoint))).isDirectory(), mountPoint);
    assert.equal((await resolveImage(`${registry.host}/demo/web:1`, { insecureRegistries: [registry.host] })).digest, pushed);
  });

  test('a pinned digest pulls exactly that image, from the store without the registry once it is there', async () => {
    const first = await pushImage(registry, 'demo/pinned:v', { layers: [busybox, { 'version.txt': 'one' }] });
    const store = await newStore();
    const pulled = await pullImage(store, `${registry.host}/demo/pinned@${first}`);
    assert.equal(pulled.digest, first);
    const offline = await ImageStore.open({ root: store.root, maxBytes: store.maxBytes, insecureRegistries: [] }); // HTTPS only: the registry is unreachable
    const again = await pullImage(offline, `${registry.host}/demo/pinned@${first}`);
    assert.equal(again.cached, true);
    assert.equal(again.rootfs, pulled.rootfs);
  });

  test('a moved tag resolves to the new digest; the old digest still pulls the old image', async () => {
    const old = await pushImage(registry, 'demo/moving:stable', { layers: [busybox, { 'version.txt': 'old' }] });
    const moved = await pushImage(registry, 'demo/moving:stable', { layers: [busybox, { 'version.txt': 'new' }] });
    assert.notEqual(old, moved);
    const store = await newStore();
    assert.equal((await resolveImage(`${registry.host}/demo/moving:stable`, { insecureRegistries: [registry.host] })).digest, moved);
    assert.equal(await readFile(path.join((await pullImage(store, `${registry.host}/demo/moving:stable`)).rootfs, 'version.txt'), 'utf8'), 'new');
    assert.equal(await readFile(path.join((await pullImage(store, `${registry.host}/demo/moving@${old}`)).rootfs, 'version.txt'), 'utf8'), 'old');
  });

  test('Docker v2 manifests, zstd layers and an index whose linux/amd64 entry is picked', async () => {
    const store = await newStore();
    const docker = await pushImage(registry, 'demo/docker:1', { layers: [busybox, { 'kind.txt': 'docker' }], format: 'v2s2' });
    assert.equal((await pullImage(store, `${registry.host}/demo/docker:1`)).digest, docker);
    const zstd = await pullImage(store, `${registry.host}/demo/zstd@${await pushImage(registry, 'demo/zstd:1', { layers: [busybox, { 'kind.txt': 'zstd' }], compression: 'zstd' })}`);
    assert.equal(await readFile(path.join(zstd.rootfs, 'kind.txt'), 'utf8'), 'zstd');
    const arm = await pushImage(registry, 'demo/multi:arm', { layers: [{ 'arch.txt': 'arm64' }], architecture: 'arm64' });
    const amd = await pushImage(registry, 'demo/multi:amd', { layers: [busybox, { 'arch.txt': 'amd64' }] });
    const { pushIndex } = await import('./helpers/oci.ts');
    const index = await pushIndex(registry, 'demo/multi', 'both', [{ digest: arm, architecture: 'arm64' }, { digest: amd, architecture: 'amd64' }]);
    const multi = await pullImage(store, `${registry.host}/demo/multi:both`);
    assert.equal(multi.digest, index);
    assert.equal(multi.manifestDigest, amd);
    assert.equal(await readFile(path.join(multi.rootfs, 'arch.txt'), 'utf8'), 'amd64');
    const armOnly = await failureOf(pullImage(store, `${registry.host}/demo/multi:arm`));
    assert.equal(armOnly.reason, 'unsupported');
    assert.match(armOnly.message, /linux\/arm64; svc runs linux\/amd64/);
  });
});

describe('what the registry answers', () => {
  test('an unknown tag fails naming the image and the registry answer MANIFEST_UNKNOWN', async () => {
    await pushImage(registry, 'demo/known:1', { layers: [busybox] });
    const store = await newStore();
    const failure = await failureOf(pullImage(store, `${registry.host}/demo/known:nope`));
    assert.equal(failure.reason, 'unknown');
    assert.equal(failure.image, `${registry.host}/demo/known:nope`);
    assert.equal(failure.registry, registry.host);
    assert.equal(failure.answer?.status, 404);
    assert.equal(failure.answer?.code, 'MANIFEST_UNKNOWN');
    assert.match(failure.message, /demo\/known:nope.*404 MANIFEST_UNKNOWN/);
    const unknownName = await failureOf(resolveImage(`${registry.host}/demo/never-pushed:1`, { insecureRegistries: [registry.host] }));
    assert.equal(unknownName.reason, 'unknown');
    assert.equal(unknownName.answer?.status, 404);
  });

  test('an unreachable registry, and a registry not listed as insecure (HTTPS only), fail as unreachable', async () => {
    const free = http.createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const closedHost = `127.0.0.1:${(free.address() as { port: number }).port}`;
    await new Promise((resolve) => free.close(resolve));
    const store = await newStore({ insecure: [closedHost] });
    const closed = await failureOf(pullImage(store, `${closedHost}/demo/web:1`));
    assert.equal(closed.reason, 'unreachable');
    assert.match(closed.message, /cannot be reached over HTTP: ECONNREFUSED/);
    assert.doesNotMatch(closed.message, /insecure-registries/);
    const https = await failureOf(resolveImage(`${registry.host}/demo/web:1`));
    assert.equal(https.reason, 'unreachable');
    assert.match(https.message, /cannot be reached over HTTPS: ERR_SSL_WRONG_VERSION_NUMBER wrong version number; svc speaks plain HTTP only to registries an operator lists in --insecure-registries$/);
  });

  test('a blob whose bytes do not match its digest fails as digest-mismatch and leaves nothing in the store', async () => {
    await pushImage(registry, 'demo/tampered:1', { layers: [busybox, { 'a.txt': 'a' }] });
    const proxy = await startRegistryProxy(registry, { corruptBlobs: true });
    try {
      const store = await newStore({ insecure: [proxy.host] });
      const failure = await failureOf(pullImage(store, `${proxy.host}/demo/tampered:1`));
      assert.equal(failure.reason, 'digest-mismatch');
      assert.deepEqual(await readdir(path.join(store.root, 'layers', 'sha256')), []);
      assert.deepEqual(await readdir(path.join(store.root, 'images', 'sha256')), []);
    } finally {
      await proxy.close();
    }
  });

  test('a layer trickled one byte a second fails the pull as stalled within the stall timeout, leaving nothing in the store', async () => {
    const pushed = await pushImage(registry, 'demo/trickle:1', { layers: [busybox, { 'a.txt': 'slowly' }] });
    const [, slowLayer] = await layerDigests(registry, 'demo/trickle', pushed);
    const proxy = await startRegistryProxy(registry, { trickleBlobs: [slowLayer] });
    try {
      const store = await newStore({ insecure: [proxy.host], transferBounds: { stallMs: 2000, pullTimeoutMs: 600_000 } });
      const failure = await failureOf(pullImage(store, `${proxy.host}/demo/trickle:1`));
      assert.equal(failure.reason, 'stalled');
      assert.match(failure.message, new RegExp(`the registry sent (nothing|only \\d+ bytes?) in 2 s while sending the blob ${slowLayer} \\(--registry-stall-timeout\\)`));
      const body = imageProblem(failure).toBody();
      assert.equal(body.type, 'urn:svc:problem:image-unavailable');
      assert.equal(body.status, 504);
      assert.deepEqual(await readdir(path.join(store.root, 'images', 'sha256')), []);
      assert.deepEqual(await readdir(path.join(store.root, 'tmp')), [], 'the partial layer is removed');
      await until(async () => (proxy.trickling === 0 ? true : undefined), 'the stalled download to be closed');
    } finally {
      await proxy.close();
    }
  });

  test('a pull whose bytes keep coming too slowly to stall ends at the pull timeout as timed-out', async () => {
    const pushed = await pushImage(registry, 'demo/trickle:2', { layers: [busybox, { 'b.txt': 'slowly' }] });
    const [, slowLayer] = await layerDigests(registry, 'demo/trickle', pushed);
    const proxy = await startRegistryProxy(registry, { trickleBlobs: [slowLayer] });
    try {
      const store = await newStore({ insecure: [proxy.host], transferBounds: { stallMs: 600_000, pullTimeoutMs: 2000 } });
      const failure = await failureOf(pullImage(store, `${proxy.host}/demo/trickle:2`));
      assert.equal(failure.reason, 'timed-out');
      assert.match(failure.message, /the pull did not finish within 2 s \(--registry-pull-timeout\)/);
      assert.deepEqual(await readdir(path.join(store.root, 'images', 'sha256')), []);
      await until(async () => (proxy.trickling === 0 ? true : undefined), 'the slow download to be closed');
    } finally {
      await proxy.close();
    }
  });

  test('a registry with a token service (blobs redirected to another host): refused without credentials or with wrong ones, pulled with the right ones', async () => {
    await pushImage(registry, 'private/tok:1', { layers: [busybox] });
    const proxy = await startRegistryProxy(registry, { token: { username: 'robot', password: 's3cret' }, redirectBlobs: true });
    try {
      const store = await newStore({ insecure: [proxy.host, registry.host] });
      const anonymous = await failureOf(pullImage(store, `${proxy.host}/private/tok:1`));
      assert.equal(anonymous.reason, 'unauthorized');
      assert.match(anonymous.message, /refused anonymous access/);
      const wrong = await failureOf(pullImage(store, `${proxy.host}/private/tok:1`, { credentials: { username: 'robot', password: 'nope' } }));
      assert.equal(wrong.reason, 'unauthorized');
      assert.match(wrong.message, /refused the credentials.*401 UNAUTHORIZED/);
      const pulled = await pullImage(store, `${proxy.host}/private/tok:1`, { credentials: { username: 'robot', password: 's3cret' } });
      assert.ok(pulled.digest.startsWith('sha256:'));
      assert.deepEqual(proxy.tokenRequests.at(-1), { authenticated: true, scope: 'repository:private/tok:pull' });
    } finally {
      await proxy.close();
    }
  });

  test('a registry with htpasswd basic auth: a private image refused without credentials, pulled with them', async () => {
    const credentials = { username: 'team', password: 'pa55word' };
    const privateRegistry = await startRegistry({ basicAuth: credentials });
    try {
      const pushed = await pushImage(privateRegistry, 'private/app:1', { layers: [busybox], credentials });
      const store = await newStore({ insecure: [privateRegistry.host] });
      const refused = await failureOf(pullImage(store, `${privateRegistry.host}/private/app:1`));
      assert.equal(refused.reason, 'unauthorized');
      assert.match(refused.message, /needs credentials/);
      const wrong = await failureOf(pullImage(store, `${privateRegistry.host}/private/app:1`, { credentials: { ...credentials, password: 'x' } }));
      assert.equal(wrong.reason, 'unauthorized');
      assert.equal(wrong.answer?.status, 401);
      assert.equal((await pullImage(store, `${privateRegistry.host}/private/app:1`, { credentials })).digest, pushed);
    } finally {
      await privateRegistry.close();
    }
  });
});

describe('the store', () => {
  test('two pulls of the same image at once, and an image sharing its base, fetch each layer once', async () => {
    const base = { ...busybox, 'etc/base.txt': 'base' };
    await pushImage(registry, 'demo/shared:a', { layers: [base, { 'a.txt': 'a' }] });
    await pushImage(registry, 'demo/shared:b', { layers: [base, { 'b.txt': 'b' }] });
    const store = await newStore();
    const [one, two, three] = await Promise.all([
      pullImage(store, `${registry.host}/demo/shared:a`),
      pullImage(store, `${registry.host}/demo/shared:a`),
      pullImage(store, `${registry.host}/demo/shared:b`),
    ]);
    assert.equal(one.rootfs, two.rootfs);
    const layers = async (digest: string) => JSON.parse(await readFile(path.join(store.imageDir(digest), 'image.json'), 'utf8')).layers as string[];
    const [aLayers, bLayers] = [await layers(one.digest), await layers(three.digest)];
    assert.equal(aLayers[0], bLayers[0]);
    for (const layer of new Set([...aLayers, ...bLayers])) assert.equal(await registry.blobGets(layer), 1, layer);
    const baseFile = (rootfs: string) => stat(path.join(rootfs, 'etc/base.txt'));
    assert.equal((await baseFile(one.rootfs)).ino, (await baseFile(three.rootfs)).ino, 'the shared layer is hard linked, not copied');
  });

  test('two stores on one directory (two svc processes) pulling at once agree on one copy', async () => {
    await pushImage(registry, 'demo/twoproc:1', { layers: [busybox, { 'x.txt': 'x' }] });
    const first = await newStore();
    const second = await newStore({ root: first.root });
    const [a, b] = await Promise.all([pullImage(first, `${registry.host}/demo/twoproc:1`), pullImage(second, `${registry.host}/demo/twoproc:1`)]);
    assert.equal(a.rootfs, b.rootfs);
    assert.equal(await readFile(path.join(a.rootfs, 'x.txt'), 'utf8'), 'x');
    assert.deepEqual(await readdir(path.join(first.root, 'tmp')), []);
  });

  test('whiteouts and opaque directories of upper layers hide what lower layers had', async () => {
    await pushImage(registry, 'demo/whiteout:1', {
      layers: [
        { ...busybox, 'etc/a': 'a', 'etc/b': 'b', 'opt/x/1': '1', 'opt/x/2': '2', 'was-file': 'f', 'was-dir/inner': 'i', 'secret/key': 'k', 'lower/orig': 'lower' },
        { 'etc/.wh.a': '', 'opt/x/.wh..wh..opq': '', 'opt/x/3': '3', 'was-file/now-dir': 'd', 'was-dir': 'now a file', '.wh.secret': '', 'same/orig': 'same', 'same/copy': { hardlink: 'same/orig' } },
        rawTar([{ path: 'lower/copy', type: 'Link', linkpath: 'lower/orig' }]),
      ],
    });
    const image = await pullImage(await newStore(), `${registry.host}/demo/whiteout:1`);
    const list = async (dir: string) => (await readdir(path.join(image.rootfs, dir))).sort();
    assert.deepEqual(await list('etc'), ['b']);
    assert.deepEqual(await list('opt/x'), ['3']);
    assert.equal(await readFile(path.join(image.rootfs, 'was-file/now-dir'), 'utf8'), 'd');
    assert.equal(await readFile(path.join(image.rootfs, 'was-dir'), 'utf8'), 'now a file');
    assert.ok(!(await list('.')).includes('secret'));
    assert.ok(!(await list('.')).some((name) => name.startsWith('.wh.')));
    const inode = async (file: string) => (await stat(path.join(image.rootfs, file))).ino;
    assert.equal(await inode('same/copy'), await inode('same/orig'), 'a hard link within a layer');
    assert.equal(await inode('lower/copy'), await inode('lower/orig'), 'a hard link to a lower layer');
  });

  test('layers that reach outside their root are refused; a symlink of a lower layer is never written through', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'svc-outside-'));
    scratch.push(outside);
    const store = await newStore();
    await pushImage(registry, 'demo/slip:1', { layers: [busybox, rawTar([{ path: '../../escaped.txt', content: 'x' }])] });
    const slip = await failureOf(pullImage(store, `${registry.host}/demo/slip:1`));
    assert.equal(slip.reason, 'invalid');
    assert.match(slip.message, /\.\./);
    await pushImage(registry, 'demo/through:1', { layers: [{ 'evil': { symlink: outside } }, { 'evil/planted.txt': 'x' }] });
    const through = await pullImage(store, `${registry.host}/demo/through:1`);
    assert.deepEqual(await readdir(outside), []);
    assert.ok((await lstat(path.join(through.rootfs, 'evil'))).isDirectory());
  });

  test('an image that would pass the size limit is refused as store-full', async () => {
    await pushImage(registry, 'demo/big:1', { layers: [busybox] });
    const store = await newStore({ maxBytes: 100_000 });
    const failure = await failureOf(pullImage(store, `${registry.host}/demo/big:1`));
    assert.equal(failure.reason, 'store-full');
    assert.match(failure.message, /--images-max-size/);
  });

  test('garbage collection removes images no landscape uses and the layers only they needed', async () => {
    await pushImage(registry, 'demo/gc:keep', { layers: [busybox, { 'keep.txt': 'k' }] });
    await pushImage(registry, 'demo/gc:drop', { layers: [busybox, { 'drop.txt': 'd' }] });
    const store = await newStore();
    const keep = await pullImage(store, `${registry.host}/demo/gc:keep`);
    const drop = await pullImage(store, `${registry.host}/demo/gc:drop`);
    const recent = await collectImages(store, [keep.digest]);
    assert.deepEqual(recent.removedImages, [], 'within the grace period nothing goes');
    const before = await store.usage();
    const collected = await collectImages(store, [keep.digest], { graceMs: 0 });
    assert.deepEqual(collected.removedImages, [drop.digest]);
    assert.equal(collected.removedLayers.length, 1, 'the shared busybox layer stays');
    assert.equal(before - (await store.usage()), collected.freedBytes);
    assert.equal(await readFile(path.join(keep.rootfs, 'keep.txt'), 'utf8'), 'k');
    await assert.rejects(stat(drop.rootfs));
    const all = await collectImages(store, [], { graceMs: 0 });
    assert.deepEqual(all.removedImages, [keep.digest]);
    assert.equal(await store.usage(), 0);
  });
});
