// Retry means retry (issue 35, item 3): a workspace whose clone failed clones again on Retry (Error again with the
// reason when it fails, never Running on an empty volume); its repository address and ref can be corrected with
// PATCH and If-Match, or with `svc ws retry --git/--ref`, and the next Retry clones the corrected one.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

let server: TestServer;
let dev: ApiClient;
let teamId: number;
let repository: BareRepository;
let configHome: string;
const created: number[] = [];

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  const owner = await createPerson(server.admin, 'retry-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Retry Org' })).body.id;
  teamId = (await owner.key.post('/teams', { org_id: org, name: 'Retriers' })).body.id;
  const developer = await createPerson(server.admin, 'retry-dev@example.com');
  await owner.key.put(`/teams/${teamId}/members/${developer.id}`, { role: 'developer' });
  dev = developer.key;
  repository = await createBareRepository({ 'README.md': '# retried\n' }, { feature: { 'FEATURE.md': 'feature\n' } });
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-retry-'));
  const login = await runSvc(['login', server.url, '--token', dev.auth.token!], cliEnv());
  assert.equal(login.code, 0, login.stderr);
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, created);
  await server?.close();
  await repository?.remove();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

function cliEnv() {
  return { XDG_CONFIG_HOME: configHome, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_TEAM: undefined, SVC_BROWSER: 'true' };
}

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

async function failedClone(name: string, git: object): Promise<number> {
  const answer = await dev.post('/workspaces', { team_id: teamId, name, git });
  const id = Number(answer.body.target.split('/')[2]);
  created.push(id);
  const operation = await finished(answer);
  assert.equal(operation.state, 'failed', JSON.stringify(operation));
  return id;
}

// the code lives in the volume's app/ (HOME in home/, svc's files in .svc/)
const volume = (id: number, ...parts: string[]) => path.join(server.server.config.dataDir, 'volumes', String(id), 'app', ...parts);

test('Retry of a bad clone clones again and ends in Error again with the reason; a corrected address then clones', async () => {
  const id = await failedClone('bad-address', { provider: 'git', repo: `${repository.url}-missing` });
  const failed = (await dev.get(`/workspaces/${id}`)).body;
  assert.equal(failed.state, 'error');
  assert.match(failed.status_detail, /^Cloning the repository failed: .+/);
  assert.equal(failed.git.cloned, false);

  const retried = await dev.post(`/workspaces/${id}/wake`, {});
  assert.equal(retried.body.kind, 'workspace.create', 'a Retry after a failed clone clones again');
  const again = await finished(retried);
  assert.equal(again.state, 'failed');
  assert.equal(again.error.type, 'urn:svc:problem:workspace-failed');
  const stillFailed = (await dev.get(`/workspaces/${id}`)).body;
  assert.equal(stillFailed.state, 'error', 'never Running with an empty volume');
  assert.match(stillFailed.status_detail, /^Cloning the repository failed: .+/);

  // the address is corrected with If-Match, then Retry clones it
  const read = await dev.get(`/workspaces/${id}`);
  const noMatch = await dev.patch(`/workspaces/${id}`, { git: { repo: repository.url } });
  assertProblem(noMatch, 428, 'precondition-required');
  const stale = await dev.patch(`/workspaces/${id}`, { git: { repo: repository.url } }, { headers: { 'if-match': '"v1"' } });
  assertProblem(stale, 412, 'precondition-failed');
  const notGit = await dev.patch(`/workspaces/${id}`, { git: { repo: 'not a url' } }, { headers: { 'if-match': read.headers.get('etag')! } });
  assertProblem(notGit, 422, 'repository-not-allowed');
  const corrected = await dev.patch(`/workspaces/${id}`, { git: { repo: repository.url } }, { headers: { 'if-match': read.headers.get('etag')! } });
  assert.equal(corrected.status, 200, corrected.text);
  assert.deepEqual(corrected.body.git, { provider: 'git', repo: repository.url, cloned: false });
  const cloned = await finished(await dev.post(`/workspaces/${id}/wake`, {}));
  assert.equal(cloned.state, 'succeeded', JSON.stringify(cloned));
  const running = await dev.get(`/workspaces/${id}`);
  assert.equal(running.body.state, 'running');
  assert.equal(running.body.git.cloned, true);
  assert.equal(await readFile(volume(id, 'README.md'), 'utf8'), '# retried\n');

  // a cloned workspace keeps its repository: the address is changed with git inside it
  const refused = await dev.patch(`/workspaces/${id}`, { git: { repo: `${repository.url}-other` } }, { headers: { 'if-match': running.headers.get('etag')! } });
  assertProblem(refused, 409, 'conflict');
  assert.match(refused.body.detail, /cloned already/);
});

test('an empty workspace has no repository to correct', async () => {
  const answer = await dev.post('/workspaces', { team_id: teamId, name: 'no-repo' });
  const id = Number(answer.body.target.split('/')[2]);
  created.push(id);
  assert.equal((await finished(answer)).state, 'succeeded');
  const read = await dev.get(`/workspaces/${id}`);
  const refused = await dev.patch(`/workspaces/${id}`, { git: { repo: repository.url } }, { headers: { 'if-match': read.headers.get('etag')! } });
  assertProblem(refused, 409, 'conflict');
});

test('svc ws retry: Error again with the reason, then --ref corrects the ref and the retry clones it', async () => {
  const id = await failedClone('bad-ref', { provider: 'git', repo: repository.url, ref: 'nope' });
  const shown = await runSvc(['ws', 'show', 'bad-ref'], cliEnv());
  assert.match(shown.stdout, /^Git: +\S+ @ nope \(not cloned: svc ws retry clones it, --git\/--ref correct it\)$/m);
  const again = await runSvc(['ws', 'retry', 'bad-ref'], cliEnv());
  assert.equal(again.code, 1, again.stdout);
  assert.match(again.stderr, /Cloning the repository failed: .*nope/);
  assert.equal((await dev.get(`/workspaces/${id}`)).body.state, 'error');
  assert.deepEqual(await readdir(volume(id)).catch(() => []), [], 'the failed clone leaves no files');

  const fixed = await runSvc(['ws', 'retry', 'bad-ref', '--ref', 'feature'], cliEnv());
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /^bad-ref \(\d+\): running, Workspace is running\n$/);
  const ws = (await dev.get(`/workspaces/${id}`)).body;
  assert.deepEqual(ws.git, { provider: 'git', repo: repository.url, ref: 'feature', cloned: true });
  assert.equal(await readFile(volume(id, 'FEATURE.md'), 'utf8'), 'feature\n');
});

test('a workspace whose clone failed, stopped then started, clones again instead of running on an empty volume', async () => {
  const id = await failedClone('stopped-bad', { provider: 'git', repo: `${repository.url}-gone` });
  assert.equal((await dev.post(`/workspaces/${id}/stop`, {})).body.state, 'stopped');
  const started = await finished(await dev.post(`/workspaces/${id}/start`, {}));
  assert.equal(started.kind, 'workspace.wake');
  assert.equal(started.state, 'failed');
  const ws = (await dev.get(`/workspaces/${id}`)).body;
  assert.equal(ws.state, 'error');
  assert.match(ws.status_detail, /^Cloning the repository failed: .+/);
});
