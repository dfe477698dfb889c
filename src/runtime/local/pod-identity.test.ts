import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podHostName, podLoginName, podUserOf } from '../workspace-user.ts';
import { freeLogin, groupWithUser, passwdWithUser } from './pod-identity.ts';

test('the login name is the e-mail\'s local part made safe, else the name, else developer', () => {
  assert.equal(podLoginName('Ada.Lovelace+svc@example.com'), 'ada-lovelace');
  assert.equal(podLoginName('zoë_k@example.com'), 'zoe_k');
  assert.equal(podLoginName('42dev@example.com'), 'dev');
  assert.equal(podLoginName('123@example.com', 'Grace Hopper'), 'grace-hopper');
  assert.equal(podLoginName('@example.com', '***'), 'developer');
  assert.equal(podLoginName(`${'a'.repeat(40)}@example.com`).length, 32);
  assert.deepEqual(podUserOf('ada@example.com', 'Ada: Countess, of Lovelace'), { login: 'ada', fullName: 'Ada  Countess  of Lovelace' });
});

test('the host name is the workspace\'s name as one DNS label, ws-<id> when nothing is left', () => {
  assert.equal(podHostName('My App_2', 7), 'my-app-2');
  assert.equal(podHostName('---', 7), 'ws-7');
  assert.equal(podHostName(undefined, 7), 'ws-7');
});

test('passwd: the workspace UID\'s line replaces any other for it, never takes a name of the system', () => {
  const base = 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\nold:x:100001:0::/tmp:/bin/sh\n';
  const entry = { uid: 100001, user: { login: 'ada', fullName: 'Ada' }, home: '/data/home', shell: '/bin/bash' };
  assert.equal(passwdWithUser(base, entry), 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\nada:x:100001:0:Ada:/data/home:/bin/bash\n');
  assert.equal(freeLogin(base, 100001, 'root'), 'root2');
  assert.match(passwdWithUser(base, { ...entry, user: { login: 'root', fullName: 'R' } }), /^root:x:0:0:root:\/root:\/bin\/bash\n.*\nroot2:x:100001:0:R:\/data\/home:\/bin\/bash\n$/s);
  assert.equal(passwdWithUser('', entry), 'root:x:0:0:root:/root:/sbin/nologin\nada:x:100001:0:Ada:/data/home:/bin/bash\n');
});

test('group: a group of the person\'s name at the UID, and the person a member of group 0', () => {
  assert.equal(groupWithUser('root:x:0:\nstaff:x:50:\n', 100001, 'ada'), 'root:x:0:ada\nstaff:x:50:\nada:x:100001:\n');
  assert.equal(groupWithUser('root:x:0:admin\n', 100001, 'ada'), 'root:x:0:admin,ada\nada:x:100001:\n');
  assert.equal(groupWithUser('', 100001, 'ada'), 'root:x:0:ada\nada:x:100001:\n');
});
