// The workspace lifecycle through the HTTP API, on the local runtime driver (real bubblewrap pods, real git).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { EventStream } from './helpers/events.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let teamId: number;
let repository: BareRepository;
const created: number[] = [];

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  const owner = await createPerson(server.admin, 'ws-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Workspaces Org' })).body.id;
  teamId = (await owner.key.post('/teams', { org_id: org, name: 'Builders' })).body.id;
  const developer = await createPerson(server.admin, 'ws-dev@example.com');
  const watcher = await createPerson(server.admin, 'ws-viewer@example.com');
  await owner.key.put(`/teams/${teamId}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${teamId}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  repository = await createBareRepository({ 'README.md': '# hello\n', 'src/app.js': 'console.log(1)\n' }, { feature: { 'FEATURE.md': 'feature\n' } });
});
after(async () => {
  await removeWorkspaces(server.server.driver, created);
  await server?.close();
  await repository?.remove();
});

async function finished(answer: { status: number; body: any; text: string }): Promise<any> {
  assert.equal(answer.status, 202, answer.text);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const operation = await dev.get(`/operations/${answer.body.id}`);
    if (operation.body.state === 'succeeded' || operation.body.state === 'failed') return operation.body;
    if (Date.now() > deadline) throw new Error(`operation still ${operation.body.state}: ${operation.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function createWorkspace(name: string, extra: object = {}): Promise<{ id: number; operation: any }> {
  const answer = await dev.post('/workspaces', { team_id: teamId, name, ...extra });
  assert.equal(answer.status, 202, answer.text);
  assert.equal(answer.body.kind, 'workspace.create');
  assert.equal(answer.headers.get('location'), `/api/v1/operations/${answer.body.id}`);
  const id = Number(answer.body.target.split('/')[2]);
  created.push(id);
  return { id, operation: await finished(answer) };
}

const volume = (id: number, ...parts: string[]) => path.join(server.server.config.dataDir, 'volumes', String(id), 'app', ...parts);

describe('creating', () => {
  test('from a git repository: Cloning, then Running, with the files in /data/app owned by the workspace UID', async () => {
    const { id, operation } = await createWorkspace('from-git', { git: { provider: 'git', repo: repository.url } });
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
    const ws = await dev.get(`/workspaces/${id}`);
    assert.equal(ws.status, 200);
    assert.equal(ws.body.state, 'running');
    assert.equal(ws.body.status_detail, 'Workspace is running');
    assert.deepEqual(ws.body.git, { provider: 'git', repo: repository.url, cloned: true });
    assert.match(ws.body.urls.ide, new RegExp(`^http://ide-w${id}\\.localhost:\\d+/$`));
    assert.match(ws.body.urls.dev, new RegExp(`^http://w${id}\\.localhost:\\d+/$`));
    assert.ok(ws.body.permissions.includes('workspace.use'));
    assert.match(ws.headers.get('etag') ?? '', /^(W\/)?"v\d+"$/);
    assert.equal(await readFile(volume(id, 'README.md'), 'utf8'), '# hello\n');
    assert.ok((await stat(volume(id, 'src', 'app.js'))).gid === 0);
  });

  test('a ref picks the branch', async () => {
    const { id } = await createWorkspace('feature-branch', { git: { provider: 'git', repo: repository.url, ref: 'feature' } });
    assert.equal(await readFile(volume(id, 'FEATURE.md'), 'utf8'), 'feature\n');
  });

  test('empty: Preparing the volume, then Running', async () => {
    const { id, operation } = await createWorkspace('empty-one');
    assert.equal(operation.state, 'succeeded');
    assert.equal((await dev.get(`/workspaces/${id}`)).body.state, 'running');
  });

  test('a clone failure gives the Error state with its reason, and fails the operation', async () => {
    const { id, operation } = await createWorkspace('broken', { git: { provider: 'git', repo: `${repository.url}-missing` } });
    assert.equal(operation.state, 'failed');
    assert.equal(operation.error.type, 'urn:svc:problem:workspace-failed');
    const ws = (await dev.get(`/workspaces/${id}`)).body;
    assert.equal(ws.state, 'error');
    assert.match(ws.status_detail, /^Cloning the repository failed: .+/);
    const badRef = await createWorkspace('bad-ref', { git: { provider: 'git', repo: repository.url, ref: 'nope' } });
    assert.equal(badRef.operation.state, 'failed');
    assert.match((await dev.get(`/workspaces/${badRef.id}`)).body.status_detail, /^Cloning the repository failed: .*nope/);
  });

  test('a remote HEAD naming a missing branch: its only branch is checked out', async () => {
    const dangling = await createBareRepository({ 'README.md': '# only main\n' }, {}, { head: 'master' });
    try {
      const { id, operation } = await createWorkspace('dangling-head', { git: { provider: 'git', repo: dangling.url } });
      assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
      assert.equal((await dev.get(`/workspaces/${id}`)).body.state, 'running');
      assert.equal(await readFile(volume(id, 'README.md'), 'utf8'), '# only main\n');
      assert.equal((await readFile(volume(id, '.git', 'HEAD'), 'utf8')).trim(), 'ref: refs/heads/main');
    } finally {
      await dangling.remove();
    }
  });

  test('a remote HEAD naming a missing branch among several: the create fails naming the branches, the volume stays empty', async () => {
    const dangling = await createBareRepository({ 'README.md': '# main\n' }, { feature: { 'FEATURE.md': 'feature\n' } }, { head: 'master' });
    try {
      const { id, operation } = await createWorkspace('dangling-two', { git: { provider: 'git', repo: dangling.url } });
      assert.equal(operation.state, 'failed', JSON.stringify(operation));
      assert.equal(operation.error.type, 'urn:svc:problem:workspace-failed');
      const ws = (await dev.get(`/workspaces/${id}`)).body;
      assert.equal(ws.state, 'error');
      assert.equal(
        ws.status_detail,
        "Cloning the repository failed: the repository's HEAD names the branch master, which does not exist; give one of its branches as the ref: feature, main",
      );
      assert.equal(operation.error.detail, ws.status_detail);
      assert.deepEqual(await readdir(volume(id)), []);
    } finally {
      await dangling.remove();
    }
  });

  test('a local repository with a work tree (owned by another user than the workspace) is cloned', async () => {
    const { id, operation } = await createWorkspace('non-bare', { git: { provider: 'git', repo: repository.workPath } });
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
    assert.equal(await readFile(volume(id, 'src', 'app.js'), 'utf8'), 'console.log(1)\n');
  });

  test('bad input: names, unknown team, local repositories refused unless allowed, viewers cannot create', async () => {
    assertProblem(await dev.post('/workspaces', { team_id: teamId, name: 'Not A Label' }), 422, 'validation');
    assertProblem(await dev.post('/workspaces', { team_id: 999999, name: 'x' }), 404, 'not-found');
    assertProblem(await viewer.post('/workspaces', { team_id: teamId, name: 'viewer-ws' }), 403, 'forbidden');
    const bad = await dev.post('/workspaces', { team_id: teamId, name: 'bad-url', git: { provider: 'git', repo: 'not a url' } });
    assertProblem(bad, 422, 'repository-not-allowed');
    assert.equal(bad.body.errors[0].pointer, '/git/repo');
    assertProblem(await dev.post('/workspaces', { team_id: teamId, name: 'empty-one' }), 409, 'name-taken');
  });

  test('the team quota: the problem says what is needed and what is left', async () => {
    const answer = await dev.post('/workspaces', { team_id: teamId, name: 'huge', storage_gib: 1000 });
    assertProblem(answer, 409, 'quota-exceeded');
    assert.match(answer.body.detail, /needs 1000 GiB .* GiB left of 200 GiB/);
    assert.deepEqual(Object.keys(answer.body.held_by_deleted).sort(), ['storage_gib', 'workspaces']);
  });

  test('two concurrent creates with one Idempotency-Key make one workspace', async () => {
    const options = { headers: { 'idempotency-key': `create-${Date.now()}` } };
    const body = { team_id: teamId, name: 'idempotent-ws' };
    const answers = await Promise.all([dev.post('/workspaces', body, options), dev.post('/workspaces', body, options)]);
    // The second either finds the first still running (409) or, if it came late, replays its answer.
    const first = answers.find((a) => a.status === 202 && a.headers.get('idempotent-replayed') === null)!;
    const second = answers.find((a) => a !== first)!;
    assert.ok(second.status === 409 || second.headers.get('idempotent-replayed') === 'true', second.text);
    created.push(Number(first.body.target.split('/')[2]));
    await finished(first);
    const replay = await dev.post('/workspaces', body, options);
    assert.equal(replay.status, 202);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.id, first.body.id);
    const list = await dev.get(`/workspaces?team=${teamId}&limit=200`);
    assert.equal(list.status, 200, list.text);
    assert.equal(list.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(list.body.items.filter((w: { name: string }) => w.name === 'idempotent-ws').length, 1);
  });
});

describe('events', () => {
  test('a team member follows a workspace from created to running; a member of no team sees nothing of it', async () => {
    const stream = await EventStream.open(dev);
    const outsider = await createPerson(server.admin, 'ws-stranger@example.com');
    const stranger = await EventStream.open(outsider.key);
    try {
      await stream.until('ready');
      await stranger.until('ready');
      const { id } = await createWorkspace('watched');
      const created = await stream.until('workspace.created', (e) => e.workspace_id === id);
      assert.equal(created.at(-1)!.data.workspace.name, 'watched');
      await stream.until('operation.updated', (e) => e.operation.kind === 'workspace.create' && e.operation.state === 'running');
      const running = await stream.until('workspace.updated', (e) => e.workspace_id === id && e.workspace.state === 'running');
      assert.equal(running.at(-1)!.data.team_id, teamId);
      await stream.until('operation.updated', (e) => e.operation.state === 'succeeded' && e.operation.target === `/workspaces/${id}`);
      // Events reach each subscriber in commit order: once the stranger sees a later event of their own, anything
      // of the workspace would have arrived before it.
      const org = (await server.admin.post('/orgs', { name: 'Elsewhere' })).body.id;
      const team = (await server.admin.post('/teams', { org_id: org, name: 'Elsewhere' })).body.id;
      await server.admin.put(`/teams/${team}/members/${outsider.id}`, { role: 'viewer' });
      const seen = await stranger.until('access.changed');
      assert.deepEqual(seen.map((e) => e.event).filter((type) => /^(workspace|operation)\./.test(type)), []);
    } finally {
      stream.close();
      stranger.close();
    }
  });
});

describe('sleep, wake, delete, restore, purge, archive', () => {
  let id: number;
  before(async () => {
    id = (await createWorkspace('lifecycle', { git: { provider: 'git', repo: repository.url } })).id;
  });

  test('sleep by hand keeps the files and stops the editor; wake brings it back', async () => {
    const slept = await dev.post(`/workspaces/${id}/sleep`);
    assert.equal(slept.status, 200, slept.text);
    assert.equal(slept.body.state, 'sleeping');
    assert.equal(slept.body.status_detail, 'Asleep');
    assertProblem(await dev.post(`/workspaces/${id}/sleep`), 409, 'conflict');
    assert.equal(await readFile(volume(id, 'README.md'), 'utf8'), '# hello\n');
    assertProblem(await viewer.post(`/workspaces/${id}/wake`), 403, 'forbidden');
    const woken = await finished(await dev.post(`/workspaces/${id}/wake`));
    assert.equal(woken.state, 'succeeded', JSON.stringify(woken));
    assert.equal((await dev.get(`/workspaces/${id}`)).body.state, 'running');
  });

  test('a stopped workspace does not wake (503 with Retry-After and the reason) until started', async () => {
    const stopped = await dev.post(`/workspaces/${id}/stop`);
    assert.equal(stopped.status, 200, stopped.text);
    assert.deepEqual([stopped.body.state, stopped.body.status_detail], ['stopped', 'Stopped']);
    const blocked = await dev.post(`/workspaces/${id}/wake`);
    assertProblem(blocked, 503, 'wake-blocked');
    assert.equal(blocked.body.detail, 'The workspace is stopped; start it from the console.');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    const started = await finished(await dev.post(`/workspaces/${id}/start`));
    assert.equal(started.state, 'succeeded', JSON.stringify(started));
    assert.equal((await dev.get(`/workspaces/${id}`)).body.state, 'running');
  });

  test('rename needs If-Match', async () => {
    const ws = await dev.get(`/workspaces/${id}`);
    assertProblem(await dev.patch(`/workspaces/${id}`, { name: 'renamed' }), 428, 'precondition-required');
    const renamed = await dev.patch(`/workspaces/${id}`, { name: 'lifecycle-2' }, { headers: { 'if-match': ws.headers.get('etag')! } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'lifecycle-2');
    assertProblem(await dev.patch(`/workspaces/${id}`, { name: 'x' }, { headers: { 'if-match': ws.headers.get('etag')! } }), 412, 'precondition-failed');
  });

  test('delete is soft for 7 days; restore is refused while the name is taken; purge removes it', async () => {
    const ws = await dev.get(`/workspaces/${id}`);
    const deleted = await finished(await dev.delete(`/workspaces/${id}`, { headers: { 'if-match': ws.headers.get('etag')! } }));
    assert.equal(deleted.state, 'succeeded', JSON.stringify(deleted));
    const gone = (await dev.get(`/workspaces/${id}`)).body;
    assert.equal(gone.state, 'deleting');
    assert.equal(Date.parse(gone.purge_after) - Date.parse(gone.deleted_at), 7 * 24 * 3600_000);
    const recently = await dev.get(`/workspaces?team=${teamId}&deleted=true`);
    assert.ok(recently.body.items.some((w: { id: number }) => w.id === id));
    const clash = await createWorkspace('lifecycle-2');
    assertProblem(await dev.post(`/workspaces/${id}/restore`), 409, 'name-taken');
    const other = await dev.get(`/workspaces/${clash.id}`);
    await dev.patch(`/workspaces/${clash.id}`, { name: 'clash-renamed' }, { headers: { 'if-match': other.headers.get('etag')! } });
    const restored = await finished(await dev.post(`/workspaces/${id}/restore`));
    assert.equal(restored.state, 'succeeded', JSON.stringify(restored));
    const back = (await dev.get(`/workspaces/${id}`)).body;
    assert.equal(back.state, 'sleeping');
    assert.equal(back.deleted_at, undefined);
    assert.equal(await readFile(volume(id, 'README.md'), 'utf8'), '# hello\n');
    assertProblem(await dev.post(`/workspaces/${clash.id}/purge`), 409, 'conflict');
    const clashEtag = (await dev.get(`/workspaces/${clash.id}`)).headers.get('etag')!;
    await finished(await dev.delete(`/workspaces/${clash.id}`, { headers: { 'if-match': clashEtag } }));
    const purged = await finished(await dev.post(`/workspaces/${clash.id}/purge`));
    assert.equal(purged.state, 'succeeded');
    assertProblem(await dev.get(`/workspaces/${clash.id}`), 404, 'not-found');
    await assert.rejects(stat(volume(clash.id)));
  });

  test('archive frees the volume; restore-archive refills it byte for byte', async () => {
    const before = await checksums(volume(id));
    const archived = await finished(await dev.post(`/workspaces/${id}/archive`));
    assert.equal(archived.state, 'succeeded', JSON.stringify(archived));
    await assert.rejects(stat(volume(id)), 'the volume is freed');
    const ws = (await dev.get(`/workspaces/${id}`)).body;
    assert.ok(ws.last_archived_at);
    assert.equal(ws.archived, true);
    assertProblem(await dev.post(`/workspaces/${id}/wake`), 409, 'conflict');
    const restored = await finished(await dev.post(`/workspaces/${id}/restore-archive`));
    assert.equal(restored.state, 'succeeded', JSON.stringify(restored));
    const after = (await dev.get(`/workspaces/${id}`)).body;
    assert.equal(after.restored_from, id);
    assert.equal(after.archived, false);
    assert.equal(after.status_detail, 'Asleep');
    assert.deepEqual(await checksums(volume(id)), before);
  });
});

async function checksums(dir: string, prefix = ''): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) Object.assign(result, await checksums(full, `${prefix}${entry.name}/`));
    else if (entry.isFile()) result[`${prefix}${entry.name}`] = createHash('sha256').update(await readFile(full)).digest('hex');
  }
  return result;
}
