import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidateBlocks, cidrsOverlap, pickBlock, routeDestinations } from './address-blocks.ts';

test("the machine's routes are read from every table, types and default left aside", () => {
  const listing = [
    'default via 192.168.1.1 dev eth0 proto dhcp',
    '10.213.0.0/16 dev br0 scope link',
    'unreachable 10.215.0.0/16',
    'local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1',
  ].join('\n');
  assert.deepEqual(routeDestinations(listing), ['10.213.0.0/16', '10.215.0.0/16', '127.0.0.1']);
  assert.deepEqual(routeDestinations(listing, ['10.215.0.0/16']), ['10.213.0.0/16', '127.0.0.1'], "a gone installation's unreachable block");
});

test('a block is picked past routes, reserved ranges and other installations, in candidate order', () => {
  const candidates = candidateBlocks();
  assert.equal(candidates[0], '10.213.0.0/16');
  const claimed: string[] = [];
  const claim = (block: string) => (claimed.push(block), true);
  assert.equal(pickBlock(candidates, ['10.213.4.0/30'], ['10.214.0.0/16'], claim), '10.215.0.0/16');
  assert.equal(pickBlock(['203.0.0.0/16', '10.9.0.0/16'], [], [], claim), '10.9.0.0/16', 'the registries are never routed');
  assert.equal(pickBlock(['10.213.0.0/16'], [], [], () => false), undefined, 'a claim lost to another installation');
  assert.equal(cidrsOverlap('10.213.0.0/16', '10.213.255.254'), true);
});
