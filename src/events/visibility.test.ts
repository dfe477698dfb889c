import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchesTeamFilter, maySee, nobody, standingsToRefresh, type EventScope, type Standing } from './visibility.ts';

const ORG = '00000000-0000-4000-8000-000000000001';
const OTHER_ORG = '00000000-0000-4000-8000-000000000002';
const member: Standing = { userId: 7, isAdmin: false, teams: new Set([1, 2]), orgs: new Set([ORG]) };
const admin: Standing = { userId: 1, isAdmin: true, teams: new Set(), orgs: new Set() };
const scope = (type: string, ids: Partial<Omit<EventScope, 'type'>> = {}): EventScope => ({
  type,
  team_id: ids.team_id ?? null,
  org_id: ids.org_id ?? null,
  user_id: ids.user_id ?? null,
});

test('team events go to those who can view the team', () => {
  assert.equal(maySee(member, scope('team.updated', { team_id: 1 })), true);
  assert.equal(maySee(member, scope('workspace.updated', { team_id: 2 })), true);
  assert.equal(maySee(member, scope('workspace.updated', { team_id: 3 })), false);
  // An event of a team is not shown to org members outside the team.
  assert.equal(maySee(member, scope('team.created', { team_id: 3, org_id: ORG })), false);
});

test('organization events (no team) go to the members of the organization', () => {
  assert.equal(maySee(member, scope('org.updated', { org_id: ORG })), true);
  assert.equal(maySee(member, scope('members.updated', { org_id: OTHER_ORG })), false);
});

test('access.changed goes to its user only, administrators included', () => {
  assert.equal(maySee(member, scope('access.changed', { user_id: 7 })), true);
  assert.equal(maySee(member, scope('access.changed', { user_id: 8 })), false);
  assert.equal(maySee(admin, scope('access.changed', { user_id: 7 })), false);
  assert.equal(maySee(admin, scope('access.changed', { user_id: 1 })), true);
});

test('a user named on an event sees it besides the team (the creator of an operation, the offeree of a transfer)', () => {
  assert.equal(maySee(member, scope('operation.updated', { team_id: 9, user_id: 7 })), true);
  assert.equal(maySee(member, scope('operation.updated', { team_id: 9, user_id: 8 })), false);
  assert.equal(maySee(member, scope('operation.updated', { user_id: 7 })), true, 'an operation without a team');
  assert.equal(maySee(member, scope('owner_transfers.updated', { team_id: 9, user_id: 7 })), true);
});

test('administrators see every event of every team and organization', () => {
  for (const event of [scope('team.updated', { team_id: 99 }), scope('org.deleted', { org_id: OTHER_ORG }), scope('operation.updated', { user_id: 5 })]) {
    assert.equal(maySee(admin, event), true, event.type);
  }
});

test('a user without standing sees only what is addressed to them', () => {
  assert.equal(maySee(nobody(7), scope('team.updated', { team_id: 1 })), false);
  assert.equal(maySee(nobody(7), scope('org.updated', { org_id: ORG })), false);
  assert.equal(maySee(nobody(7), scope('access.changed', { user_id: 7 })), true);
  assert.equal(maySee(nobody(7), scope('mystery')), false);
});

test('the team filter passes only events of that team', () => {
  assert.equal(matchesTeamFilter(undefined, scope('org.updated', { org_id: ORG })), true);
  assert.equal(matchesTeamFilter(2, scope('team.updated', { team_id: 2 })), true);
  assert.equal(matchesTeamFilter(2, scope('team.updated', { team_id: 1 })), false);
  assert.equal(matchesTeamFilter(2, scope('access.changed', { user_id: 7 })), false);
});

test('access.changed refreshes its user; team.created the members of its organization', () => {
  const refresh = standingsToRefresh([
    scope('access.changed', { user_id: 7 }),
    scope('members.updated', { team_id: 1 }),
    scope('team.created', { team_id: 4, org_id: ORG }),
    scope('team.updated', { team_id: 4 }),
  ]);
  assert.deepEqual([...refresh.users], [7]);
  assert.deepEqual([...refresh.orgs], [ORG]);
});
