import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initdbScript, instanceDsn, postgresFailureReason, settingsChange, specErrors, startDecision, type PostgresInstanceSpec } from './postgres-rules.ts';

const spec: PostgresInstanceSpec = { id: 7, major: 16, database: 'app', user: 'app', password: 'a secret of length', uid: 20007, address: '10.214.0.9', port: 5432 };

test('an instance keeps the major its data directory was created with', () => {
  assert.deepEqual(startDecision(undefined, 16), { kind: 'initialise' });
  assert.deepEqual(startDecision('16\n', 16), { kind: 'start' });
  assert.deepEqual(startDecision('15\n', 16), {
    kind: 'refuse',
    reason: 'the data directory was created by PostgreSQL 15; it cannot be started with PostgreSQL 16',
  });
});

test('a spec is refused with every reason: major not installed, names that are not identifiers, root, bad address', () => {
  assert.deepEqual(specErrors(spec, [15, 16, 17]), []);
  assert.deepEqual(specErrors({ ...spec, major: 18, database: 'App; DROP', user: '1x', password: 'short', uid: 0, address: 'db; rm', port: 70000 }, [15, 16]), [
    'PostgreSQL 18 is not installed (installed: 15, 16; run scripts/setup-postgres.sh)',
    'the database name "App; DROP" is not a lower-case identifier of at most 63 characters',
    'the user name "1x" is not a lower-case identifier of at most 63 characters',
    'the password must have at least 8 characters and no line break',
    'the UID 0 is not an unprivileged user',
    'the listen address "db; rm" is not an IPv4 address',
    'the port 70000 is not a TCP port',
  ]);
  assert.deepEqual(specErrors({ ...spec, settings: { 'max_connections; rm': '1', port: '5433', max_connections: '50' } }, [16]), [
    '"max_connections; rm" is not a PostgreSQL setting name',
    'the setting port is set by svc',
  ]);
});

test('settings are set where they differ from what the cluster keeps and reset where the spec drops them', () => {
  assert.deepEqual(settingsChange({ max_connections: '100', work_mem: '4MB' }, { max_connections: '100', statement_timeout: '5000' }), {
    set: [['statement_timeout', '5000']],
    reset: ['work_mem'],
  });
  assert.deepEqual(settingsChange({}, {}), { set: [], reset: [] });
});

test('initdb gets the locale as one shell word, C.UTF-8 unless the spec names one', () => {
  assert.match(initdbScript(spec), / --locale=C\.UTF-8 /);
  assert.match(initdbScript({ ...spec, locale: 'en_US.UTF-8' }), / --locale=en_US\.UTF-8 /);
  assert.deepEqual(specErrors({ ...spec, locale: "C'; rm -rf /", extensions: ['pg_trgm', 'x y'] }, [16]), [
    `"C'; rm -rf /" is not a locale name`,
    '"x y" is not an extension name',
  ]);
});

test('the failure reason is what PostgreSQL marks fatal, with the address it could not bind', () => {
  const log = [
    '2026-11-24 23:43:19.442 UTC [2] LOG:  starting PostgreSQL 16.14 on x86_64-pc-linux-gnu',
    '2026-11-24 23:43:19.442 UTC [2] LOG:  could not bind IPv4 address "127.0.0.1": Address already in use',
    '2026-11-24 23:43:19.442 UTC [2] HINT:  Is another postmaster already running on port 45999?',
    '2026-11-24 23:43:19.442 UTC [2] FATAL:  could not create any TCP/IP sockets',
    '2026-11-24 23:43:19.444 UTC [2] LOG:  database system is shut down',
  ].join('\n');
  assert.equal(postgresFailureReason(log), 'could not bind IPv4 address "127.0.0.1": Address already in use; could not create any TCP/IP sockets');
  assert.equal(postgresFailureReason('bwrap: Can\'t find source path /x: No such file or directory\n'), 'bwrap: Can\'t find source path /x: No such file or directory');
  assert.equal(postgresFailureReason('something else\n'), 'something else');
  assert.equal(postgresFailureReason(''), undefined);
});

test('the DSN carries the password escaped', () => {
  assert.equal(instanceDsn({ ...spec, password: 'p@ss/word' }), 'postgres://app:p%40ss%2Fword@10.214.0.9:5432/app');
});
