import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { allProblemNames, problem } from './problems.ts';

test('a problem renders as RFC 9457 with a urn:svc:problem type', () => {
  const body = problem('name-taken', 409, 'Taken.', { extra: { held_by_deleted: { workspaces: 1 } } }).toBody('/api/v1/orgs');
  assert.deepEqual(body, {
    type: 'urn:svc:problem:name-taken',
    title: 'Name already taken',
    status: 409,
    detail: 'Taken.',
    instance: '/api/v1/orgs',
    held_by_deleted: { workspaces: 1 },
  });
});

test('docs/problems.md lists every problem type, and only those', () => {
  const doc = readFileSync(new URL('../../docs/problems.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `([a-z-]+)` \| \d{3}[^|]*\|/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), [...allProblemNames()].sort());
});
