// Which errors mean "PostgreSQL is down": pg's, PostgreSQL's and the socket's, and only for the database's address.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseAddress, isDatabaseUnavailable } from './availability.ts';

const at = databaseAddress('postgres://svc:secret@127.0.0.1:6543/svc');

/** An error like the ones pg and Node make: a message and fields. */
function failure(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

test('the address of a postgres URL: host and port, PostgreSQL defaults, a Unix socket directory', () => {
  assert.deepEqual(at, { host: '127.0.0.1', port: 6543 });
  assert.deepEqual(databaseAddress('postgres://db.internal/svc'), { host: 'db.internal', port: 5432 });
  assert.deepEqual(databaseAddress('postgres://[::1]:7000/svc'), { host: '::1', port: 7000 });
  assert.deepEqual(databaseAddress('postgres://svc@/svc?host=/var/run/postgresql'), { host: '/var/run/postgresql', port: 5432 });
});

test('PostgreSQL shutting down, starting, out of connections or a connection exception is the database unavailable', () => {
  for (const code of ['57P01', '57P02', '57P03', '53300', '08006', '08001', '08P01']) {
    assert.equal(isDatabaseUnavailable(failure('terminating connection', { code, severity: 'FATAL' }), at), true, code);
  }
  // Other PostgreSQL errors are faults of svc (or handled where they happen).
  for (const code of ['23505', '42P01', '40001', '57014']) {
    assert.equal(isDatabaseUnavailable(failure('error', { code, severity: 'ERROR' }), at), false, code);
  }
});

test("pg's own words for a lost or late connection are the database unavailable", () => {
  for (const message of [
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
  ]) {
    assert.equal(isDatabaseUnavailable(failure(message), at), true, message);
  }
  assert.equal(isDatabaseUnavailable(failure('Cannot read properties of undefined'), at), false);
});

test("a refused or unreachable connection is the database's only at its address; a reset names none", () => {
  const refused = failure('connect ECONNREFUSED 127.0.0.1:6543', { code: 'ECONNREFUSED', address: '127.0.0.1', port: 6543, syscall: 'connect' });
  assert.equal(isDatabaseUnavailable(refused, at), true);
  assert.equal(isDatabaseUnavailable({ ...refused, port: 8080, code: 'ECONNREFUSED' }, at), false, 'another service refused');
  assert.equal(isDatabaseUnavailable(failure('connect EHOSTUNREACH', { code: 'EHOSTUNREACH', address: '10.0.0.9', port: 6543 }), at), true);
  assert.equal(isDatabaseUnavailable(failure('read ECONNRESET', { code: 'ECONNRESET', syscall: 'read' }), at), true);
  assert.equal(isDatabaseUnavailable(failure('read ECONNRESET', { code: 'ECONNRESET', address: '10.0.0.9', port: 443 }), at), false);
  const named = databaseAddress('postgres://db.internal/svc');
  assert.equal(isDatabaseUnavailable(failure('getaddrinfo ENOTFOUND db.internal', { code: 'ENOTFOUND', hostname: 'db.internal' }), named), true);
  assert.equal(isDatabaseUnavailable(failure('getaddrinfo ENOTFOUND registry.example', { code: 'ENOTFOUND', hostname: 'registry.example' }), named), false);
  const socket = databaseAddress('postgres://svc@/svc?host=/run/postgresql');
  assert.equal(isDatabaseUnavailable(failure('connect ENOENT', { code: 'ENOENT', address: '/run/postgresql/.s.PGSQL.5432' }), socket), true);
  assert.equal(isDatabaseUnavailable(failure('open ENOENT', { code: 'ENOENT', path: '/data/x' }), socket), false);
});

test('an AggregateError of the attempts, or an error caused by one, counts by what it holds', () => {
  const attempts = [
    failure('connect ECONNREFUSED ::1:6543', { code: 'ECONNREFUSED', address: '::1', port: 6543 }),
    failure('connect ECONNREFUSED 127.0.0.1:6543', { code: 'ECONNREFUSED', address: '127.0.0.1', port: 6543 }),
  ];
  assert.equal(isDatabaseUnavailable(Object.assign(new AggregateError(attempts), { code: 'ECONNREFUSED' }), at), true);
  assert.equal(isDatabaseUnavailable(new Error('listing failed', { cause: failure('Connection terminated unexpectedly') }), at), true);
  assert.equal(isDatabaseUnavailable(new Error('listing failed', { cause: new Error('bug') }), at), false);
  assert.equal(isDatabaseUnavailable('Connection terminated', at), false, 'not an error object');
  assert.equal(isDatabaseUnavailable(null, at), false);
});
