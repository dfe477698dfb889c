// Profiles: svc.<profile>.yml files next to svc.yml.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Problem } from '../core/problems.ts';
import { isProfileName, profileFileName, profileOfFileName, profilesInDirectory } from './profiles.ts';

test('profile names are lowercase words with dashes, 1 to 32 characters', () => {
  for (const name of ['dev', 'ci', 'staging-2', '0', 'a'.repeat(32)]) assert.ok(isProfileName(name), name);
  for (const name of ['', 'Dev', '-dev', 'dev-', 'a.b', 'a/b', 'a_b', 'a'.repeat(33), 'dev yml']) assert.ok(!isProfileName(name), name);
});

test('a profile maps to its file name and back', () => {
  assert.equal(profileFileName(null), 'svc.yml');
  assert.equal(profileFileName(undefined), 'svc.yml');
  assert.equal(profileFileName('ci'), 'svc.ci.yml');
  assert.equal(profileOfFileName('svc.yml'), null);
  assert.equal(profileOfFileName('svc.ci.yml'), 'ci');
  for (const name of ['svc.yaml', 'svc.CI.yml', 'svc.a.b.yml', 'other.yml', 'svc..yml', 'dir/svc.ci.yml']) assert.equal(profileOfFileName(name), undefined, name);
});

test('a bad profile name is a validation problem', () => {
  assert.throws(() => profileFileName('../etc'), (error: unknown) => error instanceof Problem && error.status === 422 && error.errors?.[0].pointer === '/profile');
});

test('the profiles of a directory are found among its files, sorted', () => {
  assert.deepEqual(profilesInDirectory(['svc.yml', 'svc.prod.yml', 'README.md', 'svc.ci.yml', 'svc.Bad.yml']), ['ci', 'prod']);
});
