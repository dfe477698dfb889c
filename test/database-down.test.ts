// PostgreSQL down is a dependency down, not a fault (issue 33, item 8): 503 unavailable with Retry-After on reads,
// authentication (a cached key and a new one) and changes, then normal answers once it is back. The test runs a
// PostgreSQL of its own (the shared one on :5432 serves other tests) and stops it under the running server.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freeLoopbackPort } from '../src/core/loopback.ts';
import { randomToken } from '../src/core/secrets.ts';
import { startCluster, type ClusterOptions, type RunningCluster } from '../src/store/postgres-cluster.ts';
import { assertProblem, createPerson, type Answer, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';

let clusterDir: string;
let options: ClusterOptions;
let cluster: RunningCluster | undefined;
let server: TestServer;

before(async () => {
  clusterDir = await mkdtemp(path.join(os.tmpdir(), 'svc-pg-down-'));
  await chmod(clusterDir, 0o711); // as root, PostgreSQL runs as the user postgres, which must enter it
  const password = randomToken(16);
  const port = await freeLoopbackPort();
  options = { dataDir: clusterDir, clusterDir: path.join(clusterDir, 'postgres'), user: 'svc', password, port, flags: ['-c', 'listen_addresses=127.0.0.1'], log: () => undefined };
  cluster = await startCluster(options);
  // The test server makes its database on the server of DATABASE_URL: this file's own PostgreSQL.
  process.env.DATABASE_URL = `postgres://svc:${password}@127.0.0.1:${port}/postgres`;
  server = await startTestServer();
});
after(async () => {
  await server?.close();
  await cluster?.stop();
  await rm(clusterDir, { recursive: true, force: true });
});

function assertUnavailable(answer: Answer): void {
  assertProblem(answer, 503, 'unavailable');
  assert.match(answer.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/, 'Retry-After in seconds');
  assert.equal(answer.body.detail, 'The database is not answering now; try again in a few seconds.');
  assert.equal(answer.body.incident, undefined, 'not a fault of svc: no incident');
}

test('while PostgreSQL is stopped the API answers 503 unavailable with Retry-After; once it is back, normal answers and events', async () => {
  const person = await createPerson(server.admin, 'down@example.com');
  const cached: ApiClient = person.key;
  assert.equal((await cached.get('/me')).status, 200);
  const fresh = await person.session.mintKey('never used before the outage');
  const org = (await cached.post('/orgs', { name: 'Down' })).body.id;
  const team = await cached.post('/teams', { org_id: org, name: 'Down' });
  assert.equal(team.status, 201, team.text);
  const rename = async (name: string) => {
    const etag = (await cached.get(`/teams/${team.body.id}`)).headers.get('etag');
    return cached.patch(`/teams/${team.body.id}`, { name }, { headers: { 'if-match': etag ?? '"?"' } });
  };
  const etag = (await cached.get(`/teams/${team.body.id}`)).headers.get('etag')!;

  await cluster!.stop();
  cluster = undefined;
  assertUnavailable(await cached.get('/workspaces'));
  assertUnavailable(await cached.get('/me'));
  assertUnavailable(await fresh.get('/me'));
  assertUnavailable(await cached.patch(`/teams/${team.body.id}`, { name: 'Renamed while down' }, { headers: { 'if-match': etag } }));
  assertUnavailable(await server.adminSession.get('/me'));

  cluster = await startCluster(options);
  // The pool makes new connections as they are asked for: the first request after the restart is answered.
  const list = await until(async () => {
    const answer = await cached.get('/workspaces');
    return answer.status === 503 ? undefined : answer;
  }, 'the workspaces to be listed again');
  assert.equal(list.status, 200, list.text);
  assert.equal((await cached.get('/me')).body.email, 'down@example.com');
  assert.equal((await fresh.get('/me')).body.email, 'down@example.com');
  // The LISTEN connection is back too: an event of a change made now reaches a new event stream.
  const events = await EventStream.open(cached);
  try {
    // `ready` goes out once the stream is subscribed, the notification connection listening again.
    await events.next('ready', undefined, 30_000);
    const renamed = await rename('Renamed after the outage');
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'Renamed after the outage');
    const event = await events.next('team.updated', (data) => data.team_id === team.body.id, 30_000);
    assert.equal(event.data.team_id, team.body.id);
  } finally {
    events.close();
  }
});
