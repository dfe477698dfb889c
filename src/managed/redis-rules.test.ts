import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendonlyAtStart, configString, isRdbHeader, redisConfig, redisFailureReason, redisMajorOf, settingsNeedingRestart, specErrors, type RedisInstanceSpec } from './redis-rules.ts';

const spec: RedisInstanceSpec = { id: 3, major: 7, password: 'p@ss "word"\\', uid: 61003, address: '10.0.0.5', port: 6379 };

test('redis.conf holds the password with every byte escaped, the plan as maxmemory and maxclients, and no other way in', () => {
  const text = redisConfig({ ...spec, maxmemoryMiB: 256, maxclients: 1000, maxmemoryPolicy: 'allkeys-lru', databases: 4 }, false);
  assert.match(text, /^bind 10\.0\.0\.5$/m);
  assert.match(text, /^maxmemory 256mb$/m);
  assert.match(text, /^maxclients 1000$/m);
  assert.match(text, /^maxmemory-policy allkeys-lru$/m);
  assert.match(text, /^databases 4$/m);
  assert.match(text, /^appendonly no$/m);
  assert.match(text, /^shutdown-on-sigterm save$/m);
  assert.ok(!text.includes('p@ss'), 'the password appears only escaped');
  assert.equal(configString('a"é'), '"\\x61\\x22\\xc3\\xa9"');
  assert.match(redisConfig(spec, true), /^appendonly yes$/m);
  assert.match(redisConfig(spec, true), /^maxmemory 0$/m, 'no plan: no limit');
});

test('the AOF is trusted at a start only when the file asks for it and it exists; a stale one is removed', () => {
  assert.deepEqual(appendonlyAtStart(true, true), { appendonly: true, removeAof: false, switchOnLive: false });
  assert.deepEqual(appendonlyAtStart(true, false), { appendonly: false, removeAof: false, switchOnLive: true });
  assert.deepEqual(appendonlyAtStart(false, true), { appendonly: false, removeAof: true, switchOnLive: false });
  assert.deepEqual(appendonlyAtStart(false, false), { appendonly: false, removeAof: false, switchOnLive: false });
});

test('a spec is refused with every reason at once', () => {
  assert.deepEqual(specErrors(spec, 7), []);
  assert.deepEqual(specErrors({ ...spec, major: 8, password: 'short', address: 'db', maxclients: 0, maxmemoryPolicy: 'lru' }, 7), [
    'Redis 8 is not installed (installed: Redis 7)',
    'the password must have at least 8 characters and no line break',
    'the listen address "db" is not an IPv4 address',
    'maxclients 0 is not an integer from 1 to 100000',
    '"lru" is not a maxmemory-policy',
  ]);
  assert.match(specErrors(spec, undefined)[0], /^redis-server is not installed/);
  assert.equal(redisMajorOf('Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64'), 7);
  assert.deepEqual(settingsNeedingRestart({ databases: '16' }, { databases: '4' }), ['databases']);
  assert.deepEqual(settingsNeedingRestart({ databases: '4' }, { databases: '4' }), []);
});

test("the reason a server did not start is Redis's own line, never a quoted configuration line", () => {
  const bind = [
    '2:C 25 Nov 2026 00:49:22.606 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo',
    '2:M 25 Nov 2026 00:49:22.618 # WARNING Memory overcommit must be enabled!',
    '2:M 25 Nov 2026 00:49:22.620 # Warning: Could not create server TCP listening socket 127.0.0.1:6379: bind: Address already in use',
    '2:M 25 Nov 2026 00:49:22.620 # Failed listening on port 6379 (TCP), aborting.',
  ].join('\n');
  assert.equal(redisFailureReason(bind), 'Warning: Could not create server TCP listening socket 127.0.0.1:6379: bind: Address already in use; Failed listening on port 6379 (TCP), aborting.');
  const config = "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 21\n>>> 'requirepass \"secret\" x'\nwrong number of arguments\n";
  assert.equal(redisFailureReason(config), 'Reading the configuration file, at line 21; wrong number of arguments');
  assert.equal(redisFailureReason('something else\n'), 'something else');
  assert.equal(redisFailureReason(''), undefined);
  assert.ok(isRdbHeader(Buffer.from('REDIS0010')) && !isRdbHeader(Buffer.from('PGDMP')));
});
