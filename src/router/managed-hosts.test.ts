// Managed-service hosts: which names are ms hosts, and which page each status of an instance gets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostTarget } from './hosts.ts';
import { managedStatusPage } from './managed-hosts.ts';
import { routerPages } from './pages.ts';

test('ms-<number> under the workspace domain is a managed-service host; other spellings are nothing', () => {
  const target = (host: string) => hostTarget(host, 'localhost', '127.0.0.1');
  assert.deepEqual(target('ms-12.localhost'), { kind: 'managed', number: 12 });
  assert.deepEqual(target('MS-12.localhost:8080'), { kind: 'managed', number: 12 });
  for (const host of ['ms-012.localhost', 'ms-0.localhost', 'ms-.localhost', 'ms-12-80.localhost', 'ms-99999999999.localhost', 'ms-2147483648.localhost']) {
    assert.deepEqual(target(host), { kind: 'unknown-workspace-host' }, host);
  }
  assert.deepEqual(target('ms-12.example.com'), { kind: 'console' });
});

test('a paused instance says so, a starting one asks to wait, a gone one is nothing, an unknown one did not answer', () => {
  const page = (status: Parameters<typeof managedStatusPage>[0]) => {
    const name = managedStatusPage(status);
    return name && `${routerPages[name].status} ${routerPages[name].title}`;
  };
  assert.equal(page('synchronized'), undefined);
  assert.equal(page('paused'), '503 This managed service is paused');
  assert.equal(page('pausing'), '503 This managed service is paused');
  for (const status of ['creating', 'unpausing', 'updating'] as const) assert.equal(page(status), '503 This service is starting');
  for (const status of ['deleting', 'deleted'] as const) assert.equal(page(status), '404 Nothing here');
  for (const status of ['unknown', 'invalid-provider'] as const) assert.equal(page(status), '502 The managed service did not answer');
});
