// `git push` from inside a workspace over HTTPS and SSH (issue 34, item 2), through the real server, real pods and
// the real CLI. The "internet" host (198.51.100.x, its own namespace and resolver) serves a private repository
// behind basic auth over git http-backend and over OpenSSH's sshd; the workspace is cloned with the user's
// credential (`svc git-credentials add`) or svc-made key (`POST /me/ssh-key`, authorized at the sshd), then a commit
// made in the editor pod through `svc exec` as that user is pushed over each and found upstream with their name and
// e-mail. Another member's exec in the same workspace pushes with nothing of the first user's. Needs root.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startInternetHost, type InternetHost, type InternetSsh } from './helpers/internet-host.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const skip = process.getuid?.() !== 0 ? 'needs root: pods with their own network, the internet host\'s namespace' : false;
const run = promisify(execFile);
const TOKEN = 'tok-pusher-5c81d2e9b7';
const BOB_TOKEN = 'tok-other-0a6f3e';

let internet: InternetHost;
let ssh: InternetSsh;
let server: TestServer;
let driver: RuntimeDriver;
let alice: ApiClient;
let bob: ApiClient;
let team: number;
let bare = '';
let httpUrl = '';
const workspaces: Record<'https' | 'ssh', number> = { https: 0, ssh: 0 };

const cli = (client: ApiClient, args: string[]) =>
  runSvc(args, { SVC_URL: server.url, SVC_TOKEN: client.auth.token!, XDG_CONFIG_HOME: path.join(server.server.config.dataDir, 'cli') });
// no terminal and no prompts: ssh knows the git host's key from the clone (~/.ssh/known_hosts), git asks nothing
const exec = (client: ApiClient, ws: number, script: string) =>
  cli(client, ['exec', String(ws), '--', 'bash', '-c', `export GIT_TERMINAL_PROMPT=0 GIT_SSH_COMMAND='ssh -o BatchMode=yes' && cd /data/app && ${script}`]);
const upstream = async () => (await run('git', ['-C', bare, 'log', '-1', '--format=%an <%ae> %s', 'main'])).stdout;

before(async () => {
  if (skip) return;
  internet = await startInternetHost();
  server = await startTestServer({ driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, podDns: [internet.address] })) });
  const people = await Promise.all(['push-alice', 'push-bob'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [alice, bob] = people.map((p) => p.key);
  const org = (await alice.post('/orgs', { name: 'Push' })).body.id;
  team = (await alice.post('/teams', { org_id: org, name: 'Push' })).body.id;
  assert.equal((await alice.put(`/teams/${team}/members/${people[1].id}`, { role: 'developer' })).status < 300, true);
  const repository = await internet.addRepository('private', { 'README.md': 'private code\n' }, { account: { username: 'alice', password: TOKEN } });
  [bare, httpUrl] = [repository.path, repository.url];
  ssh = await internet.startSsh();
  const added = await cli(alice, ['git-credentials', 'add', internet.name, '--username', 'alice', '--password', TOKEN]);
  assert.equal(added.code, 0, added.stderr);
  assert.equal((await cli(bob, ['git-credentials', 'add', internet.name, '--username', 'bob', '--password', BOB_TOKEN])).code, 0);
  const key = await alice.post('/me/ssh-key');
  assert.equal(key.status, 201, key.text);
  assert.equal((await bob.post('/me/ssh-key')).status, 201);
  await ssh.authorize([key.body.public_key]);
  for (const [transport, url] of [['https', httpUrl], ['ssh', ssh.urlOf(bare)]] as const) {
    const created = await alice.post('/workspaces', { team_id: team, name: `push-${transport}`, git: { provider: 'git', repo: url } });
    assert.equal(created.status, 202, created.text);
    workspaces[transport] = Number(created.body.target.split('/')[2]);
    const operation = await operationFinished(alice, created.body.id);
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  }
});

after(async () => {
  if (driver) await removeWorkspaces(driver, Object.values(workspaces));
  await server?.close();
  await internet?.close();
});

describe('a commit made in the editor pod leaves it', { skip }, () => {
  test('over HTTPS: the user\'s stored token pushes it; upstream it carries their name and e-mail', async () => {
    const pushed = await exec(alice, workspaces.https, 'cat README.md && echo "over https" >> README.md && git commit -qam "from the pod over https" && git push -q origin HEAD:main');
    assert.equal(pushed.code, 0, `${pushed.stdout}\n${pushed.stderr}`);
    assert.equal(pushed.stdout, 'private code\n');
    assert.equal(await upstream(), 'push-alice <push-alice@example.com> from the pod over https\n');
  });

  test('over SSH: the user\'s svc-made key (the agent\'s socket) pushes it, to the host key the clone accepted; sshd accepted that key', async () => {
    const pushed = await exec(alice, workspaces.ssh, 'git pull -q --rebase origin main && echo "over ssh" >> README.md && git commit -qam "from the pod over ssh" && git push -q origin HEAD:main');
    assert.equal(pushed.code, 0, `${pushed.stdout}\n${pushed.stderr}`);
    assert.equal(await upstream(), 'push-alice <push-alice@example.com> from the pod over ssh\n');
    const fingerprint = (await alice.get('/me/ssh-key')).body.fingerprint as string;
    assert.match(await ssh.log(), new RegExp(`Accepted publickey for root from [\\d.]+ port \\d+ ssh2: ED25519 ${fingerprint.replace(/[+/]/g, '\\$&')}`));
    const hostKey = (await internet.startSsh().then(() => run('ssh-keyscan', ['-t', 'ed25519', internet.address]))).stdout.split(' ').slice(1).join(' ').trim();
    const known = await exec(alice, workspaces.ssh, `ssh-keygen -F ${internet.name} -f ~/.ssh/known_hosts | grep -v '^#' | cut -d' ' -f2-; wc -l < ~/.ssh/known_hosts`);
    assert.equal(known.stdout, `${hostKey}\n1\n`, known.stderr);
    const readme = await run('git', ['-C', bare, 'show', 'main:README.md']);
    assert.equal(readme.stdout, 'private code\nover https\nover ssh\n');
  });

  test('another member\'s exec in the same workspaces pushes with their own credential, never the first user\'s: refused over both', async () => {
    const before = await upstream();
    const overHttps = await exec(bob, workspaces.https, 'git pull -q --rebase origin main; echo bob >> README.md && git commit -qam "bob over https" && git push -q origin HEAD:main');
    assert.notEqual(overHttps.code, 0);
    assert.match(overHttps.stderr, /Authentication failed|401|could not read/i);
    const overSsh = await exec(bob, workspaces.ssh, 'echo bob >> README.md && git commit -qam "bob over ssh" && git push -q origin HEAD:main');
    assert.notEqual(overSsh.code, 0);
    assert.match(overSsh.stderr, /Permission denied \(publickey\)/);
    assert.equal(await upstream(), before);
    const identity = await exec(bob, workspaces.https, 'git log -1 --format="%an <%ae>"');
    assert.equal(identity.stdout, 'push-bob <push-bob@example.com>\n');
  });
});
