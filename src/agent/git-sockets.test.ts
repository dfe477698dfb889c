// The session's git sockets with the real clients: OpenSSH's ssh-add and ssh-keygen (signing through the agent) and
// git's credential-cache client, on this machine.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { generateSshKey } from '../git/ssh-key.ts';
import { credentialCacheAnswer, openGitSockets } from './git-sockets.ts';

const run = promisify(execFile);
const key = generateSshKey('dev@example.com');
const identity = { name: 'Dev One', email: 'dev@example.com', credentials: [{ host: 'git.example.com:8443', username: 'dev', password: 'tok-123' }], sshKey: key.privatePem };

test('the credential-cache answer: the credential of the asked host over http(s) only, for `get` only', () => {
  assert.equal(credentialCacheAnswer(identity, 'action=get\ntimeout=900\nprotocol=https\nhost=git.example.com:8443\n\n'), 'username=dev\npassword=tok-123\n');
  assert.equal(credentialCacheAnswer(identity, 'action=get\nprotocol=https\nhost=GIT.example.com:8443\n'), 'username=dev\npassword=tok-123\n');
  assert.equal(credentialCacheAnswer(identity, 'action=get\nprotocol=https\nhost=git.example.com\n'), '');
  assert.equal(credentialCacheAnswer(identity, 'action=store\nprotocol=https\nhost=git.example.com:8443\nusername=x\npassword=y\n'), '');
  assert.equal(credentialCacheAnswer(identity, 'action=get\nprotocol=ftp\nhost=git.example.com:8443\n'), '');
});

test('ssh-add lists the key, ssh-keygen signs through the agent, git credential fill gets the token; closing removes the sockets', async () => {
  const sockets = await openGitSockets(identity);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-git-sockets-test-'));
  try {
    const env = { PATH: process.env.PATH!, HOME: dir, ...sockets.env };
    assert.equal((await run('ssh-add', ['-L'], { env })).stdout.trim(), key.publicKey);
    await writeFile(path.join(dir, 'k.pub'), `${key.publicKey}\n`);
    await writeFile(path.join(dir, 'm'), 'hello\n');
    await run('ssh-keygen', ['-q', '-Y', 'sign', '-n', 'git', '-f', path.join(dir, 'k.pub'), path.join(dir, 'm')], { env });
    await writeFile(path.join(dir, 'signers'), `dev@example.com ${key.publicKey}\n`);
    const verified = await run('sh', ['-c', `ssh-keygen -Y verify -f signers -I dev@example.com -n git -s m.sig < m`], { env, cwd: dir });
    assert.match(verified.stdout + verified.stderr, /Good "git" signature for dev@example\.com/);
    const filled = await run('sh', ['-c', `printf 'protocol=https\\nhost=git.example.com:8443\\n\\n' | git credential fill`], { env: { ...env, GIT_TERMINAL_PROMPT: '0' } });
    assert.equal(filled.stdout, 'protocol=https\nhost=git.example.com:8443\nusername=dev\npassword=tok-123\n');
    assert.match((await run('git', ['var', 'GIT_COMMITTER_IDENT'], { env })).stdout, /^Dev One <dev@example\.com> /);
  } finally {
    await sockets.close();
    await rm(dir, { recursive: true, force: true });
  }
  await assert.rejects(stat(sockets.env.SSH_AUTH_SOCK));
});

test('without a key the agent lists nothing', async () => {
  const sockets = await openGitSockets({ ...identity, sshKey: undefined });
  try {
    const listed = (await run('ssh-add', ['-L'], { env: { PATH: process.env.PATH!, ...sockets.env } }).catch((error: unknown) => error)) as { code?: number; stdout: string };
    assert.equal(listed.code, 1);
    assert.match(listed.stdout, /The agent has no identities/);
  } finally {
    await sockets.close();
  }
});
