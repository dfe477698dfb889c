// The runtime images' names as images.sh prints them, and where `svc images build --push` puts them. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseImagesScriptOutput, parsePushDestination, pushedReference, registryAuthFile } from './runtime-images.ts';

const output = [
  'SVC_KUBE_IMAGES_LAYOUT=/cache/kube-images/layout',
  'SVC_KUBE_BASE_IMAGE=svc.local/base:d418737a509492c6',
  'SVC_KUBE_BASE_ARCHIVE=/cache/kube-images/base-d418737a509492c6.tar',
  'SVC_KUBE_AGENT_IMAGE=svc.local/agent:24298bd9152cd3b2',
  'SVC_KUBE_AGENT_ARCHIVE=/cache/kube-images/agent-24298bd9152cd3b2.tar',
  '',
].join('\n');

test('the script\'s NAME=value lines give each image its reference, key and archive', () => {
  assert.deepEqual(parseImagesScriptOutput(`images: building base\n${output}`), {
    layout: '/cache/kube-images/layout',
    images: [
      { name: 'base', reference: 'svc.local/base:d418737a509492c6', key: 'd418737a509492c6', archive: '/cache/kube-images/base-d418737a509492c6.tar' },
      { name: 'agent', reference: 'svc.local/agent:24298bd9152cd3b2', key: '24298bd9152cd3b2', archive: '/cache/kube-images/agent-24298bd9152cd3b2.tar' },
    ],
  });
  assert.throws(() => parseImagesScriptOutput('SVC_KUBE_BASE_IMAGE=svc.local/base:1\n'), /no SVC_KUBE_IMAGES_LAYOUT/);
  assert.throws(() => parseImagesScriptOutput('SVC_KUBE_IMAGES_LAYOUT=/l\nSVC_KUBE_BASE_IMAGE=svc.local/base:1\n'), /SVC_KUBE_BASE_IMAGE but no archive/);
  assert.throws(() => parseImagesScriptOutput('SVC_KUBE_IMAGES_LAYOUT=/l\n'), /no image/);
});

test('--push takes a registry host and a prefix; the images go under it by name and key', () => {
  const destination = parsePushDestination('registry.example.com:5000/team/svc/');
  assert.deepEqual(destination, { registry: 'registry.example.com:5000', prefix: 'team/svc' });
  assert.equal(pushedReference(destination, { name: 'agent', key: 'abc', reference: '', archive: '' }), 'registry.example.com:5000/team/svc/agent:abc');
  assert.deepEqual(parsePushDestination('localhost/svc'), { registry: 'localhost', prefix: 'svc' });
  assert.throws(() => parsePushDestination('registry.example.com'), /give the registry and a repository prefix/);
  assert.throws(() => parsePushDestination('team/svc'), /team is not a registry host/);
  assert.throws(() => parsePushDestination('registry.example.com/Team'), /not an image reference/);
});

test('the auth file holds the credentials for that registry only, as skopeo reads them', () => {
  const file = JSON.parse(registryAuthFile('127.0.0.1:5000', 'operator', 'p:ss')) as { auths: Record<string, { auth: string }> };
  assert.deepEqual(Object.keys(file.auths), ['127.0.0.1:5000']);
  assert.equal(Buffer.from(file.auths['127.0.0.1:5000'].auth, 'base64').toString(), 'operator:p:ss');
});
