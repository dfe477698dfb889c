import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cloneFailureReason, cloneInput, cloneScript, localRepositoryPath } from './clone-plan.ts';

test('absolute paths and file:// URLs are repositories on this machine; other URLs are not', () => {
  assert.equal(localRepositoryPath('/srv/git/app.git'), '/srv/git/app.git');
  assert.equal(localRepositoryPath('/srv/git/../git/app.git'), '/srv/git/app.git');
  assert.equal(localRepositoryPath('file:///srv/git/my%20app.git'), '/srv/git/my app.git');
  assert.equal(localRepositoryPath('file://otherhost/srv/app.git'), undefined);
  assert.equal(localRepositoryPath('https://example.com/app.git'), undefined);
  assert.equal(localRepositoryPath('git@example.com:app.git'), undefined);
  assert.equal(localRepositoryPath('app.git'), undefined);
});

test('a local repository is trusted (bare, or its .git with a work tree) through a global config in the sandbox\'s /tmp, then cloned into /data/app', () => {
  assert.ok(
    cloneScript({ url: 'file:///srv/git/app.git' }).startsWith(
      'export GIT_CONFIG_GLOBAL=/tmp/svc-clone.gitconfig && git config --global --add safe.directory /srv/git/app.git && ' +
        'git config --global --add safe.directory /srv/git/app.git/.git && git -c advice.detachedHead=false clone -- file:///srv/git/app.git /data/app && ',
    ),
  );
  assert.ok(cloneScript({ url: 'https://example.com/app.git', ref: ' ' }).startsWith('git -c advice.detachedHead=false clone -- https://example.com/app.git /data/app && '));
});

test('without a ref, a remote HEAD that names no branch is settled after the clone; with a ref it is not looked at', () => {
  const script = cloneScript({ url: 'https://example.com/app.git' });
  assert.match(script, /rev-parse -q --verify HEAD/);
  assert.match(script, /checkout -q --track "origin\/\$branches"/);
  assert.doesNotMatch(cloneScript({ url: 'https://example.com/app.git', ref: 'main' }), /rev-parse/);
  assert.doesNotMatch(cloneScript({ url: 'https://example.com/app.git', ref: '3f2a9c1' }), /rev-parse/);
});

test('a branch or tag is cloned directly; a commit id is checked out after the clone', () => {
  assert.equal(
    cloneScript({ url: 'https://example.com/app.git', ref: 'release/1.2' }),
    'git -c advice.detachedHead=false clone --branch release/1.2 -- https://example.com/app.git /data/app',
  );
  assert.equal(
    cloneScript({ url: 'https://example.com/app.git', ref: '3f2a9c1' }),
    'git -c advice.detachedHead=false clone -- https://example.com/app.git /data/app && git -c advice.detachedHead=false -C /data/app checkout --detach 3f2a9c1',
  );
});

test('refs and URLs with shell characters stay single words', () => {
  assert.equal(
    cloneScript({ url: 'https://example.com/a.git', ref: "x'; rm -rf /" }),
    `git -c advice.detachedHead=false clone --branch 'x'\\''; rm -rf /' -- https://example.com/a.git /data/app`,
  );
});

test('the reason is git\'s last telling error line without its label', () => {
  assert.equal(cloneFailureReason("Cloning into '/data/app'...\nfatal: repository '/srv/nope.git' does not exist\n", 128), "repository '/srv/nope.git' does not exist");
  assert.equal(
    cloneFailureReason("Cloning into '/data/app'...\nwarning: Could not find remote branch nope to clone.\nfatal: Remote branch nope not found in upstream origin\n", 128),
    'Remote branch nope not found in upstream origin',
  );
  const dubious = "fatal: detected dubious ownership in repository at '/srv/a.git'\nhint: use safe.directory\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
  assert.equal(cloneFailureReason(dubious, 128), "detected dubious ownership in repository at '/srv/a.git'");
  assert.equal(cloneFailureReason("error: pathspec 'abc1234' did not match any file(s) known to git\n", 1), "pathspec 'abc1234' did not match any file(s) known to git");
  assert.equal(cloneFailureReason('bwrap: Can\'t find source path /srv/a.git: Permission denied\n', 1), "Can't find source path /srv/a.git: Permission denied");
  assert.equal(cloneFailureReason('', 128), 'git exited with code 128');
});

test('a credential reaches git through standard input and the environment only: the script names no secret', () => {
  const https = { url: 'https://git.example.com/app.git', credential: { kind: 'https' as const, host: 'git.example.com', username: 'alice', password: 's3cret-token' } };
  const script = cloneScript(https);
  assert.doesNotMatch(script, /s3cret-token|alice/);
  assert.match(script, /^\(umask 077 && cat > \/tmp\/svc-git-credential\) && export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=credential\.helper GIT_CONFIG_VALUE_0= /);
  assert.match(script, /grep -qxF host=git\.example\.com/);
  assert.equal(cloneInput(https), 'username=alice\npassword=s3cret-token\n');
  const ssh = { url: 'git@git.example.com:app.git', credential: { kind: 'ssh' as const, host: 'git.example.com', privateKeyFile: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n' } };
  assert.doesNotMatch(cloneScript(ssh), /OPENSSH|abc/);
  assert.match(cloneScript(ssh), /^mkdir -p -m 700 "\$HOME\/\.ssh" && /);
  assert.match(cloneScript(ssh), /GIT_SSH_COMMAND='ssh -o IdentitiesOnly=yes .* -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=~\/\.ssh\/known_hosts -i \/tmp\/svc-ssh-key'/);
  assert.equal(cloneInput(ssh), ssh.credential.privateKeyFile);
  const none = { url: 'git@git.example.com:app.git', credential: { kind: 'none' as const, host: 'git.example.com', transport: 'ssh' as const } };
  assert.doesNotMatch(cloneScript(none), /svc-ssh-key/);
  assert.match(cloneScript(none), /UserKnownHostsFile=~\/\.ssh\/known_hosts'/);
  assert.equal(cloneInput(none), undefined);
  assert.equal(cloneInput({ url: '/srv/app.git' }), undefined);
});
