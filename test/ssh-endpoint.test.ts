// The workspace's SSH endpoint (issue 38) through the real OpenSSH client: `svc config-ssh` writes ~/.ssh/config and
// svc's known_hosts in a temporary HOME, and ssh, scp, sftp and rsync reach the workspace through `svc ssh --stdio`
// (ProxyCommand) and the server's authenticated stream to the agent's SSH server. Forwarding both ways, agent
// forwarding used by git inside the workspace (the internet host's sshd), a sleeping workspace woken, refusals of
// another team's member and of a deleted key. Needs root (pods with their own network, the internet host).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startInternetHost, type InternetHost } from './helpers/internet-host.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const skip = process.getuid?.() !== 0 ? 'needs root: pods with their own network, the internet host\'s namespace' : false;
const run = promisify(execFile);

let internet: InternetHost;
let server: TestServer;
let driver: RuntimeDriver;
let alice: ApiClient;
let aliceSession: ApiClient;
let bob: ApiClient;
let workspace = 0;
let host = '';
let home = '';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const svcEnv = (client: ApiClient) => ({ SVC_URL: server.url, SVC_TOKEN: client.auth.token!, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') });
const svc = (client: ApiClient, args: string[]) => runSvc(args, svcEnv(client));
const sshConfig = () => path.join(home, '.ssh', 'config');

/** A program of OpenSSH's with the test HOME and alice's key (the ProxyCommand's svc reads them). */
function runTool(file: string, args: string[], options: { input?: Buffer | string; client?: ApiClient; env?: Record<string, string> } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: { ...process.env, ...svcEnv(options.client ?? alice), ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
const ssh = (args: string[], options: Parameters<typeof runTool>[2] = {}) => runTool('ssh', ['-F', sshConfig(), '-o', 'BatchMode=yes', ...args], options);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

before(async () => {
  if (skip) return;
  internet = await startInternetHost();
  server = await startTestServer({ driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, podDns: [internet.address] })) });
  home = await mkdtemp(path.join(os.tmpdir(), 'svc-ssh-home-'));
  const people = await Promise.all(['ssh-alice', 'ssh-bob'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [alice, bob] = people.map((p) => p.key);
  aliceSession = people[0].session;
  const org = (await alice.post('/orgs', { name: 'Shell' })).body.id;
  const team = (await alice.post('/teams', { org_id: org, name: 'Shell Team' })).body.id;
  const bobOrg = (await bob.post('/orgs', { name: 'Other' })).body.id;
  assert.equal((await bob.post('/teams', { org_id: bobOrg, name: 'Other' })).status, 201);
  const created = await alice.post('/workspaces', { team_id: team, name: 'box' });
  assert.equal(created.status, 202, created.text);
  workspace = Number(created.body.target.split('/')[2]);
  const operation = await operationFinished(alice, created.body.id);
  assert.equal(operation.state, 'succeeded', JSON.stringify(operation));
  const configured = await svc(alice, ['config-ssh']);
  assert.equal(configured.code, 0, configured.stderr);
  host = 'box.shell-team.svc';
});

after(async () => {
  if (driver) await removeWorkspaces(driver, [workspace]);
  await server?.close();
  await internet?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('ssh into a workspace', { skip }, () => {
  test('ssh HOST true exits 0 and ssh HOST exit 7 exits 7; stdout and stderr stay apart', async () => {
    const ok = await ssh([host, 'true']);
    assert.equal(ok.code, 0, ok.stderr);
    const seven = await ssh([host, 'echo out; echo err >&2; exit 7']);
    assert.equal(seven.code, 7, seven.stderr);
    assert.equal(seven.stdout, 'out\n');
    assert.equal(seven.stderr, 'err\n');
  });

  test('the session runs as the workspace user in /data/app with HOME /data/home and the caller\'s git identity', async () => {
    const who = await ssh([host, 'echo "$(id -un) $PWD $HOME $GIT_AUTHOR_EMAIL"']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'ssh-alice /data/app /data/home ssh-alice@example.com\n');
  });

  test('ssh -t gives a terminal of the client\'s size (stty size)', async () => {
    const command = `stty cols 101 rows 33; ssh -F ${sshConfig()} -o BatchMode=yes -t ${host} stty size`;
    const ran = await runTool('script', ['-qec', command, '/dev/null']);
    assert.equal(ran.code, 0, ran.stdout + ran.stderr);
    assert.match(ran.stdout, /33 101\r?$/m); // after what script's terminal echoes of its empty input
  });

  test('stdin goes through ssh HOST cat unchanged', async () => {
    const input = randomBytes(300_000);
    const ran = await new Promise<Buffer>((resolve) => {
      const child = spawn('ssh', ['-F', sshConfig(), '-o', 'BatchMode=yes', host, 'cat'], { env: { ...process.env, ...svcEnv(alice) } });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('close', () => resolve(Buffer.concat(chunks)));
      child.stdin.end(input);
    });
    assert.equal(sha256(ran), sha256(input));
  });
});

describe('files', { skip }, () => {
  test('scp of a 50 MB file both ways keeps its checksum', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-scp-'));
    const data = randomBytes(50 * 1024 * 1024);
    await writeFile(path.join(dir, 'big'), data);
    const up = await runTool('scp', ['-F', sshConfig(), '-o', 'BatchMode=yes', path.join(dir, 'big'), `${host}:/data/app/big`]);
    assert.equal(up.code, 0, up.stderr);
    const inside = await ssh([host, 'sha256sum /data/app/big']);
    assert.equal(inside.stdout.split(' ')[0], sha256(data));
    const down = await runTool('scp', ['-F', sshConfig(), '-o', 'BatchMode=yes', `${host}:/data/app/big`, path.join(dir, 'back')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(sha256(await readFile(path.join(dir, 'back'))), sha256(data));
    await ssh([host, 'rm /data/app/big']);
    await rm(dir, { recursive: true, force: true });
  });

  test('sftp lists a directory', async () => {
    await ssh([host, 'mkdir -p /data/app/listed && touch /data/app/listed/one.txt /data/app/listed/two.txt']);
    const listed = await runTool('sftp', ['-F', sshConfig(), '-o', 'BatchMode=yes', '-b', '-', host], { input: 'ls -1 /data/app/listed\n' });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /one\.txt\n(.*\n)?.*two\.txt/);
  });

  test('rsync -a copies a tree with its modes', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-rsync-'));
    await mkdir(path.join(dir, 'tree', 'sub'), { recursive: true });
    await writeFile(path.join(dir, 'tree', 'a.txt'), 'a\n');
    await writeFile(path.join(dir, 'tree', 'sub', 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    const synced = await runTool('rsync', ['-a', '-e', `ssh -F ${sshConfig()} -o BatchMode=yes`, `${path.join(dir, 'tree')}/`, `${host}:/data/app/tree/`]);
    assert.equal(synced.code, 0, synced.stderr);
    const listed = await ssh([host, 'cd /data/app/tree && find . -type f | sort && cat a.txt && ./sub/run.sh']);
    assert.equal(listed.stdout, './a.txt\n./sub/run.sh\na\nhi\n', listed.stderr);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('forwarding', { skip }, () => {
  test('ssh -L reaches a service port of the workspace answering HTTP', async () => {
    const local = 20000 + (process.pid % 20000);
    const child = spawn('ssh', ['-F', sshConfig(), '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', '-L', `127.0.0.1:${local}:127.0.0.1:47002`, host,
      'mkdir -p /tmp/site && echo served-inside > /tmp/site/index.html && exec python3 -m http.server 47002 --bind 127.0.0.1 --directory /tmp/site'],
      { env: { ...process.env, ...svcEnv(alice) }, stdio: 'ignore' });
    try {
      const body = await until(async () => {
        const answer = await fetch(`http://127.0.0.1:${local}/`).catch(() => undefined);
        return answer?.ok ? answer.text() : undefined;
      }, 'the service through ssh -L');
      assert.equal(body, 'served-inside\n');
    } finally {
      child.kill();
    }
  });

  test('ssh -R makes a port inside the workspace reach this machine', async () => {
    const laptop = http.createServer((_request, response) => response.end('from the laptop\n'));
    await new Promise<void>((resolve) => laptop.listen(0, '127.0.0.1', resolve));
    try {
      const port = (laptop.address() as AddressInfo).port;
      const ran = await ssh(['-o', 'ExitOnForwardFailure=yes', '-R', `47003:127.0.0.1:${port}`, host, 'curl -s http://127.0.0.1:47003/']);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout, 'from the laptop\n');
    } finally {
      laptop.close();
    }
  });

  test('agent forwarding: git clone over ssh inside the workspace signs with the laptop\'s agent', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-agent-'));
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'key')]);
    const agentSocket = path.join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', agentSocket], { stdio: 'ignore' });
    try {
      await until(async () => (await run('ssh-add', ['-l'], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket } }).then(() => true, (e: { code?: number }) => (e.code === 1 ? true : undefined))), 'ssh-agent');
      await run('ssh-add', [path.join(dir, 'key')], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket } });
      const repository = await internet.addRepository('agent-repo', { 'README.md': 'cloned with the laptop key\n' });
      const sshd = await internet.startSsh();
      await sshd.authorize([(await readFile(path.join(dir, 'key.pub'), 'utf8')).trim()]);
      const clone = `rm -rf /tmp/agent-clone && GIT_SSH_COMMAND='ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null' git clone -q ${sshd.urlOf(repository.path)} /tmp/agent-clone && cat /tmp/agent-clone/README.md`;
      const without = await ssh([host, clone]);
      assert.notEqual(without.code, 0, 'no agent: the clone is refused');
      const ran = await ssh(['-A', host, clone], { env: { SSH_AUTH_SOCK: agentSocket } });
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout, 'cloned with the laptop key\n');
    } finally {
      agent.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('who may connect, and when', { skip }, () => {
  test('a sleeping workspace is woken by ssh', async () => {
    const slept = await alice.post(`/workspaces/${workspace}/sleep`);
    assert.ok(slept.status < 300, slept.text);
    await until(async () => ((await alice.get(`/workspaces/${workspace}`)).body.state === 'sleeping' ? true : undefined), 'sleeping');
    const ran = await ssh([host, 'echo awake']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, 'awake\n');
    assert.equal((await alice.get(`/workspaces/${workspace}`)).body.state, 'running');
  });

  test('another team\'s member is refused: the workspace is not found for them', async () => {
    const direct = await svc(bob, ['ssh', '--stdio', String(workspace)]);
    assert.equal(direct.code, 1);
    assert.match(direct.stderr, /not found/i);
    const viaSsh = await ssh([host, 'true'], { client: bob });
    assert.equal(viaSsh.code, 255);
    assert.match(viaSsh.stderr, /no workspace box\.shell-team\.svc|not found/i);
  });

  test('a deleted API key is refused', async () => {
    const doomed = await aliceSession.mintKey('doomed');
    assert.equal((await ssh([host, 'true'], { client: doomed })).code, 0);
    assert.equal((await aliceSession.delete(`/me/api-keys/${doomed.auth.token!.slice(4, 40)}`)).status, 204);
    const refused = await ssh([host, 'true'], { client: doomed });
    assert.equal(refused.code, 255);
    assert.match(refused.stderr, /sign in|unauthenticated|API key/i);
  });

  test('a login name other than the workspace user\'s is refused', async () => {
    const ran = await ssh(['-l', 'root', host, 'true']);
    assert.equal(ran.code, 255);
    assert.match(ran.stderr, /Permission denied/);
  });

  test('a stopped workspace is refused with its state', async () => {
    const stopped = await alice.post(`/workspaces/${workspace}/stop`);
    assert.ok(stopped.status < 300, stopped.text);
    await until(async () => ((await alice.get(`/workspaces/${workspace}`)).body.state === 'stopped' ? true : undefined), 'stopped');
    const ran = await ssh([host, 'true']);
    assert.equal(ran.code, 255);
    assert.match(ran.stderr, /not running/i);
    assert.match(ran.stderr, /start it first/);
  });
});

describe('svc config-ssh', { skip }, () => {
  test('twice leaves one block with the workspace and the wildcard; --remove leaves none and the rest of the file', async () => {
    const own = 'Host example.org\n  User me\n';
    const config = await readFile(sshConfig(), 'utf8');
    await writeFile(sshConfig(), `${config}\n${own}`);
    assert.equal((await svc(alice, ['config-ssh'])).code, 0);
    const again = await readFile(sshConfig(), 'utf8');
    assert.equal(again.split('# --- START SVC ---').length, 2);
    assert.match(again, /^Host box\.shell-team\.svc\n {2}User ssh-alice$/m);
    assert.match(again, /^Host \*\.svc$/m);
    assert.ok(again.endsWith(own));
    const known = await readFile(path.join(home, '.config', 'svc', 'known_hosts'), 'utf8');
    assert.match(known, /^box\.shell-team\.svc ssh-ed25519 \S+\n$/);
    const removed = await svc(alice, ['config-ssh', '--remove']);
    assert.equal(removed.code, 0, removed.stderr);
    const left = await readFile(sshConfig(), 'utf8');
    assert.equal(left.includes('SVC'), false);
    assert.equal(left, own);
    assert.equal((await svc(alice, ['config-ssh'])).code, 0);
  });
});
