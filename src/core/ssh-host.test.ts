import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSshHostName, sshHostName } from './ssh-host.ts';

test('a workspace\'s SSH name is <workspace>.<team>.svc, each one lowercase label', () => {
  assert.equal(sshHostName('Box', 'Shell Team'), 'box.shell-team.svc');
  assert.equal(sshHostName('api_v2', 'Ops & QA'), 'api-v2.ops-qa.svc');
});

test('the CLI reads its two labels back; other names are not svc\'s', () => {
  assert.deepEqual(parseSshHostName('box.shell-team.svc'), { workspace: 'box', team: 'shell-team' });
  assert.deepEqual(parseSshHostName('BOX.Shell-Team.svc'), { workspace: 'box', team: 'shell-team' });
  assert.equal(parseSshHostName('box'), undefined);
  assert.equal(parseSshHostName('a.b.c.svc'), undefined);
  assert.equal(parseSshHostName('box.team.example.org'), undefined);
});
