// Claims of custom domain names (issue 33, item 8) through the real server, with dnsmasq on loopback answering the
// TXT records: a name another team holds unverified may be added by a second team with its own token, and the team
// whose token the record holds takes it (the other entry removed, domain.updated to both teams). A name that was
// verified is never taken: adding it answers 409, and its team keeps it whatever else the record holds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { EventStream } from './helpers/events.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let server: TestServer;
let dns: TestDns;
let ownerA: ApiClient;
let ownerB: ApiClient;
let teamA: number;
let teamB: number;

before(async () => {
  dns = await startDns(['claim.test', 'kept.test']);
  server = await startTestServer({ env: { SVC_DNS_RESOLVER: dns.address } });
  ownerA = (await createPerson(server.admin, 'claims-a@example.com')).key;
  ownerB = (await createPerson(server.admin, 'claims-b@example.com')).key;
  teamA = (await ownerA.post('/teams', { org_id: (await ownerA.post('/orgs', { name: 'Claims A' })).body.id, name: 'A' })).body.id;
  teamB = (await ownerB.post('/teams', { org_id: (await ownerB.post('/orgs', { name: 'Claims B' })).body.id, name: 'B' })).body.id;
});
after(async () => {
  await server?.close();
  await dns?.stop();
});

const domains = (team: number) => `/teams/${team}/domains`;

async function domainWhen(client: ApiClient, path: string, ok: (body: any) => boolean, what: string): Promise<any> {
  return until(async () => {
    const answer = await client.get(path);
    return answer.status === 200 && ok(answer.body) ? answer.body : undefined;
  }, what, 15_000);
}

test('team B takes a name team A holds unverified by publishing its own TXT token; A\'s entry is removed with domain.updated to both teams', async () => {
  const heldByA = await ownerA.post(domains(teamA), { name: 'claim.test' });
  assert.equal(heldByA.status, 201, heldByA.text);
  const pathA = `${domains(teamA)}/${heldByA.body.id}`;
  await domainWhen(ownerA, pathA, (d) => d.verification.status === 'failed', "A's first check to fail");

  const claimed = await ownerB.post(domains(teamB), { name: 'Claim.Test' });
  assert.equal(claimed.status, 201, claimed.text);
  assert.equal(claimed.body.name, 'claim.test');
  assert.notEqual(claimed.body.txt_record.value, heldByA.body.txt_record.value, 'each team proves the name with its own token');
  assertProblem(await ownerB.post(domains(teamB), { name: 'claim.test' }), 409, 'name-taken');
  const pathB = `${domains(teamB)}/${claimed.body.id}`;
  await domainWhen(ownerB, pathB, (d) => d.verification.status === 'failed', "B's first check to fail");

  const seenByA = await EventStream.open(ownerA);
  const seenByB = await EventStream.open(ownerB);
  await seenByA.next('ready');
  await seenByB.next('ready');
  await dns.set({ '_svc.claim.test': [claimed.body.txt_record.value] });
  assert.equal((await ownerB.post(`${pathB}/check`)).status, 202);
  const verified = await domainWhen(ownerB, pathB, (d) => d.verification.status === 'verified', "B's claim to be verified");
  assert.ok(verified.verification.verified_at);

  const removed = await seenByA.next('domain.updated', (d) => d.domain_id === heldByA.body.id);
  assert.equal(removed.data.team_id, teamA);
  await seenByB.next('domain.updated', (d) => d.domain_id === claimed.body.id && d.team_id === teamB);
  assert.ok(!seenByB.received.some((e) => e.data?.domain_id === heldByA.body.id), "A's event is not B's to see");
  seenByA.close();
  seenByB.close();
  assertProblem(await ownerA.get(pathA), 404, 'not-found');
  assert.deepEqual((await ownerA.get(domains(teamA))).body.items, []);
  // now verified, the name cannot be taken back
  assertProblem(await ownerA.post(domains(teamA), { name: 'claim.test' }), 409, 'name-taken');
});

test('a verified name is never taken: adding it answers 409, and its team keeps it while the record holds another token too', async () => {
  const kept = await ownerA.post(domains(teamA), { name: 'kept.test' });
  assert.equal(kept.status, 201, kept.text);
  const claim = await ownerB.post(domains(teamB), { name: 'kept.test' });
  assert.equal(claim.status, 201, claim.text);
  const pathA = `${domains(teamA)}/${kept.body.id}`;
  await dns.set({ '_svc.kept.test': [kept.body.txt_record.value] });
  await ownerA.post(`${pathA}/check`);
  const verified = await domainWhen(ownerA, pathA, (d) => d.verification.status === 'verified', "A's domain to be verified");
  // A's proof came first: B's claim is gone
  assertProblem(await ownerB.get(`${domains(teamB)}/${claim.body.id}`), 404, 'not-found');

  assertProblem(await ownerB.post(domains(teamB), { name: 'kept.test' }), 409, 'name-taken');
  // the record holds B's old token as well: nothing moves, A's domain stays verified after its next check
  await dns.set({ '_svc.kept.test': [kept.body.txt_record.value, claim.body.txt_record.value] });
  server.clock.advance(1000); // the next check's time differs from the first one's
  await ownerA.post(`${pathA}/check`);
  const checked = await domainWhen(ownerA, pathA, (d) => d.verification.checked_at !== verified.verification.checked_at, "A's next check");
  assert.equal(checked.verification.status, 'verified');
  assert.equal(checked.name, 'kept.test');
  assertProblem(await ownerB.post(domains(teamB), { name: 'kept.test' }), 409, 'name-taken');
  assert.deepEqual((await ownerB.get(domains(teamB))).body.items.map((d: any) => d.name), ['claim.test']);
});
