import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImageFailure } from './failures.ts';
import { formatImageReference, normalizeRegistryHost, parseImageReference, registryApiHost } from './reference.ts';

const digest = `sha256:${'a'.repeat(64)}`;

test('a name without registry is on Docker Hub; one part gets library/; no tag means latest', () => {
  assert.deepEqual(parseImageReference('busybox'), { registry: 'docker.io', repository: 'library/busybox', tag: 'latest', digest: undefined });
  assert.deepEqual(parseImageReference('team/api:1.2'), { registry: 'docker.io', repository: 'team/api', tag: '1.2', digest: undefined });
  assert.deepEqual(parseImageReference('index.docker.io/library/redis:7'), { registry: 'docker.io', repository: 'library/redis', tag: '7', digest: undefined });
  assert.equal(registryApiHost('docker.io'), 'registry-1.docker.io');
});

test('a first part with a dot, a port or localhost is the registry', () => {
  assert.deepEqual(parseImageReference('127.0.0.1:5000/demo/web:1'), { registry: '127.0.0.1:5000', repository: 'demo/web', tag: '1', digest: undefined });
  assert.deepEqual(parseImageReference('localhost/web'), { registry: 'localhost', repository: 'web', tag: 'latest', digest: undefined });
  assert.deepEqual(parseImageReference('ghcr.io/org/tool'), { registry: 'ghcr.io', repository: 'org/tool', tag: 'latest', digest: undefined });
  assert.equal(registryApiHost('ghcr.io'), 'ghcr.io');
});

test('a digest pins the image; with a tag too, the digest wins and the tag is kept for display', () => {
  assert.deepEqual(parseImageReference(`busybox@${digest}`), { registry: 'docker.io', repository: 'library/busybox', tag: undefined, digest });
  const both = parseImageReference(`reg.example.com:443/a/b:2@${digest}`);
  assert.deepEqual(both, { registry: 'reg.example.com:443', repository: 'a/b', tag: '2', digest });
  assert.equal(formatImageReference(both), `reg.example.com:443/a/b:2@${digest}`);
  assert.equal(formatImageReference(parseImageReference('busybox')), 'docker.io/library/busybox:latest');
});

test('bad references are refused as invalid-reference, naming what is wrong', () => {
  for (const [text, why] of [
    ['', /1 to 512/],
    ['Busybox', /lowercase/],
    ['busybox:', /tag/],
    ['busybox:-x', /tag/],
    ['busybox@sha256:abc', /digest/],
    ['busybox@md5:' + 'a'.repeat(32), /digest/],
    ['reg.example.com/', /repository/],
    ['a//b', /repository/],
    ['x'.repeat(513), /512/],
  ] as const) {
    assert.throws(() => parseImageReference(text), (error: unknown) => error instanceof ImageFailure && error.reason === 'invalid-reference' && why.test(error.message), text);
  }
});

test('registry hosts for credentials: lowercase, Docker Hub aliases as docker.io', () => {
  assert.equal(normalizeRegistryHost('Registry-1.Docker.io'), 'docker.io');
  assert.equal(normalizeRegistryHost(' GHCR.io '), 'ghcr.io');
});
