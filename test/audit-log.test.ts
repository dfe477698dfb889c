import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let person: { session: ApiClient; key: ApiClient; id: number };
let teamId: number;
let started: Date;
before(async () => {
  server = await startTestServer();
  started = server.clock.now();
  server.clock.advance(1000);
  person = await createPerson(server.admin, 'audited@example.com');
  const org = await person.key.post('/orgs', { name: 'Audited' });
  server.clock.advance(1000);
  teamId = (await person.key.post('/teams', { org_id: org.body.id, name: 'Audited team' })).body.id;
  await person.key.post('/orgs', { name: 'Audited' }); // refused: name taken, still recorded
});
after(async () => server?.close());

describe('the audit log (4.3)', () => {
  test('records every state-changing request with actor, action, target, team, time and outcome', async () => {
    const answer = await server.admin.get(`/audit-log?actor=${person.id}`);
    assert.equal(answer.status, 200, answer.text);
    const actions = answer.body.items.map((e: { action: string; outcome: number }) => `${e.action} ${e.outcome}`);
    assert.deepEqual(actions, ['org.create 409', 'team.create 201', 'org.create 201', 'api_key.create 201', 'session.create 201']);
    const team = answer.body.items[1];
    assert.equal(team.target, `/teams/${teamId}`);
    assert.equal(team.team_id, teamId);
    assert.equal(team.actor_id, person.id);
    assert.equal(team.method, 'POST');
    assert.ok(!Number.isNaN(Date.parse(team.at)));
  });

  test('sign-ins are recorded too, the failed ones without an actor', async () => {
    await server.anonymous.post('/sessions', { email: 'nobody@example.com', password: 'wrong password' });
    const answer = await server.admin.get('/audit-log?action=session.create');
    assert.ok(answer.body.items.some((e: { outcome: number; actor_id?: number }) => e.outcome === 401 && e.actor_id === undefined));
    assert.ok(answer.body.items.some((e: { outcome: number; actor_id?: number }) => e.outcome === 201 && e.actor_id === person.id));
  });

  test('newest first by time then id; filters combine; the cursor pages', async () => {
    const byTeam = await server.admin.get(`/audit-log?team=${teamId}&action=team.create`);
    assert.equal(byTeam.body.items.length, 1);
    const since = new Date(started.getTime() + 1500).toISOString();
    const recent = await server.admin.get(`/audit-log?actor=${person.id}&since=${since}`);
    assert.deepEqual(recent.body.items.map((e: { action: string }) => e.action), ['org.create', 'team.create']);
    const until = new Date(started.getTime() + 1500).toISOString();
    const early = await server.admin.get(`/audit-log?actor=${person.id}&until=${until}`);
    assert.deepEqual(early.body.items.map((e: { action: string }) => e.action), ['org.create', 'api_key.create', 'session.create']);
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await server.admin.get(`/audit-log?actor=${person.id}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.body.items.map((e: { id: number }) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    const whole = (await server.admin.get(`/audit-log?actor=${person.id}`)).body.items.map((e: { id: number }) => e.id);
    assert.deepEqual(seen, whole);
  });

  test('malformed action, foreign cursor, actor or team below 1: 422', async () => {
    for (const query of ['action=Org.Create', 'action=org', 'action=org..create', 'actor=0', 'team=0', 'actor=-5', 'team=abc']) {
      assertProblem(await server.admin.get(`/audit-log?${query}`), 422, 'validation');
    }
    await server.adminSession.post('/me/api-keys', { name: 'second' });
    const keys = await server.adminSession.get('/me/api-keys?limit=1');
    assert.ok(keys.body.next_cursor);
    assertProblem(await server.admin.get(`/audit-log?cursor=${encodeURIComponent(keys.body.next_cursor)}`), 422, 'invalid-cursor');
    assertProblem(await server.admin.get('/audit-log?cursor=forged'), 422, 'invalid-cursor');
  });

  test('a malformed time: 400', async () => {
    for (const query of ['since=yesterday', 'until=2026-13-01T00:00:00Z', 'since=2026-01-01', 'until=1700000000']) {
      assertProblem(await server.admin.get(`/audit-log?${query}`), 400, 'bad-request');
    }
  });

  test('only administrators read it', async () => {
    assertProblem(await person.key.get('/audit-log'), 403, 'forbidden');
    assertProblem(await server.anonymous.get('/audit-log'), 401, 'unauthenticated');
  });
});
