// `svc domains` as a process against a real server with dnsmasq on loopback: add with routes (a workspace by name),
// the TXT record to create, show moving to Verified once the record exists, list, bad input, remove; routes added
// and removed, the settings changed, a re-check that waits for its outcome, a certificate uploaded and removed.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { madeCertificate } from './helpers/certificates.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let dns: TestDns;
let owner: ApiClient;
let team: number;
let workspace: number;
let configHome: string;

before(async () => {
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-domains-'));
  dns = await startDns(['shop.test']);
  server = await startTestServer({ env: { SVC_DNS_RESOLVER: dns.address } });
  const person = await createPerson(server.admin, 'cli-domains@example.com');
  owner = person.key;
  team = (await owner.post('/teams', { org_id: (await owner.post('/orgs', { name: 'Cli Domain Org' })).body.id, name: 'Cli Domain Team' })).body.id;
  workspace = (await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: person.id, name: 'site' })).id;
});
after(async () => {
  await server?.close();
  await dns?.stop();
  await rm(configHome, { recursive: true, force: true });
});

const svc = (...args: string[]) =>
  runSvc(args, { XDG_CONFIG_HOME: configHome, SVC_URL: server.url, SVC_TOKEN: owner.auth.token, SVC_TEAM: undefined, SVC_WORKSPACE: undefined, NO_COLOR: '1' });

test('svc domains: add with routes, the TXT record to create, Verified once it exists, list, bad input, remove', async () => {
  const empty = await svc('domains', 'list', '--team', String(team));
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /Cli Domain Team has no custom domains/);

  const added = await svc('domains', 'add', 'Shop.Test.', '--team', 'Cli Domain Team', '--route', '/=site', '--route', `/api=${workspace}:api:9000`, '--restricted');
  assert.equal(added.code, 0, added.stderr);
  const [domain] = (await owner.get(`/teams/${team}/domains`)).body.items;
  assert.equal(domain.name, 'shop.test');
  assert.equal(domain.restricted, true);
  assert.deepEqual(domain.routes, [
    { path: '/api', workspace_id: workspace, service: 'api', port: 9000, strip: false },
    { path: '/', workspace_id: workspace, strip: false },
  ]);
  assert.match(added.stdout, /Added shop\.test\./);
  assert.ok(added.stdout.includes(`_svc.shop.test  TXT  "${domain.txt_record.value}"`), added.stdout);
  assert.match(added.stdout, /Certificate: Waits for verification/);

  await dns.set({ '_svc.shop.test': [domain.txt_record.value] });
  assert.equal((await owner.post(`/teams/${team}/domains/${domain.id}/check`)).status, 202);
  const verified = await until(async () => {
    const shown = await svc('domains', 'show', 'shop.test', '--team', String(team), '--json');
    assert.equal(shown.code, 0, shown.stderr);
    const body = JSON.parse(shown.stdout);
    return body.verification.status === 'verified' ? body : undefined;
  }, 'svc domains show to tell Verified', 15_000);
  assert.equal(verified.id, domain.id);
  const shown = await svc('domains', 'show', 'shop.test', '--team', String(team));
  assert.match(shown.stdout, /Verification: Verified/);
  assert.match(shown.stdout, /Certificate: Not managed/);
  assert.match(shown.stdout, /\/api -> workspace \d+ service api port 9000/);

  const listed = await svc('domains', 'list', '--team', String(team));
  assert.match(listed.stdout, /shop\.test\s+Verified\s+Not managed\s+2\s+yes/);
  const listedJson = JSON.parse((await svc('domains', 'list', '--team', String(team), '--json')).stdout);
  assert.deepEqual(listedJson.map((d: { name: string }) => d.name), ['shop.test']);

  const notADomain = await svc('domains', 'add', 'not a domain', '--team', String(team), '--json');
  assert.equal(notADomain.code, 1);
  assert.equal(JSON.parse(notADomain.stdout).problem.type, 'urn:svc:problem:validation');
  const taken = await svc('domains', 'add', 'shop.test', '--team', String(team));
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /taken/);
  const badRoute = await svc('domains', 'add', 'other.test', '--team', String(team), '--route', 'site');
  assert.equal(badRoute.code, 2);
  assert.match(badRoute.stderr, /--route takes PATH=WS/);
  const noWorkspace = await svc('domains', 'add', 'other.test', '--team', String(team), '--route', '/=nowhere');
  assert.equal(noWorkspace.code, 1);
  assert.match(noWorkspace.stderr, /no workspace named "nowhere"/);
  const missing = await svc('domains', 'show', 'nope.test', '--team', String(team));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /has no domain nope\.test/);

  const removed = await svc('domains', 'remove', 'SHOP.test', '--team', String(team), '--json');
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(JSON.parse(removed.stdout), { name: 'shop.test', id: domain.id, deleted: true });
  assert.deepEqual((await owner.get(`/teams/${team}/domains`)).body.items, []);
});

test('svc domains route-add, route-remove, set, check (waits for the outcome), cert-upload (422 when it does not fit) and cert-remove', async () => {
  const added = await svc('domains', 'add', 'docs.test', '--team', String(team), '--json');
  assert.equal(added.code, 0, added.stderr);
  const id = JSON.parse(added.stdout).id;
  const read = async () => (await owner.get(`/teams/${team}/domains/${id}`)).body;

  const first = await svc('domains', 'route-add', 'docs.test', '/=site', '--team', String(team));
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /docs\.test: \/ -> workspace \d+ \(dev URL\)/);
  const second = await svc('domains', 'route-add', 'docs.test', '/api=site:api:9000', '--strip', '--team', String(team), '--json');
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(JSON.parse(second.stdout).routes, [
    { path: '/api', workspace_id: workspace, service: 'api', port: 9000, strip: true },
    { path: '/', workspace_id: workspace, strip: false },
  ]);
  const replaced = await svc('domains', 'route-add', 'docs.test', '/api=site:api:9001', '--team', String(team), '--json');
  assert.deepEqual(JSON.parse(replaced.stdout).routes[0], { path: '/api', workspace_id: workspace, service: 'api', port: 9001, strip: false });
  const removedRoute = await svc('domains', 'route-remove', 'docs.test', '/', '--team', String(team));
  assert.equal(removedRoute.code, 0, removedRoute.stderr);
  assert.deepEqual((await read()).routes.map((r: { path: string }) => r.path), ['/api']);
  const noRoute = await svc('domains', 'route-remove', 'docs.test', '/nope', '--team', String(team));
  assert.equal(noRoute.code, 1);
  assert.match(noRoute.stderr, /docs\.test has no route \/nope \(its routes: \/api\)/);
  const badPath = await svc('domains', 'route-add', 'docs.test', 'nopath=site', '--team', String(team), '--json');
  assert.equal(badPath.code, 1);
  assert.equal(JSON.parse(badPath.stdout).problem.type, 'urn:svc:problem:validation');

  const set = await svc('domains', 'set', 'docs.test', '--timeout', '5', '--body-limit', '1024', '--restricted', 'true', '--team', String(team));
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /Timeout 5 s, request bodies up to 1024 bytes/);
  const settings = await read();
  assert.deepEqual([settings.timeout_seconds, settings.body_limit_bytes, settings.restricted], [5, 1024, true]);
  assert.equal((await svc('domains', 'set', 'docs.test', '--restricted', 'maybe', '--team', String(team))).code, 2);
  assert.equal((await svc('domains', 'set', 'docs.test', '--team', String(team))).code, 2);

  const failed = await svc('domains', 'check', 'docs.test', '--team', String(team));
  assert.equal(failed.code, 0, failed.stderr);
  assert.match(failed.stdout, /Verification: Failed/);
  await dns.set({ '_svc.docs.test': [settings.txt_record.value] });
  const verified = await svc('domains', 'check', 'docs.test', '--team', String(team), '--json');
  assert.equal(verified.code, 0, verified.stderr);
  assert.equal(JSON.parse(verified.stdout).verification.status, 'verified');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-cert-'));
  try {
    const good = await madeCertificate(dir, ['docs.test']);
    const other = await madeCertificate(dir, ['elsewhere.test']);
    // Certificates are checked against the server's clock, which stands still in tests.
    server.clock.set(new Date(Date.now() + 60_000));
    const file = async (name: string, text: string) => {
      await writeFile(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const mismatch = await svc('domains', 'cert-upload', 'docs.test', '--cert', await file('good.pem', good.certificate), '--key', await file('other.key', other.key), '--team', String(team));
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /does not match the certificate/);
    const wrongName = await svc('domains', 'cert-upload', 'docs.test', '--cert', await file('other.pem', other.certificate), '--key', await file('other.key', other.key), '--team', String(team));
    assert.equal(wrongName.code, 1);
    assert.match(wrongName.stderr, /does not name docs\.test/);
    assert.equal((await svc('domains', 'cert-upload', 'docs.test', '--cert', path.join(dir, 'missing.pem'), '--key', path.join(dir, 'missing.key'), '--team', String(team))).code, 2);
    const uploaded = await svc('domains', 'cert-upload', 'docs.test', '--cert', path.join(dir, 'good.pem'), '--key', await file('good.key', good.key), '--team', String(team));
    assert.equal(uploaded.code, 0, uploaded.stderr);
    assert.match(uploaded.stdout, /Uploaded the certificate of docs\.test/);
    assert.match(uploaded.stdout, /Certificate: Uploaded/);
    assert.equal((await read()).certificate.state, 'uploaded');
    const removedCert = await svc('domains', 'cert-remove', 'docs.test', '--team', String(team), '--json');
    assert.equal(removedCert.code, 0, removedCert.stderr);
    assert.equal(JSON.parse(removedCert.stdout).certificate.state, 'not-managed');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
