import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProviderSettings } from './provider-settings.ts';
import { claimValues, desiredRoles, matchingRules, roleChanges } from './role-rules.ts';

const [corp] = parseProviderSettings(
  `- id: corp
  issuer: https://sso.example
  clientId: svc
  clientSecretEnv: CORP_SECRET
  allowedDomains: [Corp.Example]
  roleRules:
    - { name: admins, value: platform-admins, platformAdmin: true }
    - { name: devs, value: devs, team: Acme/Core }
    - { name: leads, value: leads, team: 7, role: admin }
    - { name: owners, claim: roles, value: owner, org: Acme, role: owner }
`,
  { CORP_SECRET: 's3cret' },
);

test('settings: defaults, the secret from the environment, domains in lower case', () => {
  assert.equal(corp.clientSecret, 's3cret');
  assert.deepEqual(corp.scopes, ['openid', 'email', 'profile']);
  assert.deepEqual(corp.allowedDomains, ['corp.example']);
  assert.equal(corp.name, 'corp');
  assert.deepEqual(corp.roleRules[1].grant, { kind: 'team', team: 'Acme/Core', role: 'developer' });
  assert.equal(corp.roleRules[3].claim, 'roles');
});

test('settings that break a rule are refused naming the provider and the rule', () => {
  const refused = (text: string, message: RegExp) => assert.throws(() => parseProviderSettings(text, {}), message);
  refused('{}', /must be a list of providers/);
  refused('[{"id":"a","issuer":"http://sso.example","clientId":"x"}]', /issuer must be https:\/\/ \(http:\/\/ only on loopback\)/);
  refused('[{"id":"a","issuer":"https://s","clientId":"x","clientSecretEnv":"NOPE"}]', /provider a: the environment variable NOPE/);
  refused('[{"id":"a","issuer":"https://s","clientId":"x","roleRules":[{"name":"r","value":"v","team":"no-slash"}]}]', /provider a roleRules 1: team is a team id/);
  refused('[{"id":"a","issuer":"https://s","clientId":"x","roleRules":[{"name":"r","value":"v","platformAdmin":true,"team":1}]}]', /exactly one of/);
  refused('[{"id":"a","issuer":"https://s","clientId":"x"},{"id":"a","issuer":"https://t","clientId":"y"}]', /provider a: id is used twice/);
  refused('[{"id":"a","issuer":"https://s","clientId":"x","secret":"y"}]', /unknown key "secret"/);
});

test('claims: a string or a list of strings', () => {
  assert.deepEqual(claimValues({ groups: 'devs' }, 'groups'), ['devs']);
  assert.deepEqual(claimValues({ groups: ['devs', 3] }, 'groups'), ['devs']);
  assert.deepEqual(claimValues({}, 'groups'), []);
  assert.deepEqual(matchingRules(corp.roleRules, { groups: ['devs', 'leads'], roles: 'owner' }).map((r) => r.name), ['devs', 'leads', 'owners']);
});

const teams = new Map<number | string, { id: number; org_id: string }>([['Acme/Core', { id: 5, org_id: 'o1' }], [7, { id: 7, org_id: 'o1' }]]);
const orgs = new Map([['Acme', 'o1']]);

test('the higher team role wins; a team role brings its org; unknown teams give nothing', () => {
  const desired = desiredRoles('corp', matchingRules(corp.roleRules, { groups: ['devs', 'leads'] }), teams, orgs);
  assert.deepEqual([...desired.teams], [[5, { orgId: 'o1', role: 'developer', source: 'oidc:corp:devs' }], [7, { orgId: 'o1', role: 'admin', source: 'oidc:corp:leads' }]]);
  assert.deepEqual([...desired.orgs], [['o1', { role: 'member', source: 'oidc:corp:devs' }]]);
  assert.equal(desiredRoles('corp', matchingRules(corp.roleRules, { groups: ['devs'] }), new Map(), orgs).teams.size, 0);
});

test('changes: added, taken away, and hand-given roles left alone', () => {
  const desired = desiredRoles('corp', matchingRules(corp.roleRules, { groups: ['devs'] }), teams, orgs);
  const current = {
    admin: { isAdmin: true, source: 'oidc:corp:admins' },
    teams: [
      { team_id: 7, org_id: 'o1', role: 'admin' as const, source: 'oidc:corp:leads' },
      { team_id: 9, org_id: 'o2', role: 'viewer' as const, source: 'manual' },
    ],
    orgs: [{ org_id: 'o2', role: 'member' as const, source: 'manual' }],
  };
  assert.deepEqual(roleChanges('corp', current, desired), [
    { kind: 'admin', grant: false, source: 'oidc:corp:admins' },
    { kind: 'org', orgId: 'o1', role: 'member', source: 'oidc:corp:devs' },
    { kind: 'team', teamId: 5, orgId: 'o1', role: 'developer', source: 'oidc:corp:devs' },
    { kind: 'team', teamId: 7, orgId: 'o1', role: null, source: 'oidc:corp:leads' },
  ]);
  // A hand-given role on the rule's team stays as it is; another provider's rules are not this one's to take.
  const manual = { admin: { isAdmin: true, source: null }, teams: [{ team_id: 5, org_id: 'o1', role: 'viewer' as const, source: 'manual' }], orgs: [{ org_id: 'o1', role: 'member' as const, source: 'manual' }] };
  assert.deepEqual(roleChanges('corp', manual, desired), []);
  const other = { admin: { isAdmin: true, source: 'oidc:partner:a' }, teams: [], orgs: [] };
  assert.deepEqual(roleChanges('corp', other, desiredRoles('corp', [], teams, orgs)), []);
});
