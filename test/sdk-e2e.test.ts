// The SDK (sdk/) against a live server: typed calls with an API key, problems told apart by type, a workspace
// created and its operation followed (on the event stream, and by polling), the event stream read through a cut
// connection (reconnect, `ready` again).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createSvc, isProblem, ok, type Svc, type SvcEvent, SvcProblem, type Operation } from '../sdk/src/index.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

let server: TestServer;
let svc: Svc;
let team: number;
const workspaces: number[] = [];

before(async () => {
  server = await startTestServer();
  svc = createSvc({ baseUrl: server.url, token: server.admin.auth.token, headers: { 'user-agent': 'sdk-e2e' } });
  const org = ok(await svc.api.POST('/api/v1/orgs', { body: { name: 'SDK Org' } }));
  team = ok(await svc.api.POST('/api/v1/teams', { body: { org_id: org.id, name: 'SDK Team' } })).id;
});

after(async () => {
  if (!server) return;
  await removeWorkspaces(server.server.driver, workspaces);
  await server.close();
});

/** Reads events until `match`, returning those read. */
async function readUntil(events: AsyncGenerator<SvcEvent>, match: (event: SvcEvent) => boolean): Promise<SvcEvent[]> {
  const seen: SvcEvent[] = [];
  for (;;) {
    const next = await events.next();
    assert.ok(!next.done, `the stream ended after ${seen.map((e) => e.type).join(', ')}`);
    seen.push(next.value);
    if (match(next.value)) return seen;
  }
}

test('typed calls answer the typed bodies; a refusal is thrown as the problem of its type', async () => {
  const version = ok(await svc.api.GET('/api/v1/version'));
  assert.match(version.version, /^\d+\.\d+\.\d+/);
  const me = ok(await svc.api.GET('/api/v1/me'));
  assert.equal(me.authenticated_by, 'key');

  const refused = await svc.api.POST('/api/v1/orgs', { body: { name: ' padded ' } }).then(ok).catch((error: unknown) => error);
  assert.ok(isProblem(refused, 'validation'), String(refused));
  assert.equal(refused.status, 422);
  assert.ok(refused.fieldError('/name'));

  const missing = await svc.api.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: 999_999 } } }).then(ok).catch((error: unknown) => error);
  assert.ok(missing instanceof SvcProblem && missing.is('not-found') && !missing.is('validation'));

  const unreachable = await createSvc({ baseUrl: 'http://127.0.0.1:1' }).api.GET('/api/v1/version').then(ok).catch((error: unknown) => error);
  assert.ok(unreachable instanceof SvcProblem && unreachable.status === 0, String(unreachable));
});

test('a workspace is created and its operation followed on the event stream, which carries its events', async () => {
  const stop = new AbortController();
  const events = svc.events({ team, signal: stop.signal });
  try {
    assert.equal((await events.next()).value?.type, 'ready');
    const started = ok(await svc.api.POST('/api/v1/workspaces', { body: { team_id: team, name: 'sdk-ws' } }));
    const id = Number(started.target!.split('/')[2]);
    workspaces.push(id);
    const updates: Operation['state'][] = [];
    const finished = await svc.followOperation(started, { onUpdate: (operation) => updates.push(operation.state) });
    assert.equal(finished.state, 'succeeded', JSON.stringify(finished));
    assert.equal(finished.id, started.id);
    assert.equal(updates.at(-1), 'succeeded');

    const seen = await readUntil(events, (e) => e.type === 'operation.updated' && e.operation?.id === started.id && e.operation.state === 'succeeded');
    const created = seen.find((e) => e.type === 'workspace.created');
    assert.equal(created?.workspace?.id, id);
    assert.equal(created?.workspace_id, id);

    const read = await svc.api.GET('/api/v1/workspaces/{ws}', { params: { path: { ws: id } } });
    assert.equal(ok(read).state, 'running');

    // Polling only, from the id: an operation that has ended answers at once.
    assert.equal((await svc.followOperation(started.id, { events: false })).state, 'succeeded');

    const etag = read.response.headers.get('etag')!;
    const deleting = ok(await svc.api.DELETE('/api/v1/workspaces/{ws}', { params: { path: { ws: id } }, headers: { 'if-match': etag } }));
    assert.equal((await svc.followOperation(deleting, { events: false })).state, 'succeeded');
    const deleted = await readUntil(events, (e) => e.type === 'workspace.deleted' && e.workspace_id === id);
    assert.equal(deleted.at(-1)?.workspace?.id, id);
  } finally {
    stop.abort();
  }
});

test('the event stream opens again after its connection is cut, and says ready again', async () => {
  const cuts: AbortController[] = [];
  const reconnects: number[] = [];
  const cutting = createSvc({
    ...svc.options,
    fetch: (request) => {
      if (new URL(request.url).pathname !== '/api/v1/events') return fetch(request);
      const cut = new AbortController();
      cuts.push(cut);
      return fetch(new Request(request, { signal: AbortSignal.any([request.signal, cut.signal]) }));
    },
  });
  const stop = new AbortController();
  const events = cutting.events({ team, signal: stop.signal, retryDelay: () => 10, onReconnect: ({ failures }) => reconnects.push(failures) });
  try {
    assert.equal((await events.next()).value?.type, 'ready');
    cuts[0].abort();
    assert.equal((await events.next()).value?.type, 'ready');
    assert.deepEqual(reconnects, [1]);
    assert.equal(cuts.length, 2);
    // Live again: a change of the team arrives.
    const current = await svc.api.GET('/api/v1/teams/{team}', { params: { path: { team } } });
    ok(await svc.api.PATCH('/api/v1/teams/{team}', {
      params: { path: { team } },
      body: { name: 'SDK Team renamed' },
      headers: { 'if-match': current.response.headers.get('etag')! },
    }));
    const seen = await readUntil(events, (e) => e.type === 'team.updated');
    assert.equal(seen.at(-1)?.team_id, team);
  } finally {
    stop.abort();
  }
  assert.equal((await events.next()).done, true, 'aborting ends the iteration');
});

test('a refusal of the stream that no retry changes is thrown, not retried', async () => {
  const anonymous = createSvc({ baseUrl: server.url });
  const refused = await anonymous.events().next().then(() => undefined, (error: unknown) => error);
  assert.ok(isProblem(refused, 'unauthenticated'), String(refused));
});
