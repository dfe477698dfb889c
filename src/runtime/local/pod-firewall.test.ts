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

test('the rules replace the table in one transaction and refuse all but replies and neighbour discovery on the group', () => {
  const rules = podFirewallRules({ table: 'svc_abc', group: 4242 }).split('\n');
  assert.deepEqual(rules.slice(0, 3), ['table inet svc_abc {}', 'delete table inet svc_abc', 'table inet svc_abc {']);
  const body = rules.filter((line) => line.includes('iifgroup')).map((line) => line.trim());
  assert.deepEqual(body, [
    'iifgroup 4242 ct state established,related accept',
    'iifgroup 4242 icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept',
    'iifgroup 4242 reject with icmpx type port-unreachable',
  ]);
  assert.ok(rules.includes('    type filter hook input priority filter; policy accept;'));
});
