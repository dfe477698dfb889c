import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  orgPermissionNames,
  orgPermissions,
  orgRolePermissions,
  teamPermissionNames,
  teamPermissions,
  teamRolePermissions,
} from './permissions.ts';

test('nobody without a role sees anything; administrators hold every permission', () => {
  assert.deepEqual(orgPermissions({ isAdmin: false }), []);
  assert.deepEqual(teamPermissions({ isAdmin: false }), []);
  assert.deepEqual(orgPermissions({ isAdmin: true }), [...orgPermissionNames]);
  assert.deepEqual(teamPermissions({ isAdmin: true }), [...teamPermissionNames]);
});

test('org owners act as admins of every team of their org; org members get nothing on teams by that', () => {
  assert.deepEqual(teamPermissions({ isAdmin: false, orgRole: 'owner' }), [...teamPermissionNames]);
  assert.deepEqual(teamPermissions({ isAdmin: false, orgRole: 'member' }), []);
  assert.deepEqual(teamPermissions({ isAdmin: false, orgRole: 'member', teamRole: 'viewer' }), [...teamRolePermissions.viewer]);
});

test('each team role holds the one below it', () => {
  for (const p of teamRolePermissions.viewer) assert.ok(teamRolePermissions.developer.includes(p));
  for (const p of teamRolePermissions.developer) assert.ok(teamRolePermissions.admin.includes(p));
});

test('docs/permissions.md lists every permission with the roles that hold it', () => {
  const doc = readFileSync(new URL('../../docs/permissions.md', import.meta.url), 'utf8');
  const rowOf = (name: string) => doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
  for (const name of teamPermissionNames) {
    const cells = rowOf(name)?.split('|').map((c) => c.trim());
    assert.ok(cells, `${name} documented`);
    assert.deepEqual(
      [cells[2] === '✓', cells[3] === '✓', cells[4] === '✓'],
      (['admin', 'developer', 'viewer'] as const).map((role) => teamRolePermissions[role].includes(name)),
      name,
    );
  }
  for (const name of orgPermissionNames) {
    const cells = rowOf(name)?.split('|').map((c) => c.trim());
    assert.ok(cells, `${name} documented`);
    assert.deepEqual(
      [cells[2] === '✓', cells[3] === '✓'],
      (['owner', 'member'] as const).map((role) => orgRolePermissions[role].includes(name)),
      name,
    );
  }
  assert.ok(rowOf('platform.admin'));
});
