import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAuthenticationFailure, cloneAuthenticationReason } from './clone-failure.ts';
import { gitRemoteOf, hasSecretInUrl, normalizeGitHost } from './hosts.ts';

test('the host of a clone URL: https, ssh://, scp-like, git://, local', () => {
  assert.deepEqual(gitRemoteOf('https://GitHub.com/acme/app.git'), { transport: 'https', host: 'github.com', user: undefined });
  assert.deepEqual(gitRemoteOf('http://127.0.0.1:8080/repo.git'), { transport: 'https', host: '127.0.0.1:8080', user: undefined });
  assert.deepEqual(gitRemoteOf('ssh://git@git.example.com:2222/acme/app.git'), { transport: 'ssh', host: 'git.example.com:2222', user: 'git' });
  assert.deepEqual(gitRemoteOf('git@github.com:acme/app.git'), { transport: 'ssh', host: 'github.com', user: 'git' });
  assert.equal(gitRemoteOf('git://example.com/app.git').transport, 'git');
  assert.equal(gitRemoteOf('/srv/git/app.git').transport, 'local');
  assert.equal(gitRemoteOf('file:///srv/git/app.git').transport, 'local');
});

test('hosts as credentials are stored for them: lowercase host[:port]; anything else refused', () => {
  assert.equal(normalizeGitHost('GitHub.com'), 'github.com');
  assert.equal(normalizeGitHost('git.example.com:8443'), 'git.example.com:8443');
  for (const bad of ['https://github.com', 'a..b', 'host:0', 'host:70000', 'a b', '']) assert.equal(normalizeGitHost(bad), undefined, bad);
});

test('a token or password written into an https URL is found', () => {
  assert.equal(hasSecretInUrl('https://ghp_abc@github.com/acme/app.git'), true);
  assert.equal(hasSecretInUrl('https://user:pw@git.example.com/app.git'), true);
  assert.equal(hasSecretInUrl('https://github_pat_11ABC@github.com/acme/app.git'), true);
  assert.equal(hasSecretInUrl('https://oauth2:glpat-xyz@gitlab.com/acme/app.git'), true);
  assert.equal(hasSecretInUrl('https://me@bitbucket.org/acme/app.git'), false);
  assert.equal(hasSecretInUrl('https://github.com/acme/app.git'), false);
  assert.equal(hasSecretInUrl('ssh://git@github.com/acme/app.git'), false);
  assert.equal(hasSecretInUrl('git@github.com:acme/app.git'), false);
});

test('an authentication failure names the host and whether a credential was missing or refused', () => {
  const stderr = "fatal: could not read Username for 'https://github.com': terminal prompts disabled\n";
  assert.equal(isAuthenticationFailure(stderr), true);
  assert.equal(isAuthenticationFailure('fatal: Remote branch nope not found in upstream origin'), false);
  const reason = "could not read Username for 'https://github.com': terminal prompts disabled";
  assert.match(cloneAuthenticationReason(reason, stderr, { kind: 'none', host: 'github.com', transport: 'https' }), /^github\.com asked for a credential and you have none stored for github\.com/);
  assert.match(cloneAuthenticationReason('Authentication failed', 'fatal: Authentication failed', { kind: 'https', host: 'github.com', username: 'x', password: 'p' }), /^github\.com refused your git credential for github\.com \(user x\)/);
  assert.match(cloneAuthenticationReason('x', 'git@h: Permission denied (publickey).', { kind: 'ssh', host: 'h', privateKeyFile: 'k' }), /^h refused your SSH key/);
  assert.equal(cloneAuthenticationReason('Remote branch nope not found', 'fatal: Remote branch nope not found', { kind: 'none', host: 'h', transport: 'https' }), 'Remote branch nope not found');
  assert.equal(cloneAuthenticationReason('reason', stderr, undefined), 'reason');
});
