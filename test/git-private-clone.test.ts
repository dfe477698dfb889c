// Private repositories cloned at create with the creating user's git credential (issue 34, item 2), against real
// servers on the host: `git http-backend` behind nginx with basic auth, and OpenSSH's sshd. As root the clone runs
// under the pods' egress policy, so they listen on the host's own address, which this installation allows
// (`egressAllow`, as an operator allows a company's git server). A wrong, missing or
// another user's credential fails the clone with a reason naming the host; the token and the private key are found
// nowhere in API answers, the server's log, the database in clear, or the data directory (volumes among it).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../src/core/secret-box.ts';
import { sshKeyPlace } from '../src/git/credentials.ts';
import { openSshPrivateKeyFile } from '../src/git/ssh-key.ts';
import { findSealedSshKey } from '../src/store/git-credentials.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { appDir } from '../src/runtime/local/volumes.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { startHttpGitServer, startSshGitServer, type PrivateGitServer } from './helpers/git-servers.ts';
import { hostAddress } from './helpers/internet-host.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const run = promisify(execFile);
const TOKEN = 'tok-alice-9f3b27c1d5e8a6';
const WRONG = 'tok-bob-wrong-42aa17';

let server: TestServer;
let repository: BareRepository;
let httpGit: PrivateGitServer;
let sshGit: PrivateGitServer;
let alice: ApiClient;
let bob: ApiClient;
let carol: ApiClient;
let team: number;
const logLines: string[] = [];
const answers: string[] = [];
const workspaces: number[] = [];

before(async () => {
  const address = process.getuid?.() === 0 ? await hostAddress() : '127.0.0.1';
  server = await startTestServer({
    onLog: (line) => logLines.push(line),
    driver: ({ dataDir, clock }) => createLocalDriver({ dataDir, clock, egressAllow: [`${address}/32`] }),
  });
  const people = await Promise.all(['clone-alice', 'clone-bob', 'clone-carol'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [alice, bob, carol] = people.map((p) => p.key);
  const org = (await alice.post('/orgs', { name: 'Private Git' })).body.id;
  team = (await alice.post('/teams', { org_id: org, name: 'Private Git' })).body.id;
  for (const person of people.slice(1)) await alice.put(`/teams/${team}/members/${person.id}`, { role: 'developer' });
  repository = await createBareRepository({ 'README.md': 'private code\n' });
  httpGit = await startHttpGitServer(repository, { username: 'alice', password: TOKEN }, address);
  const aliceKey = await alice.post('/me/ssh-key');
  assert.equal(aliceKey.status, 201);
  sshGit = await startSshGitServer(repository, aliceKey.body.public_key, address);
  assert.equal((await alice.post('/me/git-credentials', { host: httpGit.host, username: 'alice', password: TOKEN })).status, 201);
  assert.equal((await bob.post('/me/git-credentials', { host: httpGit.host, username: 'bob', password: WRONG })).status, 201);
  assert.equal((await bob.post('/me/ssh-key')).status, 201);
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, workspaces);
  await server?.close();
  await httpGit?.close();
  await sshGit?.close();
  await repository?.remove();
});

async function create(client: ApiClient, name: string, repo: string): Promise<{ id: number; operation: any; workspace: any }> {
  const created = await client.post('/workspaces', { team_id: team, name, git: { provider: 'git', repo } });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  workspaces.push(id);
  const operation = await operationFinished(client, created.body.id);
  const workspace = await client.get(`/workspaces/${id}`);
  const operationAnswer = await client.get(`/operations/${created.body.id}`);
  answers.push(created.text, workspace.text, operationAnswer.text);
  return { id, operation, workspace: workspace.body };
}

const volumeFile = (id: number, name: string) => readFile(path.join(appDir({ dataDir: server.server.config.dataDir, asRoot: true }, id), name), 'utf8');

describe('the clone at create', () => {
  test('over HTTPS with basic auth: the creator\'s token opens it; .git/config and git.repo carry no secret', async () => {
    const { id, operation, workspace } = await create(alice, 'https-clone', httpGit.url);
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
    assert.equal(await volumeFile(id, 'README.md'), 'private code\n');
    const config = await volumeFile(id, '.git/config');
    assert.match(config, new RegExp(`url = ${httpGit.url.replace(/[.]/g, '\\.')}\\n`));
    assert.doesNotMatch(config, /credential|tok-|alice/);
    assert.equal(workspace.git.repo, httpGit.url);
    assert.match(await httpGit.log(), /"GET \/repo\.git\/info\/refs\?service=git-upload-pack HTTP\/1\.1" 200 .*/);
  });

  test('over ssh: the creator\'s svc-made key opens it', async () => {
    const { id, operation } = await create(alice, 'ssh-clone', sshGit.url);
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
    assert.equal(await volumeFile(id, 'README.md'), 'private code\n');
    assert.match(await sshGit.log(), /Accepted publickey for root .* ED25519 SHA256:/);
  });

  test('a wrong token fails the clone saying it was refused, for which host; another user\'s is never used', async () => {
    const { workspace, operation } = await create(bob, 'wrong-token', httpGit.url);
    assert.equal(operation.state, 'failed');
    assert.equal(workspace.state, 'error');
    assert.match(workspace.status_detail, new RegExp(`^Cloning the repository failed: ${httpGit.host} refused your git credential for ${httpGit.host} \\(user bob\\)`));
    assert.doesNotMatch(await httpGit.log(), /"GET \/repo\.git\/info\/refs\?service=git-upload-pack HTTP\/1\.1" 200 [^\n]*\n[^\n]*$/);
  });

  test('no credential for the host fails the clone saying none is stored, for which host', async () => {
    const { workspace } = await create(carol, 'no-token', httpGit.url);
    assert.equal(workspace.state, 'error');
    assert.match(workspace.status_detail, new RegExp(`^Cloning the repository failed: ${httpGit.host} asked for a credential and you have none stored for ${httpGit.host}: add one with \`svc git-credentials add ${httpGit.host}\``));
  });

  test('over ssh, a key the server does not know and a user without a key fail saying so', async () => {
    const refused = await create(bob, 'ssh-wrong-key', sshGit.url);
    assert.equal(refused.workspace.state, 'error');
    assert.match(refused.workspace.status_detail, new RegExp(`^Cloning the repository failed: ${sshGit.host} refused your SSH key: add its public key`));
    const none = await create(carol, 'ssh-no-key', sshGit.url);
    assert.match(none.workspace.status_detail, new RegExp(`^Cloning the repository failed: ${sshGit.host} refused the clone over ssh and you have no SSH key in svc`));
  });

  test('an address with a token in it is refused before anything is stored', async () => {
    const answer = await alice.post('/workspaces', { team_id: team, name: 'token-in-url', git: { provider: 'git', repo: httpGit.url.replace('http://', `http://alice:${TOKEN}@`) } });
    assertProblem(answer, 422, 'repository-not-allowed');
    assert.equal(answer.body.errors[0].pointer, '/git/repo');
    assert.doesNotMatch(answer.text, new RegExp(TOKEN));
  });
});

describe('git inside the workspace, as the person at the keyboard (svc exec)', () => {
  let configHome: string;
  before(async () => {
    configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-gitpod-'));
  });
  after(async () => {
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });
  const exec = async (client: ApiClient, script: string) => {
    const ws = workspaces[0];
    const result = await runSvc(['exec', String(ws), '--', 'sh', '-c', script], { SVC_URL: server.url, SVC_TOKEN: client.auth.token!, XDG_CONFIG_HOME: configHome });
    return result;
  };
  const fill = (host: string) => `printf 'protocol=http\\nhost=${host}\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill`;

  test('git credential fill gives the keyboard person\'s own credential for the host, and nothing to one without', async () => {
    const own = await exec(alice, fill(httpGit.host));
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, new RegExp(`^protocol=http\\nhost=${httpGit.host}\\nusername=alice\\npassword=${TOKEN}\\n`));
    const other = await exec(bob, fill(httpGit.host));
    assert.match(other.stdout, new RegExp(`username=bob\\npassword=${WRONG}\\n`));
    assert.doesNotMatch(other.stdout, new RegExp(TOKEN));
    const none = await exec(carol, fill(httpGit.host));
    assert.notEqual(none.code, 0);
    assert.doesNotMatch(none.stdout + none.stderr, /password=/);
    const otherHost = await exec(alice, fill('elsewhere.example.com'));
    assert.doesNotMatch(otherHost.stdout, /password=/);
  });

  test('ssh-add -L lists the keyboard person\'s key; nothing for another user; commits carry their name', async () => {
    const aliceKey = (await alice.get('/me/ssh-key')).body.public_key;
    const listed = await exec(alice, 'ssh-add -L');
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout.trim(), aliceKey);
    const bobKey = (await bob.get('/me/ssh-key')).body.public_key;
    assert.equal((await exec(bob, 'ssh-add -L')).stdout.trim(), bobKey);
    const none = await exec(carol, 'ssh-add -L');
    assert.equal(none.code, 1);
    assert.match(none.stdout, /The agent has no identities/);
    const ident = await exec(bob, 'git var GIT_AUTHOR_IDENT && git var GIT_COMMITTER_IDENT');
    assert.match(ident.stdout, /^clone-bob <clone-bob@example\.com> \d+ [+-]\d{4}\nclone-bob <clone-bob@example\.com> \d+ [+-]\d{4}\n$/);
  });
});

describe('secrets stay secret', () => {
  test('the token and the private key are nowhere in API answers, the log, the database in clear or the data directory', async () => {
    const pool = server.server.database.pool;
    const secrets = new SecretBox(Buffer.from((await readFile(path.join(server.server.config.dataDir, 'secrets.key'), 'utf8')).trim(), 'base64'));
    const me = (await alice.get('/me')).body.id as number;
    const pem = secrets.open((await findSealedSshKey(pool, me))!.sealed, sshKeyPlace(me));
    // the key as PEM, as an OpenSSH key file, and its private bytes in base64: none may appear
    const keyFile = openSshPrivateKeyFile(pem, 'x');
    const keyMarkers = [pem.split('\n')[1], keyFile.split('\n')[3], 'PRIVATE KEY'];
    const needles = [TOKEN, WRONG, Buffer.from(TOKEN).toString('hex'), Buffer.from(TOKEN).toString('base64'), ...keyMarkers];

    for (const client of [alice, bob, carol]) {
      for (const url of ['/me/git-credentials', '/me/ssh-key', '/workspaces', `/workspaces?team=${team}`]) answers.push((await client.get(url)).text);
    }
    answers.push((await server.admin.get('/audit-log?limit=200')).text);
    answers.push((await server.admin.get('/operations?limit=200')).text);
    const tables = (await pool.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)).rows;
    const database: string[] = [];
    for (const { table_name } of tables) database.push(...(await pool.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`)).rows.map((r) => r.row));
    for (const needle of needles) {
      for (const [where, texts] of [['API answers', answers], ['the log', logLines], ['the database', database]] as const) {
        assert.ok(!texts.some((text) => text.includes(needle)), `${needle.slice(0, 12)}… found in ${where}`);
      }
      // the agent's bundle (runtime/agent-<hash>/) is svc's own code: its SSH library names key formats in strings
      const grep = await run('grep', ['-rlF', '--exclude-dir=agent-*', '--', needle, server.server.config.dataDir]).catch((error: { code: number; stdout: string }) => ({ stdout: error.code === 1 ? '' : `grep failed: ${error.code}` }));
      assert.equal(grep.stdout, '', `${needle.slice(0, 12)}… found in the data directory`);
    }
    assert.ok(logLines.length > 0, 'the log was captured');
  });
});
