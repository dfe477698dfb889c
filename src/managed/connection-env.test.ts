import assert from 'node:assert/strict';
import { test } from 'node:test';
import { managedConnectionEnv, managedEnvName, type ManagedConnection } from './connection-env.ts';

const postgres = (name: string): ManagedConnection => ({
  name,
  provider: 'postgres',
  values: { host: name, port: 5432, dsn: `postgresql://app:pw@${name}:5432/app`, secret: 'pw', details: { host: name, port: 5432, database: 'app', user: 'app', version: '16' } },
});
const redis: ManagedConnection = { name: 'cache', provider: 'redis', values: { host: 'cache', port: 6379, dsn: 'redis://:pw@cache:6379/0', secret: 'pw', details: { host: 'cache', port: 6379, version: '7' } } };

test('a service name becomes the upper-case part of its variables: dashes become underscores', () => {
  assert.equal(managedEnvName('db-main'), 'DB_MAIN');
});

test('each service gets SVC_MANAGED_<NAME>_*; the first postgres also DATABASE_URL and PG*, redis REDIS_URL', () => {
  assert.deepEqual(managedConnectionEnv([postgres('db'), redis]), {
    SVC_MANAGED_DB_HOST: 'db', SVC_MANAGED_DB_PORT: '5432', SVC_MANAGED_DB_USER: 'app', SVC_MANAGED_DB_PASSWORD: 'pw', SVC_MANAGED_DB_DATABASE: 'app',
    SVC_MANAGED_DB_URL: 'postgresql://app:pw@db:5432/app',
    DATABASE_URL: 'postgresql://app:pw@db:5432/app', PGHOST: 'db', PGPORT: '5432', PGUSER: 'app', PGPASSWORD: 'pw', PGDATABASE: 'app',
    SVC_MANAGED_CACHE_HOST: 'cache', SVC_MANAGED_CACHE_PORT: '6379', SVC_MANAGED_CACHE_PASSWORD: 'pw', SVC_MANAGED_CACHE_URL: 'redis://:pw@cache:6379/0',
    REDIS_URL: 'redis://:pw@cache:6379/0',
  });
});

test('with two instances of a provider the usual names stay with the first given (the oldest)', () => {
  const env = managedConnectionEnv([postgres('main'), postgres('analytics')]);
  assert.equal(env.PGHOST, 'main');
  assert.equal(env.SVC_MANAGED_ANALYTICS_HOST, 'analytics');
});

test('no managed services, no variables', () => {
  assert.deepEqual(managedConnectionEnv([]), {});
});
