import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networkOwner } from './network.ts';
import { podFirewallOf, podFirewallRules } from './pod-firewall.ts';

test("an installation's firewall is named after it: another data directory gets another table and group", () => {
  const one = podFirewallOf(networkOwner('/srv/svc/data'));
  const other = podFirewallOf(networkOwner('/srv/svc2/data'));
  assert.match(one.table, /^svc_[0-9a-f]{12}$/);
  assert.equal(one.table, `svc_${networkOwner('/srv/svc/data').slice(4)}`);
  assert.notEqual(one.table, other.table);
  assert.notEqual(one.group, other.group);
  assert.deepEqual(podFirewallOf(networkOwner('/srv/svc/data')), one);
  for (const { group } of [one, other]) assert.ok(Number.isInteger(group) && group > 255 && group < 2 ** 31, String(group));
});

test('the rules replace the table in one transaction; the input chain refuses all but replies, neighbour discovery and what the policy opens', () => {
  const rules = podFirewallRules({ table: 'svc_abc', group: 4242, offGroup: 4242 + 2 ** 30 }).split('\n');
  assert.deepEqual(rules.slice(0, 3), ['table inet svc_abc {}', 'delete table inet svc_abc', 'table inet svc_abc {']);
  const input = rules.slice(rules.indexOf('  chain input {'), rules.indexOf('  chain forward {')).filter((line) => line.includes('iifgroup')).map((line) => line.trim());
  const both = `{ 4242, ${4242 + 2 ** 30} }`;
  assert.deepEqual(input, [
    `iifgroup ${both} ct state established,related accept`,
    `iifgroup ${both} icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept`,
    'iifgroup 4242 ip daddr @pods reject with icmpx type port-unreachable',
    'iifgroup 4242 ip daddr @dns meta l4proto { tcp, udp } th dport 53 accept',
    'iifgroup 4242 ip daddr . tcp dport @published accept',
    'iifgroup 4242 ip daddr @denied reject with icmpx type port-unreachable',
    'iifgroup 4242 ip daddr @allowed accept',
    `iifgroup ${both} reject with icmpx type port-unreachable`,
  ]);
  assert.ok(rules.includes('    type filter hook input priority filter; policy accept;'));
});

test('the egress chain: off refused (connections under way too), then replies, IPv6 refused, resolvers, denied, pods, published, allowed, refused ranges, the rest accepted', () => {
  const rules = podFirewallRules({ table: 'svc_abc', group: 7, offGroup: 8 }, { podRanges: ['10.213.0.0/16', '10.214.0.0/16'], dns: ['10.255.255.53'], allow: ['10.9.0.0/16'], deny: ['8.8.8.8/32'], published: [{ address: '192.0.2.2', port: 443 }] });
  const lines = rules.split('\n').map((line) => line.trim());
  const egress = lines.slice(lines.indexOf('chain egress {') + 1, lines.indexOf('chain postrouting {') - 1);
  assert.deepEqual(egress.map((line) => line.split(' ').slice(0, 3).join(' ')), [
    'iifgroup 8 reject',
    'ct state established,related',
    'meta nfproto ipv6',
    'ip daddr @dns',
    'ip daddr @denied',
    'ip daddr @pods',
    'ip daddr .',
    'ip daddr @allowed',
    'ip daddr @refused',
    'accept',
  ]);
  assert.ok(lines.includes('elements = { 10.213.0.0/16, 10.214.0.0/16 }'));
  assert.ok(lines.includes('elements = { 192.0.2.2 . 443 }'));
  assert.ok(lines.includes('ip saddr @pods oifgroup != { 7, 8 } masquerade'));
});
