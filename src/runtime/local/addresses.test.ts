import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  parsePrivateRange, podNetworkOf, rangesOverlap, REPLICA_SLOTS, replicaAddressOf, replicaNetnsOf, replicaSwitchLinkOf, serviceNetworkOf,
} from './addresses.ts';

test('a workspace gets a /30 of the pod range from its id: host end .1, pod end .2 of its block', () => {
  assert.deepEqual(podNetworkOf('a1b2c', 42), {
    netns: 'svc-a1b2c-ws42',
    hostVeth: 'ha1b2c16',
    podVeth: 'pa1b2c16',
    hostAddress: '10.213.0.169',
    podAddress: '10.213.0.170',
    subnet: '10.213.0.168/30',
  });
  assert.equal(podNetworkOf('a1b2c', 1).podAddress, '10.213.0.6');
  assert.equal(podNetworkOf('a1b2c', 16383).podAddress, '10.213.255.254');
});

test('the blocks wrap around the range, so any id gets an address inside it', () => {
  assert.equal(podNetworkOf('a1b2c', 16384).subnet, '10.213.0.0/30');
  assert.equal(podNetworkOf('a1b2c', 900001, '10.213.0.0/16').subnet, podNetworkOf('a1b2c', 900001 % 16384, '10.213.0.0/16').subnet);
  assert.equal(podNetworkOf('a1b2c', 5, '192.168.40.0/24').podAddress, '192.168.40.22');
  assert.equal(podNetworkOf('a1b2c', 70, '192.168.40.0/24').podAddress, '192.168.40.26');
});

test('neighbouring workspaces never share a block', () => {
  const subnets = new Set(Array.from({ length: 1000 }, (_, i) => podNetworkOf('a1b2c', 900001 + i).subnet));
  assert.equal(subnets.size, 1000);
});

test('interface names hold the installation and the id in base 36 and fit in 15 characters', () => {
  assert.equal(podNetworkOf('a1b2c', 999_999_999_999).hostVeth, `ha1b2c${(999_999_999_999).toString(36)}`);
  const large = podNetworkOf('a1b2c', Number.MAX_SAFE_INTEGER);
  assert.match(large.hostVeth, /^ha1b2c[0-9A-F]{9}$/);
  assert.ok(large.hostVeth.length <= 15 && large.podVeth.length <= 15);
  assert.notEqual(large.hostVeth, large.podVeth);
  assert.notEqual(podNetworkOf('a1b2c', 1).hostVeth, podNetworkOf('f0e9d', 1).hostVeth, 'two installations, one workspace id');
  assert.notEqual(podNetworkOf('a1b2c', 1).netns, podNetworkOf('f0e9d', 1).netns);
  assert.throws(() => podNetworkOf('A-1', 1), /installation tag/);
});

test('ids that are not positive integers are refused', () => {
  for (const id of [0, -1, 1.5, Number.NaN]) assert.throws(() => podNetworkOf('a1b2c', id), /positive integer/);
});

test('the pod range must be a private IPv4 CIDR of /8 to /28', () => {
  assert.deepEqual(parsePrivateRange('10.213.7.9/16'), { base: (10 * 256 + 213) * 65536, prefix: 16 });
  assert.equal(parsePrivateRange('172.20.0.0/16').prefix, 16);
  for (const range of ['10.0.0.0/29', '10.0.0.0/7', '10.0.0.0', '10.0.0.256/16', 'ten/8']) {
    assert.throws(() => parsePrivateRange(range), /not an IPv4 CIDR/);
  }
  for (const range of ['8.8.0.0/16', '172.32.0.0/16', '192.169.0.0/16', '11.0.0.0/8']) {
    assert.throws(() => parsePrivateRange(range), /not inside 10\/8/);
  }
});

test('a workspace\'s service network is a /26 of the service range: host .1, editor .2, replicas from .3', () => {
  const network = serviceNetworkOf('a1b2c', 42);
  assert.deepEqual(network, {
    netns: 'svc-a1b2c-ws42-net',
    hostVeth: 'na1b2c16',
    subnet: '10.214.10.128/26',
    hostAddress: '10.214.10.129',
    editorAddress: '10.214.10.130',
  });
  assert.equal(replicaAddressOf(network, 0), '10.214.10.131');
  assert.equal(replicaAddressOf(network, REPLICA_SLOTS - 1), '10.214.10.190');
  assert.throws(() => replicaAddressOf(network, REPLICA_SLOTS), /no replica slot/);
  assert.equal(serviceNetworkOf('a1b2c', 42, undefined, 1).subnet, '10.214.10.192/26', 'the next attempt takes the next block');
  assert.equal(serviceNetworkOf('a1b2c', 1024 + 42).subnet, network.subnet, 'the blocks wrap around the range');
  assert.throws(() => serviceNetworkOf('a1b2c', 1, '10.214.0.0/27'), /smaller than a \/26/);
});

test('replica names: a network namespace per replica, a link name of at most 15 characters in the switch', () => {
  assert.equal(replicaNetnsOf('a1b2c', 42, 'api', 1), 'svc-a1b2c-ws42-api-1');
  const link = replicaSwitchLinkOf('a-very-long-service-name-of-32ch', 7);
  assert.match(link, /^r[0-9a-f]{12}$/);
  assert.notEqual(replicaSwitchLinkOf('api', 0), replicaSwitchLinkOf('api', 1));
  assert.equal(rangesOverlap('10.213.0.0/16', '10.214.0.0/16'), false);
  assert.equal(rangesOverlap('10.0.0.0/8', '10.214.0.0/16'), true);
});
