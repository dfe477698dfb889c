// A user's git credentials through the real server: HTTPS credentials per host (add, replace, list without the
// secret, remove; bad input), the SSH key pair (made, shown as its public half, rotated; a key file OpenSSH's
// ssh-keygen reads), sealed in the database, only the owner's own, the CLI, and the audit log.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../src/core/secret-box.ts';
import { cloneCredentialFor } from '../src/git/credentials.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { runSvc, startSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let alice: ApiClient;
let bob: ApiClient;
let aliceId: number;
let bobId: number;
let configHome: string;
let secrets: SecretBox;

before(async () => {
  server = await startTestServer();
  const [a, b] = await Promise.all(['gitcred-alice', 'gitcred-bob'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [alice, bob] = [a.key, b.key];
  [aliceId, bobId] = [a.id, b.id];
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-git-'));
  secrets = new SecretBox(Buffer.from((await readFile(path.join(server.server.config.dataDir, 'secrets.key'), 'utf8')).trim(), 'base64'));
});
after(async () => {
  await server?.close();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

const pool = () => server.server.database.pool;

describe('HTTPS credentials', () => {
  test('added (201), replaced (200), listed without the secret, each user only their own', async () => {
    const added = await alice.post('/me/git-credentials', { host: 'GitHub.com', password: 'ghp_first-token' });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual(Object.keys(added.body).sort(), ['created_at', 'host', 'updated_at', 'username']);
    assert.deepEqual([added.body.host, added.body.username], ['github.com', 'x-access-token']);
    const replaced = await alice.post('/me/git-credentials', { host: 'github.com', password: 'ghp_second-token' });
    assert.equal(replaced.status, 200);
    assert.equal((await alice.post('/me/git-credentials', { host: 'git.example.com:8443', username: 'alice', password: 'self-hosted-pw' })).status, 201);
    const listed = await alice.get('/me/git-credentials');
    assert.deepEqual(listed.body.items.map((c: { host: string; username: string }) => [c.host, c.username]), [['git.example.com:8443', 'alice'], ['github.com', 'x-access-token']]);
    assert.doesNotMatch(listed.text, /ghp_|self-hosted-pw/);
    assert.deepEqual((await bob.get('/me/git-credentials')).body.items, []);
    assertProblem(await bob.delete('/me/git-credentials/github.com'), 404, 'not-found');
  });

  test('sealed in the database, opened only for its user and host', async () => {
    const rows = (await pool().query('SELECT * FROM user_git_credentials WHERE user_id = $1', [aliceId])).rows;
    assert.equal(rows.length, 2);
    for (const row of rows) assert.doesNotMatch(JSON.stringify(row) + row.ciphertext.toString('latin1'), /second-token|self-hosted-pw/);
    assert.deepEqual(await cloneCredentialFor(pool(), secrets, aliceId, 'https://github.com/acme/app.git'), { kind: 'https', host: 'github.com', username: 'x-access-token', password: 'ghp_second-token' });
    assert.deepEqual(await cloneCredentialFor(pool(), secrets, bobId, 'https://github.com/acme/app.git'), { kind: 'none', host: 'github.com', transport: 'https' });
    assert.equal(await cloneCredentialFor(pool(), secrets, aliceId, '/srv/git/app.git'), undefined);
    // a row moved to another user does not open
    await pool().query(`INSERT INTO user_git_credentials SELECT $1, host, username, nonce, ciphertext, tag, key_id, created_at, updated_at FROM user_git_credentials WHERE user_id = $2 AND host = 'github.com'`, [bobId, aliceId]);
    await assert.rejects(cloneCredentialFor(pool(), secrets, bobId, 'https://github.com/acme/app.git'));
    await pool().query('DELETE FROM user_git_credentials WHERE user_id = $1', [bobId]);
  });

  test('bad hosts, usernames with a colon, empty or multi-line tokens are refused with the field', async () => {
    for (const [body, pointer] of [
      [{ host: 'https://github.com', password: 'y' }, '/host'],
      [{ host: 'a..b', password: 'y' }, '/host'],
      [{ host: 'github.com', username: 'a:b', password: 'y' }, '/username'],
      [{ host: 'github.com', password: '' }, '/password'],
      [{ host: 'github.com', password: 'a\nb' }, '/password'],
      [{ host: 'github.com' }, '/password'],
      [{ host: 'github.com', password: 'y', extra: 1 }, '/extra'],
    ] as const) {
      const answer = await alice.post('/me/git-credentials', body);
      assertProblem(answer, 422, 'validation');
      assert.ok(answer.body.errors.some((e: { pointer: string }) => e.pointer === pointer), `${JSON.stringify(body)}: ${answer.text}`);
    }
    assertProblem(await alice.delete('/me/git-credentials/a..b'), 422, 'validation');
  });

  test('removed (204), then 404; each change in the audit log without the secret', async () => {
    assert.equal((await alice.delete('/me/git-credentials/git.example.com:8443')).status, 204);
    assertProblem(await alice.delete('/me/git-credentials/git.example.com:8443'), 404, 'not-found');
    const audit = (await pool().query(`SELECT action, target, outcome FROM audit_log WHERE actor_id = $1 AND action LIKE 'git_credential.%' ORDER BY id`, [aliceId])).rows;
    assert.deepEqual(audit.map((r) => [r.action, r.target, r.outcome]).slice(0, 4), [
      ['git_credential.set', '/me/git-credentials/github.com', 201],
      ['git_credential.set', '/me/git-credentials/github.com', 200],
      ['git_credential.set', '/me/git-credentials/git.example.com:8443', 201],
      ['git_credential.set', '/me/git-credentials', 422],
    ]);
    assert.ok(audit.some((r) => r.action === 'git_credential.delete' && r.outcome === 204));
  });
});

describe('the SSH key', () => {
  test('404 until made; made (201) as ed25519 with the e-mail; rotated (200) to another; the private key opens as an OpenSSH key file', async () => {
    assertProblem(await bob.get('/me/ssh-key'), 404, 'not-found');
    const made = await bob.post('/me/ssh-key');
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(Object.keys(made.body).sort(), ['created_at', 'fingerprint', 'public_key']);
    assert.match(made.body.public_key, /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/]+=* gitcred-bob@example\.com$/);
    assert.deepEqual((await bob.get('/me/ssh-key')).body, made.body);
    const credential = await cloneCredentialFor(pool(), secrets, bobId, 'git@git.example.com:acme/app.git');
    assert.equal(credential?.kind, 'ssh');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-sshkey-'));
    try {
      const file = path.join(dir, 'id');
      await writeFile(file, credential!.kind === 'ssh' ? credential!.privateKeyFile : '');
      await chmod(file, 0o600);
      const derived = (await promisify(execFile)('ssh-keygen', ['-y', '-f', file])).stdout.trim();
      assert.equal(derived, made.body.public_key);
      const fingerprint = (await promisify(execFile)('ssh-keygen', ['-l', '-f', file])).stdout;
      assert.ok(fingerprint.includes(made.body.fingerprint), fingerprint);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const row = (await pool().query('SELECT * FROM user_ssh_keys WHERE user_id = $1', [bobId])).rows[0];
    assert.doesNotMatch(row.ciphertext.toString('latin1'), /PRIVATE KEY/);
    const rotated = await bob.post('/me/ssh-key');
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.public_key, made.body.public_key);
    assert.notEqual(rotated.body.fingerprint, made.body.fingerprint);
    assertProblem(await alice.get('/me/ssh-key'), 404, 'not-found');
    const audit = (await pool().query(`SELECT outcome FROM audit_log WHERE actor_id = $1 AND action = 'ssh_key.rotate' ORDER BY id`, [bobId])).rows;
    assert.deepEqual(audit.map((r) => r.outcome), [201, 200]);
  });
});

describe('the CLI', () => {
  const env = () => ({ XDG_CONFIG_HOME: configHome, SVC_URL: server.url, SVC_TOKEN: alice.auth.token });

  test('svc git-credentials add reads the token from stdin; list; rm; svc ssh-key show makes then shows; rotate', async () => {
    const adding = startSvc(['git-credentials', 'add', 'git.example.org', '--username', 'alice'], env());
    adding.child.stdin.end('cli-secret-pw\n');
    assert.equal(await adding.exited, 0, adding.stderr());
    assert.equal(adding.stdout(), 'Added your git credential for git.example.org (user alice).\n');
    const listed = await runSvc(['git-credentials', 'list'], env());
    assert.match(listed.stdout, /^HOST\s+USERNAME\s+UPDATED\n(.*\n)*git\.example\.org\s+alice\s+\d{4}-/);
    assert.doesNotMatch(listed.stdout + listed.stderr, /cli-secret-pw/);
    const removed = await runSvc(['git-credentials', 'rm', 'git.example.org', '--json'], env());
    assert.deepEqual(JSON.parse(removed.stdout), { host: 'git.example.org', deleted: true });
    const again = await runSvc(['git-credentials', 'rm', 'git.example.org'], env());
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Not found/);

    const first = await runSvc(['ssh-key', 'show'], env());
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^Made your SSH key\.\n.*\n\nssh-ed25519 \S+ gitcred-alice@example\.com\n\nFingerprint SHA256:/);
    const shown = await runSvc(['ssh-key', 'show', '--json'], env());
    const key = JSON.parse(shown.stdout);
    assert.ok(first.stdout.includes(key.public_key));
    const rotated = await runSvc(['ssh-key', 'rotate', '--json'], env());
    assert.notEqual(JSON.parse(rotated.stdout).public_key, key.public_key);
  });
});
