import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocumentError, MediaTypes, parseImageConfig, parseManifestDocument, pickPlatform, type ImageIndex } from './manifest.ts';
import { parseChallenge, tokenUrl } from './registry-auth.ts';

const d = (c: string) => `sha256:${c.repeat(64)}`;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

test('OCI and Docker v2 manifests give the config and the layers with their compression', () => {
  const oci = parseManifestDocument(json({ schemaVersion: 2, mediaType: MediaTypes.ociManifest, config: { mediaType: MediaTypes.ociConfig, digest: d('a'), size: 3 }, layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', digest: d('b'), size: 9 }] }), undefined);
  assert.equal(oci.kind, 'manifest');
  assert.deepEqual(oci.kind === 'manifest' && oci.layers.map((l) => l.compression), ['zstd']);
  const docker = parseManifestDocument(json({ schemaVersion: 2, config: { mediaType: MediaTypes.dockerConfig, digest: d('a'), size: 3 }, layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', digest: d('c'), size: 1 }] }), MediaTypes.dockerManifest);
  assert.deepEqual(docker.kind === 'manifest' && docker.layers.map((l) => l.compression), ['gzip']);
});

test('indexes and manifest lists: linux/amd64 is picked, without a variant first', () => {
  const index = parseManifestDocument(json({ schemaVersion: 2, manifests: [
    { mediaType: MediaTypes.ociManifest, digest: d('1'), size: 1, platform: { os: 'linux', architecture: 'arm64' } },
    { mediaType: MediaTypes.ociManifest, digest: d('2'), size: 1, platform: { os: 'linux', architecture: 'amd64', variant: 'v3' } },
    { mediaType: MediaTypes.ociManifest, digest: d('3'), size: 1, platform: { os: 'linux', architecture: 'amd64' } },
  ] }), MediaTypes.dockerList) as ImageIndex;
  assert.equal(index.kind, 'index');
  assert.equal(pickPlatform(index)?.digest, d('3'));
  assert.equal(pickPlatform({ kind: 'index', manifests: index.manifests.slice(0, 1) }), undefined);
});

test('schema 1, artifacts, unknown layer types and sha512 digests are unsupported; broken JSON is invalid', () => {
  const reason = (bytes: Buffer, type?: string) => {
    try {
      parseManifestDocument(bytes, type);
    } catch (error) {
      return error instanceof DocumentError ? error.reason : 'other';
    }
    return 'parsed';
  };
  assert.equal(reason(json({ schemaVersion: 1, fsLayers: [] }), 'application/vnd.docker.distribution.manifest.v1+prettyjws'), 'unsupported');
  assert.equal(reason(json({ schemaVersion: 2, config: { mediaType: 'application/vnd.cncf.helm.config.v1+json', digest: d('a'), size: 1 }, layers: [] })), 'unsupported');
  assert.equal(reason(json({ schemaVersion: 2, config: { mediaType: MediaTypes.ociConfig, digest: d('a'), size: 1 }, layers: [{ mediaType: 'application/x-rar', digest: d('b'), size: 1 }] })), 'unsupported');
  assert.equal(reason(json({ schemaVersion: 2, config: { mediaType: MediaTypes.ociConfig, digest: `sha512:${'a'.repeat(128)}`, size: 1 }, layers: [] })), 'unsupported');
  assert.equal(reason(Buffer.from('{not json')), 'invalid');
  assert.equal(reason(json({ schemaVersion: 2, config: { mediaType: MediaTypes.ociConfig, digest: d('a'), size: -1 }, layers: [] })), 'invalid');
});

test('the image config gives Entrypoint, Cmd, Env, WorkingDir, User, ExposedPorts and the diff ids', () => {
  const parsed = parseImageConfig(json({ os: 'linux', architecture: 'amd64', config: { Entrypoint: ['/bin/httpd'], Cmd: ['-f'], Env: ['PATH=/bin'], WorkingDir: '/www', User: '1000', ExposedPorts: { '8080/tcp': {} }, Labels: { a: 'b' } }, rootfs: { type: 'layers', diff_ids: [d('e')] } }));
  assert.deepEqual(parsed, { os: 'linux', architecture: 'amd64', diffIds: [d('e')], config: { Entrypoint: ['/bin/httpd'], Cmd: ['-f'], Env: ['PATH=/bin'], WorkingDir: '/www', User: '1000', ExposedPorts: { '8080/tcp': {} } } });
  assert.deepEqual(parseImageConfig(json({ config: null })).config, {});
});

test('WWW-Authenticate challenges: Bearer with quoted values holding commas, Basic', () => {
  const bearer = parseChallenge('Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push"');
  assert.deepEqual(bearer, { scheme: 'bearer', params: { realm: 'https://auth.example.com/token', service: 'registry.example.com', scope: 'repository:a/b:pull,push' } });
  assert.equal(tokenUrl(bearer!, 'a/b').toString(), 'https://auth.example.com/token?service=registry.example.com&scope=repository%3Aa%2Fb%3Apull%2Cpush');
  assert.equal(tokenUrl({ scheme: 'bearer', params: { realm: 'https://t.example/token' } }, 'x/y').searchParams.get('scope'), 'repository:x/y:pull');
  assert.deepEqual(parseChallenge('Basic realm="Registry Realm"'), { scheme: 'basic', params: { realm: 'Registry Realm' } });
  assert.equal(parseChallenge(null), undefined);
});
