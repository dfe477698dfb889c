import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BLOCK_END, BLOCK_START, knownHostsText, sshConfigBlock, withBlock, withoutBlock } from './ssh-config-block.ts';

const hosts = [{ host: 'api.acme.svc', user: 'ada', hostKey: 'ssh-ed25519 AAAA' }];
const block = sshConfigBlock(hosts, ['/usr/bin/node', '/opt/svc/bin/svc.js'], '/home/ada/.config/svc/known_hosts');
const count = (text: string, word: string) => text.split(word).length - 1;

test('the block names each workspace, its user, the ProxyCommand and svc known_hosts, and a wildcard', () => {
  assert.match(block, /^Host api\.acme\.svc\n {2}User ada\n {2}ProxyCommand \/usr\/bin\/node \/opt\/svc\/bin\/svc\.js ssh --stdio %h\n {2}UserKnownHostsFile \/home\/ada\/\.config\/svc\/known_hosts$/m);
  assert.match(block, /^Host \*\.svc$/m);
  assert.equal(knownHostsText(hosts), 'api.acme.svc ssh-ed25519 AAAA\n');
});

test('writing the block twice leaves one, and the rest of the file as it was', () => {
  const own = 'Host github.com\n  User git\n';
  const once = withBlock(own, block);
  const twice = withBlock(once, block);
  assert.equal(twice, once);
  assert.equal(count(twice, BLOCK_START), 1);
  assert.ok(twice.endsWith(own));
  assert.equal(withoutBlock(twice), own);
  assert.equal(count(withoutBlock(twice), BLOCK_END), 0);
});

test('a path with a space is quoted', () => {
  assert.match(sshConfigBlock(hosts, ['/opt/my svc/svc'], '/k h'), /ProxyCommand "\/opt\/my svc\/svc" ssh --stdio %h\n {2}UserKnownHostsFile "\/k h"/);
});
