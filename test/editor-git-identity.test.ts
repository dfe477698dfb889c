// `git push` from the editor (code-server) as the one person who has it open (issue 34, item 2): the router counts
// the editor WebSockets it relays per person, the server tells the editor pod's agent, and code-server's environment
// points git at the agent's stable sockets. Real server, real pods, real code-server, the "internet" host's git over
// HTTPS with basic auth and over sshd; editor WebSockets opened through the router as each person; git run in the
// editor's environment (code-server's /proc/<pid>/environ, as its terminals and Source Control view get it).
// Needs root and code-server in the tools directory.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { DEFAULT_TOOLS_DIR, installedCodeServer } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { execInPod } from './helpers/driver-pods.ts';
import { startInternetHost, type InternetHost, type InternetSsh } from './helpers/internet-host.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const skip = process.getuid?.() !== 0
  ? "needs root: pods with their own network, the internet host's namespace"
  : installedCodeServer(toolsDir) ? false : `code-server is not installed in ${toolsDir}; run scripts/setup-editor.sh`;
const run = promisify(execFile);
const ALICE_TOKEN = 'tok-editor-alice-7d1c0e';
const BOB_TOKEN = 'tok-editor-bob-52e9aa';

let internet: InternetHost;
let ssh: InternetSsh;
let server: TestServer;
let driver: RuntimeDriver;
let alice: ApiClient;
let bob: ApiClient;
let bobId: number;
let team: number;
let ws = 0;
let other = 0;
const repos = { alice: { url: '', path: '' }, bob: { url: '', path: '' } };

/** An editor WebSocket of `workspace` opened through the router as `client` (code-server's management connection). */
async function openEditor(client: ApiClient, workspace: number): Promise<Duplex> {
  const ideHost = new URL((await client.get(`/workspaces/${workspace}`)).body.urls.ide).host;
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: `/?reconnectionToken=${randomBytes(8).toString('hex')}&reconnection=false&skipWebSocketFrames=false`,
      headers: {
        host: ideHost,
        origin: `http://${ideHost}`,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        'sec-websocket-version': '13',
        'svc-authorization': `Bearer ${client.auth.token}`,
      },
    });
    request.on('upgrade', (answer, socket) => {
      socket.resume(); // code-server's frames are read and dropped, so that the connection's end is seen
      if (answer.statusCode === 101) resolve(socket);
      else reject(new Error(`upgrade answered ${answer.statusCode}`));
    });
    request.on('response', (answer) => reject(new Error(`no upgrade: ${answer.statusCode}`)));
    request.on('error', reject);
    request.end();
  });
}

/** Runs `script` in /data/app of `workspace`'s editor pod with exactly code-server's environment. */
async function inEditor(workspace: number, script: string) {
  const wrapper = `
for p in /proc/[0-9]*; do
  launcher=$(tr '\\0' '\\n' < "$p/cmdline" 2>/dev/null | sed -n 2p)
  case $launcher in */code-server.mjs) pid=\${p#/proc/}; break ;; esac
done
[ -n "$pid" ] || { echo 'no code-server in the pod' >&2; exit 90; }
mapfile -d '' vars < /proc/$pid/environ
cd /data/app && exec env -i "\${vars[@]}" GIT_TERMINAL_PROMPT=0 bash -c "$1"`;
  const result = await execInPod(driver, { id: workspace, uid: 0, storageGib: 0 }, { kind: 'editor' }, ['bash', '-c', wrapper, 'editor-env', script]);
  return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

/** What git's credential helpers give in the editor for the internet host now: the user name, or git's complaint. */
const fill = (workspace: number) =>
  inEditor(workspace, `printf 'protocol=http\\nhost=${internet.name}\\n\\n' | git credential fill`).then((r) => (r.code === 0 ? r.stdout.match(/^username=(.*)$/m)?.[1] ?? '' : r.stderr));

/** Waits until the editor's git of `workspace` answers as `expected` says (the agent hears of a change just after it). */
const settled = (workspace: number, expected: RegExp) =>
  until(async () => {
    const now = await fill(workspace);
    return expected.test(now) ? now : undefined;
  }, `the editor's git to answer ${expected}`, 30_000);

const upstream = async (repository: string) => (await run('git', ['-C', repository, 'log', '-1', '--format=%an <%ae> %s', 'main'])).stdout;

before(async () => {
  if (skip) return;
  internet = await startInternetHost();
  server = await startTestServer({ env: { SVC_TOOLS_DIR: toolsDir }, driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, podDns: [internet.address], editorTools: toolsDir })) });
  const people = await Promise.all(['ed-alice', 'ed-bob'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [alice, bob] = people.map((p) => p.key);
  bobId = people[1].id;
  const org = (await alice.post('/orgs', { name: 'Editor git' })).body.id;
  team = (await alice.post('/teams', { org_id: org, name: 'Editor git' })).body.id;
  assert.ok((await alice.put(`/teams/${team}/members/${bobId}`, { role: 'developer' })).status < 300);
  repos.alice = await internet.addRepository('alices', { 'README.md': 'private code\n' }, { account: { username: 'alice', password: ALICE_TOKEN } });
  repos.bob = await internet.addRepository('bobs', { 'README.md': 'bob\'s code\n' }, { account: { username: 'bob', password: BOB_TOKEN } });
  ssh = await internet.startSsh();
  for (const [client, username, password] of [[alice, 'alice', ALICE_TOKEN], [bob, 'bob', BOB_TOKEN]] as const) {
    assert.equal((await client.post('/me/git-credentials', { host: internet.name, username, password })).status, 201);
  }
  const key = await alice.post('/me/ssh-key');
  assert.equal(key.status, 201, key.text);
  await ssh.authorize([key.body.public_key]);
  for (const name of ['editor-git', 'editor-git-other']) {
    const created = await alice.post('/workspaces', { team_id: team, name, git: { provider: 'git', repo: repos.alice.url } });
    assert.equal(created.status, 202, created.text);
    const id = Number(created.body.target.split('/')[2]);
    if (name === 'editor-git') ws = id;
    else other = id;
    const operation = await operationFinished(alice, created.body.id);
    assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  }
});

after(async () => {
  if (driver) await removeWorkspaces(driver, [ws, other]);
  await server?.close();
  await internet?.close();
});

describe("git in the editor acts as the one person who has it open", { skip }, () => {
  test('nobody has the editor open: a push fails saying so, with no one\'s credential', async () => {
    const before = await upstream(repos.alice.path);
    const pushed = await inEditor(ws, 'git push -q origin HEAD:refs/heads/nobody');
    assert.notEqual(pushed.code, 0);
    assert.match(pushed.stderr, /svc: nobody has this workspace's editor open; git credentials are given only when one person has it open — use `svc ssh` or the console terminal/);
    assert.equal(await upstream(repos.alice.path), before);
  });

  test('alice alone: the push is hers (her token over HTTPS, her key over SSH), her name and e-mail on the commit', async () => {
    const editor = await openEditor(alice, ws);
    try {
      await settled(ws, /^alice$/);
      const pushed = await inEditor(ws, 'echo alice >> README.md && git commit -qam "from the editor" && git push -q origin HEAD:main');
      assert.equal(pushed.code, 0, pushed.stderr);
      assert.equal(await upstream(repos.alice.path), 'ed-alice <ed-alice@example.com> from the editor\n');
      const overSsh = await inEditor(ws, `mkdir -p ~/.ssh && ssh-keyscan -t ed25519 ${internet.name} 2>/dev/null >> ~/.ssh/known_hosts && echo ssh >> README.md && git commit -qam "over ssh" && git push -q ${ssh.urlOf(repos.alice.path)} HEAD:main`);
      assert.equal(overSsh.code, 0, overSsh.stderr);
      assert.equal(await upstream(repos.alice.path), 'ed-alice <ed-alice@example.com> over ssh\n');
    } finally {
      editor.destroy();
    }
    await settled(ws, /nobody has this workspace's editor open/);
  });

  test('alice and bob both: the push fails naming both, and nothing is pushed', async () => {
    const before = await upstream(repos.alice.path);
    const editors = [await openEditor(alice, ws), await openEditor(bob, ws)];
    try {
      await settled(ws, /2 people/);
      const pushed = await inEditor(ws, 'git push -q origin HEAD:refs/heads/both');
      assert.notEqual(pushed.code, 0);
      assert.match(pushed.stderr, /svc: 2 people have this workspace's editor open \(ed-alice@example\.com, ed-bob@example\.com\); git credentials are given only when one person has it open — use `svc ssh` or the console terminal/);
      const overSsh = await inEditor(ws, `git push -q ${ssh.urlOf(repos.alice.path)} HEAD:main`);
      assert.notEqual(overSsh.code, 0);
      assert.match(overSsh.stderr, /svc: 2 people have this workspace's editor open/);
      assert.equal(await upstream(repos.alice.path), before);
      assert.match((await inEditor(ws, 'git commit --allow-empty -qm both')).stderr, /Author identity unknown/, 'nobody\'s name on a commit either');
    } finally {
      for (const editor of editors) editor.destroy();
    }
  });

  test('alice leaves, bob comes: the push is bob\'s, with his token, never alice\'s', async () => {
    const first = await openEditor(alice, ws);
    await settled(ws, /^alice$/);
    first.destroy();
    const editor = await openEditor(bob, ws);
    try {
      await settled(ws, /^bob$/);
      const refused = await inEditor(ws, 'echo bob >> README.md && git commit -qam "bob from the editor" && git push -q origin HEAD:main');
      assert.notEqual(refused.code, 0, 'bob has no access to alice\'s repository: her token is not used');
      assert.match(refused.stderr, /Authentication failed|401/);
      const pushed = await inEditor(ws, `git push -q ${repos.bob.url} HEAD:refs/heads/from-alices`);
      assert.equal(pushed.code, 0, pushed.stderr);
      assert.equal((await run('git', ['-C', repos.bob.path, 'log', '-1', '--format=%an <%ae> %s', 'from-alices'])).stdout, 'ed-bob <ed-bob@example.com> bob from the editor\n');
      const overSsh = await inEditor(ws, `git push -q ${ssh.urlOf(repos.alice.path)} HEAD:main`);
      assert.notEqual(overSsh.code, 0, 'bob\'s key is not authorized at the sshd; alice\'s is not his');
      assert.match(overSsh.stderr, /Permission denied \(publickey\)/);
    } finally {
      editor.destroy();
    }
  });

  test('bob in another workspace of the team does not make him the identity of this one', async () => {
    const elsewhere = await openEditor(bob, other);
    const editor = await openEditor(alice, ws);
    try {
      await settled(other, /^bob$/);
      assert.equal(await settled(ws, /^alice$/), 'alice');
    } finally {
      editor.destroy();
      elsewhere.destroy();
    }
  });

  test('bob removed from the team: the stream guard closes his editor, and his credentials leave with it', async () => {
    const editor = await openEditor(bob, ws);
    try {
      let closed = false;
      editor.once('close', () => (closed = true));
      await settled(ws, /^bob$/);
      const removed = await alice.delete(`/teams/${team}/members/${bobId}`);
      assert.ok(removed.status < 300, removed.text);
      await until(async () => closed || undefined, 'bob\'s editor WebSocket to be closed by the router', 30_000);
      await settled(ws, /nobody has this workspace's editor open/);
    } finally {
      editor.destroy();
    }
  });
});
