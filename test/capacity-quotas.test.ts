// Team quotas for CPU and memory (docs/capacity.md): a cluster admin sets them, the team reads them with what its
// awake workspaces hold (from their plans); creating or waking a workspace the quota cannot hold is refused with
// what is needed and what is left, and a request to such a workspace gets the wake blocker "no capacity right now".
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { PLANS_FILE } from './helpers/plans.ts';
import { EventStream } from './helpers/events.ts';

let scratch: string;
let server: TestServer;
let dev: ApiClient;
let team: number;
let ownerId: number;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-quotas-'));
  await writeFile(path.join(scratch, 'plans.yml'), PLANS_FILE);
  server = await startTestServer({ env: { SVC_PLANS_FILE: path.join(scratch, 'plans.yml') } });
  const owner = await createPerson(server.admin, 'quota-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Quota' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Quota' })).body.id;
  dev = owner.key;
  ownerId = owner.id;
});
after(async () => {
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A workspace row of plan `dev` (1.5 CPU, 3 GiB) in `state`, without pods: what the quota counts is its plan. */
async function workspaceIn(name: string, state: 'running' | 'sleeping' | 'stopped'): Promise<number> {
  const row = await insertWorkspace(server.server.database.pool, {
    teamId: team, name, plan: 'dev', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
    idleTimeoutMinutes: 30, state, statusDetail: state === 'running' ? 'Workspace is running' : 'Asleep', createdBy: ownerId, at: new Date(),
  });
  return row.id;
}

test('a cluster admin sets the team quotas; the team reads them with what its awake workspaces hold', async () => {
  const quota = { cpu_millis: 2000, memory_mib: 4096, storage_gib: 50 };
  assertProblem(await dev.put(`/teams/${team}/quota`, quota), 403, 'forbidden');
  const set = await server.admin.put(`/teams/${team}/quota`, quota);
  assert.equal(set.status, 200, set.text);
  await workspaceIn('awake', 'running');
  await workspaceIn('asleep', 'sleeping');
  const shown = await dev.get(`/teams/${team}/quota`);
  assert.deepEqual(shown.body, { ...quota, used: { cpu_millis: 1500, memory_mib: 3072, storage_gib: 2 }, held_by_deleted: { workspaces: 0, storage_gib: 0 } });
  assertProblem(await server.admin.put(`/teams/${team}/quota`, { ...quota, cpu_millis: -1 }), 422, 'validation');
});

test('creating a workspace the quota cannot hold is refused with what it needs and what is left', async () => {
  const refused = await dev.post('/workspaces', { team_id: team, name: 'one-more' });
  assertProblem(refused, 409, 'quota-exceeded');
  assert.equal(refused.body.detail, 'The workspace needs 1.5 CPU, 3 GiB; the team has 0.5 CPU, 1 GiB left of its quota of 2 CPU, 4 GiB.');
  assert.deepEqual(refused.body.needed, { cpu_millis: 1500, memory_mib: 3072 });
  assert.deepEqual(refused.body.left, { cpu_millis: 500, memory_mib: 1024 });
  assert.deepEqual(refused.body.held_by_deleted, { workspaces: 0, storage_gib: 0 });
});

test('waking a workspace the quota cannot hold is refused; its addresses answer "no capacity right now" with Retry-After', async () => {
  const ws = (await dev.get(`/workspaces?team=${team}`)).body.items.find((w: { name: string }) => w.name === 'asleep').id;
  const refused = await dev.post(`/workspaces/${ws}/wake`);
  assertProblem(refused, 409, 'quota-exceeded');
  assert.equal(refused.body.detail, 'The workspace needs 1.5 CPU, 3 GiB; the team has 0.5 CPU, 1 GiB left of its quota of 2 CPU, 4 GiB.');
  const answer = await devHost(ws);
  assert.equal(answer.status, 503, answer.text);
  assert.equal(answer.headers['retry-after'], '30');
  assert.match(answer.text, /No capacity right now \(retried automatically\): the workspace needs 1\.5 CPU, 3 GiB, the team has 0\.5 CPU, 1 GiB left\./);
  // with room again (the quota raised), the same request wakes it
  await server.admin.put(`/teams/${team}/quota`, { cpu_millis: 4000, memory_mib: 8192, storage_gib: 50 });
  const woken = await dev.post(`/workspaces/${ws}/wake`);
  assert.equal(woken.status, 202, woken.text);
});

/** A request to the workspace's dev URL with the developer's key, as a non-browser client. */
function devHost(ws: number): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const headers = { host: `w${ws}.localhost`, 'svc-authorization': `Bearer ${dev.auth.token}` };
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: Number(new URL(server.url).port), path: '/', headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

test('a quota change is a team.updated event for those who view the team, not for others', async () => {
  const viewer = await createPerson(server.admin, 'quota-viewer@example.com');
  const outsider = await createPerson(server.admin, 'quota-outsider@example.com');
  const added = await dev.put(`/teams/${team}/members/${viewer.id}`, { role: 'viewer' });
  assert.equal(added.status, 204, added.text);
  const ownOrg = (await outsider.key.post('/orgs', { name: 'Elsewhere' })).body.id;
  const ownTeam = (await outsider.key.post('/teams', { org_id: ownOrg, name: 'Elsewhere' })).body.id;
  const viewerEvents = await EventStream.open(viewer.session);
  const outsiderEvents = await EventStream.open(outsider.session);
  await viewerEvents.next('ready');
  await outsiderEvents.next('ready');

  const set = await server.admin.put(`/teams/${team}/quota`, { cpu_millis: 5000, memory_mib: 8192, storage_gib: 60 });
  assert.equal(set.status, 200, set.text);
  const seen = await viewerEvents.next('team.updated', (e) => e.team_id === team);
  assert.deepEqual(Object.keys(seen.data).sort(), ['at', 'team_id', 'type']);
  assert.equal((await viewer.session.get(`/teams/${team}/quota`)).body.cpu_millis, 5000);

  // Events come in commit order: once the outsider sees its own team's later change, the quota change did not come.
  const renamed = await outsider.key.patch(`/teams/${ownTeam}`, { name: 'Elsewhere Renamed' }, { headers: { 'if-match': '*' } });
  assert.equal(renamed.status, 200, renamed.text);
  await outsiderEvents.next('team.updated', (e) => e.team_id === ownTeam);
  assert.deepEqual(outsiderEvents.received.filter((e) => e.event === 'team.updated').map((e) => e.data.team_id), [ownTeam]);
  viewerEvents.close();
  outsiderEvents.close();
});
