import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { AllowList, classifyAddress, pinnedLookup, resolveForwardTarget, type ResolvedAddress } from './ssrf.ts';

const nothingAllowed = new AllowList([]);

/** A lookup that answers from a table and never touches DNS. */
function fakeLookup(table: Record<string, string[]>): (host: string) => Promise<ResolvedAddress[]> {
  return async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const noDns = fakeLookup({});

test('classifyAddress names the class of IPv4 addresses', () => {
  const expected: [string, string][] = [
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
  ];
  for (const [ip, addressClass] of expected) assert.equal(classifyAddress(ip), addressClass, ip);
});

test('classifyAddress names the class of IPv6 addresses, by the embedded IPv4 address where there is one', () => {
  const expected: [string, string][] = [
    ['2606:2800:220:1:248:1893:25c8:1946', 'public'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:93.184.216.34', 'public'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::93.184.216.34', 'public'],
    ['2002:7f00:1::1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['4000::1', 'reserved'],
  ];
  for (const [ip, addressClass] of expected) assert.equal(classifyAddress(ip), addressClass, ip);
});

test('classifyAddress refuses text that is not an IP address, including octal-looking IPv4', () => {
  for (const text of ['example.com', '127.1', '0177.0.0.1', '1.2.3.256', '1::2::3', '12345::1', '']) {
    assert.throws(() => classifyAddress(text), TypeError, text);
  }
});

test('targets at non-public IP literals are refused as forbidden with a readable reason', async () => {
  const cases: [string, string, string][] = [
    ['http://127.0.0.1/', '127.0.0.1 is a loopback address', '127.0.0.1'],
    ['http://10.0.0.1:8080/x', '10.0.0.1 is a private address', '10.0.0.1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address', '169.254.169.254'],
    ['http://[::1]/', '::1 is a loopback address', '::1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 (IPv4 127.0.0.1) is a loopback address', '::ffff:7f00:1'],
    ['http://0.0.0.0/', '0.0.0.0 is an unspecified address', '0.0.0.0'],
    ['http://[::]/', ':: is an unspecified address', '::'],
    ['http://224.0.0.1/', '224.0.0.1 is a multicast address', '224.0.0.1'],
  ];
  for (const [target, reason, address] of cases) {
    const answer = await resolveForwardTarget(target, { allow: nothingAllowed, lookup: noDns });
    assert.deepEqual(answer, { ok: false, kind: 'forbidden', reason, address }, target);
  }
});

test('decimal, octal and hex IPv4 spellings are seen as 127.0.0.1', async () => {
  for (const target of ['http://2130706433/', 'http://0x7f.0.0.1/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/']) {
    const answer = await resolveForwardTarget(target, { allow: nothingAllowed, lookup: noDns });
    assert.deepEqual(answer, { ok: false, kind: 'forbidden', reason: '127.0.0.1 is a loopback address', address: '127.0.0.1' }, target);
  }
});

test('a host name resolving to loopback is refused and the reason names both', async () => {
  const answer = await resolveForwardTarget('http://sneaky.test/', { allow: nothingAllowed, lookup: fakeLookup({ 'sneaky.test': ['127.0.0.1'] }) });
  assert.deepEqual(answer, { ok: false, kind: 'forbidden', reason: 'sneaky.test resolves to 127.0.0.1, a loopback address', address: '127.0.0.1' });
});

test('a host name resolving to one public and one private address is refused', async () => {
  const lookup = fakeLookup({ 'mixed.test': ['93.184.216.34', '10.1.2.3'] });
  const answer = await resolveForwardTarget('https://mixed.test/', { allow: nothingAllowed, lookup });
  assert.deepEqual(answer, { ok: false, kind: 'forbidden', reason: 'mixed.test resolves to 10.1.2.3, a private address', address: '10.1.2.3' });
});

test('a public address is allowed and pinned, with Host header and TLS server name of the original name', async () => {
  const literal = await resolveForwardTarget('http://93.184.216.34/base', { allow: nothingAllowed, lookup: noDns });
  assert.equal(literal.ok, true);
  assert.ok(literal.ok);
  assert.equal(literal.address, '93.184.216.34');
  assert.equal(literal.family, 4);
  assert.equal(literal.hostHeader, '93.184.216.34');
  assert.equal(literal.servername, undefined);

  const lookup = fakeLookup({ 'docs.example.com': ['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34'] });
  const named = await resolveForwardTarget('https://user:secret@docs.example.com:8443/base', { allow: nothingAllowed, lookup });
  assert.ok(named.ok);
  assert.equal(named.address, '2606:2800:220:1:248:1893:25c8:1946');
  assert.equal(named.family, 6);
  assert.equal(named.hostHeader, 'docs.example.com:8443');
  assert.equal(named.servername, 'docs.example.com');
  assert.equal(named.url.pathname, '/base');
});

test('an allow-listed private CIDR opens its addresses and no others', async () => {
  const allow = new AllowList(['10.20.0.0/16', 'fd00:1::/64', '192.168.5.7']);
  const lookup = fakeLookup({ 'db.internal': ['10.20.3.4'], 'other.internal': ['10.21.0.1'] });
  const inside = await resolveForwardTarget('http://db.internal:5000/', { allow, lookup });
  assert.ok(inside.ok);
  assert.equal(inside.address, '10.20.3.4');
  const outside = await resolveForwardTarget('http://other.internal/', { allow, lookup });
  assert.equal(outside.ok, false);
  assert.equal(allow.allows('::ffff:10.20.9.9'), true);
  assert.equal(allow.allows('fd00:1::5'), true);
  assert.equal(allow.allows('fd00:2::5'), false);
  assert.equal(allow.allows('192.168.5.7'), true);
  assert.equal(allow.allows('192.168.5.8'), false);
  assert.equal(allow.allows('not an address'), false);
});

test('a CIDR never opens a metadata address; an entry naming it exactly does', async () => {
  assert.equal(new AllowList(['169.254.0.0/16']).allows('169.254.169.254'), false);
  assert.equal(new AllowList(['169.254.0.0/16']).allows('169.254.1.1'), true);
  assert.equal(new AllowList(['0.0.0.0/0']).allows('169.254.169.254'), false);
  assert.equal(new AllowList(['169.254.169.254']).allows('169.254.169.254'), true);
  const teamEverything = await resolveForwardTarget('http://169.254.169.254/', { allow: nothingAllowed, teamAddresses: () => true });
  assert.equal(teamEverything.ok, false);
});

test('the team\'s own service addresses are allowed though private', async () => {
  const lookup = fakeLookup({ 'api.team-ns.svc': ['10.96.0.12'] });
  const teamAddresses = (ip: string) => ip === '10.96.0.12';
  const answer = await resolveForwardTarget('http://api.team-ns.svc/', { allow: nothingAllowed, lookup, teamAddresses });
  assert.ok(answer.ok);
  assert.equal(answer.address, '10.96.0.12');
});

test('malformed allow-list entries are refused with a readable message', () => {
  assert.throws(() => new AllowList(['10.20.1.0/16']), /has host bits set; did you mean 10\.20\.0\.0\/16\?/);
  assert.throws(() => new AllowList(['fd00:1::1/64']), /did you mean fd00:1::\/64\?/);
  assert.throws(() => new AllowList(['10.0.0.0/33']), /"10\.0\.0\.0\/33" is not an IP address or CIDR/);
  assert.throws(() => new AllowList(['intranet']), /is not an IP address or CIDR/);
});

test('DNS rebinding: the first resolved address is pinned and pinnedLookup always answers it', async () => {
  let calls = 0;
  const rebinding = async (): Promise<ResolvedAddress[]> => {
    calls += 1;
    return [{ address: calls === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
  };
  const answer = await resolveForwardTarget('http://rebind.test/', { allow: nothingAllowed, lookup: rebinding });
  assert.ok(answer.ok);
  assert.equal(answer.address, '93.184.216.34');
  assert.equal(calls, 1);

  const lookup = pinnedLookup(answer.address, answer.family);
  for (let i = 0; i < 3; i++) {
    const one = await new Promise<[unknown, number | undefined]>((resolve, reject) =>
      lookup('rebind.test', {}, (error, address, family) => (error ? reject(error) : resolve([address, family]))),
    );
    assert.deepEqual(one, ['93.184.216.34', 4]);
    const all = await new Promise<unknown>((resolve, reject) =>
      lookup('rebind.test', { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
    );
    assert.deepEqual(all, [{ address: '93.184.216.34', family: 4 }]);
  }
  assert.equal(calls, 1);

  // Resolving again would have met the rebound answer.
  const again = await resolveForwardTarget('http://rebind.test/', { allow: nothingAllowed, lookup: rebinding });
  assert.equal(again.ok, false);
});

test('non-http schemes and unparsable targets are invalid', async () => {
  for (const target of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://127.0.0.1/', 'javascript:alert(1)']) {
    const answer = await resolveForwardTarget(target, { allow: nothingAllowed, lookup: noDns });
    assert.equal(answer.ok, false, target);
    assert.equal(!answer.ok && answer.kind, 'invalid', target);
  }
  const garbage = await resolveForwardTarget('not a url with secret:pw@', { allow: nothingAllowed, lookup: noDns });
  assert.deepEqual(garbage, { ok: false, kind: 'invalid', reason: 'the target is not a valid URL' });
});

test('a name that does not resolve is unresolvable, not forbidden', async () => {
  const missing = await resolveForwardTarget('http://nowhere.test/', { allow: nothingAllowed, lookup: noDns });
  assert.deepEqual(missing, { ok: false, kind: 'unresolvable', reason: 'name does not resolve: nowhere.test (ENOTFOUND)' });
  const empty = await resolveForwardTarget('http://empty.test/', { allow: nothingAllowed, lookup: fakeLookup({ 'empty.test': [] }) });
  assert.deepEqual(empty, { ok: false, kind: 'unresolvable', reason: 'name does not resolve: empty.test (no addresses)' });
});

test('http.get with pinnedLookup reaches the pinned address without DNS', async (t) => {
  const server = http.createServer((request, response) => response.end(`reached ${request.headers.host}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const allow = new AllowList(['127.0.0.0/8']);
  const resolved = await resolveForwardTarget(`http://localhost:${port}/`, { allow, lookup: fakeLookup({ localhost: ['127.0.0.1'] }) });
  assert.ok(resolved.ok);
  assert.equal(resolved.address, '127.0.0.1');

  const body = await new Promise<string>((resolve, reject) => {
    const request = http.get(`http://some-name.test:${port}/`, { lookup: pinnedLookup(resolved.address, resolved.family), agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(text));
    });
    request.on('error', reject);
  });
  assert.equal(body, `reached some-name.test:${port}`);
});
