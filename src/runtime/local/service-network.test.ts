import assert from 'node:assert/strict';
import { test } from 'node:test';
import { macAddressOf } from './service-network.ts';

test('a pod\'s MAC address on its service network follows from its IPv4 address (locally administered, unicast)', () => {
  assert.equal(macAddressOf('10.214.3.67'), '02:53:0a:d6:03:43');
  assert.equal(macAddressOf('10.214.3.67'), macAddressOf('10.214.3.67'));
  assert.notEqual(macAddressOf('10.214.3.67'), macAddressOf('10.214.3.68'));
});
