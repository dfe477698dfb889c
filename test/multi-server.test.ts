// Two `svc server` processes on one database and one data directory (docs/topology.md): events reach the clients
// of both, a key deleted through one is refused by the other at once, the chores run once per interval for the
// installation, and the operation of a server killed with SIGKILL is finished by the other when its lease ends.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { heldGitEgressAllow, startHeldGitServer, type HeldGitServer } from './helpers/held-git.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { startInstallation, type Installation, type ServerProcess } from './helpers/server-processes.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';
import { operationFinished, until } from './helpers/wait.ts';

const LEASE_SECONDS = 3;
let installation: Installation;
let a: ServerProcess;
let b: ServerProcess;
let team: number;
const workspaces: number[] = [];
let git: HeldGitServer | undefined;

before(async () => {
  installation = await startInstallation(2, { env: { SVC_OPERATION_LEASE: String(LEASE_SECONDS), SVC_CHORE_INTERVAL: '1', ...(await heldGitEgressAllow()) } });
  [a, b] = installation.servers;
  const admin = installation.admin(a);
  const org = (await admin.post('/orgs', { name: 'multi' })).body.id;
  team = (await admin.post('/teams', { org_id: org, name: 'multi' })).body.id;
});

after(async () => {
  await git?.close();
  if (installation) {
    await removeWorkspaces(createLocalDriver({ dataDir: installation.dataDir }), workspaces);
    await installation.close();
  }
});

test('the two servers have distinct ids on one data directory', () => {
  assert.notEqual(a.serverId, b.serverId);
  assert.ok(b.serverId.startsWith(`${a.serverId}.`), `${b.serverId} is the data directory's id with its slot`);
});

test('a workspace created through one server is seen live through the other', async () => {
  const onB = await EventStream.open(installation.admin(b));
  const onA = await EventStream.open(installation.admin(a));
  try {
    const created = await installation.admin(a).post('/workspaces', { team_id: team, name: 'seen-on-b' });
    assert.equal(created.status, 202, created.text);
    const id = Number(created.body.target.split('/')[2]);
    workspaces.push(id);
    for (const stream of [onB, onA]) {
      const event = await stream.next('workspace.created', (data) => data.workspace_id === id, 10_000);
      assert.equal(event.data.workspace.name, 'seen-on-b');
    }
    // whichever server ran it, both streams see the operation end
    const operationId = created.body.id;
    for (const stream of [onB, onA]) await stream.next('operation.updated', (data) => data.operation.id === operationId && data.operation.state === 'succeeded', 120_000);
    assert.equal((await installation.admin(b).get(`/workspaces/${id}`)).body.state, 'running');
  } finally {
    onA.close();
    onB.close();
  }
});

test('a key deleted through one server is refused by the other at once, by the API and by the router', async () => {
  const id = workspaces[0];
  const minted = (await new ApiClient(a.url, { cookie: installation.adminCookie }).post('/me/api-keys', { name: 'short-lived' })).body;
  const key = minted.token as string;
  const bogus = 'no-such-key';
  const port = Number(new URL(b.url).port);
  const routed = (token: string) => rawRequest(port, `GET / HTTP/1.1\r\nHost: w${id}.localhost\r\nSvc-Authorization: Bearer ${token}\r\nConnection: close`);
  const onB = new ApiClient(b.url, { token: key });
  assert.equal((await onB.get('/me')).status, 200); // now in B's key cache
  const refused = await routed(bogus);
  const admitted = await routed(key);
  assert.notEqual(admitted.status, refused.status, `the key is admitted on B's router first: ${admitted.status} ${admitted.body.slice(0, 200)}`);
  const deleted = await new ApiClient(a.url, { token: key }).delete(`/me/api-keys/${minted.id}`);
  assert.equal(deleted.status, 204, deleted.text);
  // no waiting: the DELETE answered once B had forgotten the key
  assert.equal((await onB.get('/me')).status, 401);
  const after = await routed(key);
  assert.equal(after.status, refused.status, after.body.slice(0, 200));
  const unconfirmed = a.logLines().filter((line) => /did not confirm/.test(line.msg ?? ''));
  assert.deepEqual(unconfirmed, [], 'B confirmed the deletion; A did not answer on a timeout');
});

test('each chore runs once per interval for the installation, whichever server runs it', async () => {
  const runsOf = async () => Number((await installation.query<{ runs: string }>("SELECT runs FROM chore_runs WHERE name = 'workspaces'"))[0]?.runs ?? 0);
  const seen = await until(async () => ((await runsOf()) >= 4 ? runsOf() : undefined), 'four runs of the chores', 30_000);
  const loggedRuns = () =>
    installation.servers.flatMap((server) =>
      server.logLines().flatMap((line) => {
        const match = /^chore workspaces: run (\d+) by (\S+)$/.exec(line.msg ?? '');
        return match ? [{ run: Number(match[1]), by: match[2], server: server.serverId }] : [];
      }),
    );
  // a run is counted in the table before its server's log line is read here: wait for the lines of the runs seen
  const logged = await until(async () => {
    const lines = loggedRuns();
    return Array.from({ length: seen }, (_, i) => i + 1).every((n) => lines.some((l) => l.run === n)) ? lines : undefined;
  }, 'the log line of every run seen', 30_000).catch(() => loggedRuns());
  const numbers = logged.map((l) => l.run).filter((n) => n <= seen).sort((x, y) => x - y);
  assert.deepEqual(numbers, Array.from({ length: seen }, (_, i) => i + 1), `every run once, by one server: ${JSON.stringify(logged)}`);
  for (const line of logged) assert.equal(line.by, line.server);
});

test('the server running a clone is killed; the other finishes the operation once the lease has ended', async () => {
  git = await startHeldGitServer({ 'README.md': 'cloned after a server died\n' });
  const admin = installation.admin(b);
  const created = await admin.post('/workspaces', { team_id: team, name: 'survivor', git: { provider: 'git', repo: git.url } });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  workspaces.push(id);
  await until(async () => (git!.held() > 0 ? true : undefined), 'the clone to connect');
  const [operation] = await installation.query<{ lease_owner: string; attempts: number }>('SELECT lease_owner, attempts FROM operations WHERE id = $1', [created.body.id]);
  assert.equal(operation.attempts, 1);
  const runner = installation.servers.find((server) => operation.lease_owner.startsWith(`${server.serverId}/`))!;
  const survivor = runner === a ? b : a;
  runner.process.child.kill('SIGKILL');
  await runner.process.exited;
  git.open();
  const finished = await operationFinished(installation.admin(survivor), created.body.id);
  assert.equal(finished.state, 'succeeded', JSON.stringify(finished));
  const [row] = await installation.query<{ attempts: number }>('SELECT attempts FROM operations WHERE id = $1', [created.body.id]);
  assert.equal(row.attempts, 2, 'run again once, by the survivor');
  const files = await installation.admin(survivor).get(`/workspaces/${id}`);
  assert.equal(files.body.state, 'running');
});
