// Custom domains through the real server (issue 20): add, list, read, change, remove with roles and bad input,
// domain.updated to those who see the team, and verification of the TXT record _svc.<domain> against dnsmasq on
// loopback: Verified, lapsed after the record is missing the lapse period, an unverified domain removed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, HOUR } from '../src/core/clock.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { EventStream } from './helpers/events.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let dns: TestDns;
let owner: ApiClient;
let viewer: ApiClient;
let outsider: ApiClient;
let team: number;
let otherTeam: number;
let workspace: number;
let otherWorkspace: number;

before(async () => {
  dns = await startDns(['shop.test', 'docs.test', 'gone.test']);
  server = await startTestServer({ env: { SVC_DNS_RESOLVER: dns.address } });
  const people = await Promise.all(['dom-owner', 'dom-viewer', 'dom-outsider'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [owner, viewer, outsider] = people.map((p) => p.key);
  team = (await owner.post('/teams', { org_id: (await owner.post('/orgs', { name: 'Domain Org' })).body.id, name: 'Domain Team' })).body.id;
  await owner.put(`/teams/${team}/members/${people[1].id}`, { role: 'viewer' });
  otherTeam = (await outsider.post('/teams', { org_id: (await outsider.post('/orgs', { name: 'Other Org' })).body.id, name: 'Other Team' })).body.id;
  const db = server.server.database.pool;
  workspace = (await stoppedWorkspace(db, server.server.config.dataDir, { teamId: team, createdBy: people[0].id, name: 'site' })).id;
  otherWorkspace = (await stoppedWorkspace(db, server.server.config.dataDir, { teamId: otherTeam, createdBy: people[2].id, name: 'theirs' })).id;
});
after(async () => {
  await server?.close();
  await dns?.stop();
});

const domains = (t = team) => `/teams/${t}/domains`;

async function domainWhen(client: ApiClient, path: string, ok: (body: any) => boolean, what: string): Promise<any> {
  return until(async () => {
    const answer = await client.get(path);
    return answer.status === 200 && ok(answer.body) ? answer.body : undefined;
  }, what, 15_000);
}

describe('the API', () => {
  test('a team admin adds a domain (201, ETag, Location): its TXT record, defaults, and domain.updated to members only', async () => {
    const seen = await EventStream.open(viewer);
    const notSeen = await EventStream.open(outsider);
    await seen.next('ready');
    await notSeen.next('ready');
    const added = await owner.post(domains(), { name: 'Shop.Test.', routes: [{ path: '/', workspace_id: workspace }] });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.body.name, 'shop.test');
    assert.equal(added.headers.get('location'), `/api/v1/teams/${team}/domains/${added.body.id}`);
    assert.equal(added.headers.get('etag'), '"v1"');
    assert.deepEqual(added.body.txt_record.name, '_svc.shop.test');
    assert.match(added.body.txt_record.value, /^svc-verify=[A-Za-z0-9_-]{24}$/);
    assert.equal(added.body.timeout_seconds, 60);
    assert.equal(added.body.body_limit_bytes, 100 * 2 ** 20);
    assert.equal(added.body.restricted, false);
    assert.equal(added.body.certificate.state, 'waits-for-verification');
    assert.deepEqual(added.body.routes, [{ path: '/', workspace_id: workspace, strip: false }]);
    const event = await seen.next('domain.updated', (d) => d.domain_id === added.body.id);
    assert.equal(event.data.team_id, team);
    // The outsider's stream gets a later event of their own team, not this one.
    const theirs = await outsider.post(domains(otherTeam), { name: 'theirs.test' });
    await notSeen.next('domain.updated', (d) => d.domain_id === theirs.body.id);
    assert.ok(!notSeen.received.some((e) => e.data?.domain_id === added.body.id));
    seen.close();
    notSeen.close();
    const listed = await viewer.get(domains());
    assert.deepEqual(listed.body.items.map((d: any) => d.name), ['shop.test']);
    assertProblem(await outsider.get(`${domains()}/${added.body.id}`), 404, 'not-found');
    assertProblem(await outsider.get(`${domains(otherTeam)}/${added.body.id}`), 404, 'not-found');
  });

  test('bad input: not a domain 422, the installation\'s own names 422, a name the team has 409, another team\'s workspace 404, roles 403', async () => {
    for (const name of ['not a domain', 'localhost', 'exa_mple.com', '-bad.test', '10.0.0.1', `${'a'.repeat(64)}.test`]) {
      const answer = await owner.post(domains(), { name });
      assertProblem(answer, 422, 'validation');
      assert.equal(answer.body.errors[0].pointer, '/name', name);
    }
    assertProblem(await owner.post(domains(), { name: 'w1.localhost' }), 422, 'validation');
    // another team's unverified name may be claimed (test/domains-claims.test.ts); this team's own name is taken
    assertProblem(await owner.post(domains(), { name: 'shop.test' }), 409, 'name-taken');
    assertProblem(await owner.post(domains(), { name: 'new.test', routes: [{ path: '/', workspace_id: otherWorkspace }] }), 404, 'not-found');
    assertProblem(await owner.post(domains(), { name: 'new.test', routes: [{ path: '/', workspace_id: 999999 }] }), 404, 'not-found');
    const twice = await owner.post(domains(), { name: 'new.test', routes: [{ path: '/a', workspace_id: workspace }, { path: '/a', workspace_id: workspace }] });
    assertProblem(twice, 422, 'validation');
    assert.equal(twice.body.errors[0].pointer, '/routes/1/path');
    const portAlone = await owner.post(domains(), { name: 'new.test', routes: [{ path: '/a', workspace_id: workspace, port: 80 }] });
    assert.equal(portAlone.body.errors[0].pointer, '/routes/0/port');
    const badPath = await owner.post(domains(), { name: 'new.test', routes: [{ path: 'docs/', workspace_id: workspace }] });
    assertProblem(badPath, 422, 'validation');
    assertProblem(await owner.post(domains(), { name: 'new.test', timeout_seconds: 0 }), 422, 'validation');
    assertProblem(await viewer.post(domains(), { name: 'new.test' }), 403, 'forbidden');
    assertProblem(await outsider.post(domains(), { name: 'new.test' }), 404, 'not-found');
    assert.equal((await owner.get(domains())).body.items.length, 1, 'nothing was added');
  });

  test('a change needs If-Match (428, 412); routes are kept longest first; a viewer may not change', async () => {
    const [domain] = (await owner.get(domains())).body.items;
    const path = `${domains()}/${domain.id}`;
    const change = { routes: [{ path: '/', workspace_id: workspace }, { path: '/api/v1', workspace_id: workspace, service: 'api', port: 9000, strip: true }], timeout_seconds: 5, restricted: true };
    assertProblem(await owner.patch(path, change), 428, 'precondition-required');
    assertProblem(await owner.patch(path, change, { headers: { 'if-match': '"v99"' } }), 412, 'precondition-failed');
    assertProblem(await viewer.patch(path, change, { headers: { 'if-match': '"v1"' } }), 403, 'forbidden');
    assertProblem(await owner.patch(path, { routes: [{ path: '/', workspace_id: otherWorkspace }] }, { headers: { 'if-match': '"v1"' } }), 404, 'not-found');
    const changed = await owner.patch(path, change, { headers: { 'if-match': '"v1"' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.headers.get('etag'), '"v2"');
    assert.deepEqual(changed.body.routes.map((r: any) => r.path), ['/api/v1', '/']);
    assert.deepEqual(changed.body.routes[0], { path: '/api/v1', workspace_id: workspace, service: 'api', port: 9000, strip: true });
    assert.equal(changed.body.timeout_seconds, 5);
    assert.equal(changed.body.restricted, true);
    assert.equal(changed.body.body_limit_bytes, 100 * 2 ** 20, 'unchanged');
  });
});

describe('verification', () => {
  test('without the record the check fails and is retried with backoff; with it the domain is Verified', async () => {
    const [domain] = (await owner.get(domains())).body.items;
    const path = `${domains()}/${domain.id}`;
    const failed = await domainWhen(owner, path, (d) => d.verification.status === 'failed', 'the first check to fail');
    assert.match(failed.verification.detail, /No TXT record _svc\.shop\.test/);
    assert.ok(failed.verification.remove_at, 'a domain never verified shows when it is removed');
    const firstRetry = Date.parse(failed.verification.next_check_at) - Date.parse(failed.verification.checked_at);
    assert.equal(firstRetry, 60_000);
    server.clock.advance(60_000);
    await server.server.domains.checker.checkDue();
    const again = (await owner.get(path)).body;
    assert.equal(Date.parse(again.verification.next_check_at) - Date.parse(again.verification.checked_at), 120_000, 'the delay doubles');
    await dns.set({ '_svc.shop.test': ['unrelated', domain.txt_record.value] });
    const checking = await owner.post(`${path}/check`);
    assert.equal(checking.status, 202, checking.text);
    const verified = await domainWhen(owner, path, (d) => d.verification.status === 'verified', 'the domain to be verified');
    assert.equal(verified.verification.remove_at, undefined);
    assert.ok(verified.verification.verified_at);
    assert.equal(verified.certificate.state, 'not-managed');
  });

  test('a verified domain whose record goes missing stays Verified, then Lapses after the lapse period; found again, Verified', async () => {
    const [domain] = (await owner.get(domains())).body.items;
    const path = `${domains()}/${domain.id}`;
    await dns.set({});
    server.clock.advance(HOUR);
    await server.server.domains.checker.checkDue();
    const missing = (await owner.get(path)).body;
    assert.equal(missing.verification.status, 'verified');
    assert.ok(missing.verification.missing_since);
    assert.equal(Date.parse(missing.verification.lapses_at) - Date.parse(missing.verification.missing_since), 7 * DAY);
    server.clock.advance(7 * DAY);
    await server.server.domains.checker.checkDue();
    const lapsed = (await owner.get(path)).body;
    assert.equal(lapsed.verification.status, 'lapsed');
    assert.match(lapsed.verification.detail, /serves nothing until a check finds it again/);
    await dns.set({ '_svc.shop.test': [domain.txt_record.value] });
    server.clock.advance(HOUR);
    await server.server.domains.checker.checkDue();
    assert.equal((await owner.get(path)).body.verification.status, 'verified');
  });

  test('a domain never verified is removed after the keep period, with domain.updated; its name is free again', async () => {
    const added = await owner.post(domains(), { name: 'gone.test' });
    assert.equal(added.status, 201, added.text);
    await domainWhen(owner, `${domains()}/${added.body.id}`, (d) => d.verification.status === 'failed', 'the first check to fail');
    const stream = await EventStream.open(viewer);
    await stream.next('ready');
    server.clock.advance(7 * DAY + 1000);
    await server.server.domains.checker.checkDue();
    await stream.next('domain.updated', (d) => d.domain_id === added.body.id);
    stream.close();
    assertProblem(await owner.get(`${domains()}/${added.body.id}`), 404, 'not-found');
    assert.equal((await owner.get(domains())).body.items.some((d: any) => d.name === 'gone.test'), false);
    assert.equal((await outsider.post(domains(otherTeam), { name: 'gone.test' })).status, 201);
  });

  test('removing needs If-Match and frees the name', async () => {
    const [domain] = (await owner.get(domains())).body.items;
    const path = `${domains()}/${domain.id}`;
    assertProblem(await owner.delete(path), 428, 'precondition-required');
    const current = await owner.get(path);
    assert.equal((await owner.delete(path, { headers: { 'if-match': current.headers.get('etag')! } })).status, 204);
    assertProblem(await owner.get(path), 404, 'not-found');
  });
});
