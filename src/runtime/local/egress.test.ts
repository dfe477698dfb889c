import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostResolvers, nameserversOf, parseCidrList, parseIpv4Cidr, podResolvConf } from './egress.ts';

test('CIDR lists: addresses become /32, IPv6 and nonsense are refused naming the text', () => {
  assert.deepEqual(parseCidrList(' 10.0.0.0/8, 192.0.2.7 ,,'), ['10.0.0.0/8', '192.0.2.7/32']);
  assert.throws(() => parseIpv4Cidr('fd00::/8'), /"fd00::\/8" is not an IPv4 address or CIDR/);
  assert.throws(() => parseIpv4Cidr('10.0.0.0/33'), /not an IPv4/);
  assert.throws(() => parseIpv4Cidr('300.1.1.1'), /not an IPv4/);
});

test("the pods' resolvers: the host's unless on loopback, then systemd-resolved's upstream servers, else none with a note", () => {
  const files = (map: Record<string, string>) => (file: string) => map[file];
  assert.deepEqual(hostResolvers(files({ '/etc/resolv.conf': 'search x\nnameserver 10.255.255.53\nnameserver ::1\n' })), { servers: ['10.255.255.53'] });
  const resolved = hostResolvers(files({ '/etc/resolv.conf': 'nameserver 127.0.0.53\n', '/run/systemd/resolve/resolv.conf': 'nameserver 192.0.2.53\n' }));
  assert.deepEqual(resolved.servers, ['192.0.2.53']);
  assert.match(resolved.note!, /upstream/);
  const none = hostResolvers(files({ '/etc/resolv.conf': 'nameserver 127.0.0.53\n' }));
  assert.deepEqual(none.servers, []);
  assert.match(none.note!, /--pod-dns/);
  assert.deepEqual(nameserversOf(podResolvConf(['198.51.100.53'])), ['198.51.100.53']);
});

test("the pods' resolv.conf is bound where the host's /etc/resolv.conf leads (systemd-resolved's link)", async () => {
  const { linkDestination } = await import('./image-pod-parts.ts');
  const links: Record<string, string> = { '/etc/resolv.conf': '../run/systemd/resolve/stub-resolv.conf' };
  assert.equal(await linkDestination('/etc/resolv.conf', async (file) => links[file]), '/run/systemd/resolve/stub-resolv.conf');
  assert.equal(await linkDestination('/etc/resolv.conf', async () => undefined), '/etc/resolv.conf');
});
