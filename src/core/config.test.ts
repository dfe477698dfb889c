import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadServerConfig, parseListen } from './config.ts';

test('defaults: 127.0.0.1:8080, ./.svc, base URL from the listen address', () => {
  const config = loadServerConfig([], {}, '/srv');
  assert.equal(config.listenHost, '127.0.0.1');
  assert.equal(config.listenPort, 8080);
  assert.equal(config.dataDir, '/srv/.svc');
  assert.equal(config.baseUrl, 'http://127.0.0.1:8080');
  assert.equal(config.baseUrlDerived, true);
  assert.equal(config.databaseUrl, undefined);
});

test('environment variables and flags alike; a flag wins', () => {
  const env = { SVC_LISTEN: '0.0.0.0:9000', SVC_DATA_DIR: '/var/svc', SVC_BASE_URL: 'https://svc.example.com/', DATABASE_URL: 'postgres://db/x' };
  const fromEnv = loadServerConfig([], env, '/');
  assert.equal(fromEnv.listenHost, '0.0.0.0');
  assert.equal(fromEnv.listenPort, 9000);
  assert.equal(fromEnv.dataDir, '/var/svc');
  assert.equal(fromEnv.baseUrl, 'https://svc.example.com');
  assert.equal(fromEnv.baseUrlDerived, false);
  assert.equal(fromEnv.databaseUrl, 'postgres://db/x');
  const flags = loadServerConfig(['--listen=127.0.0.1:0', '--data-dir', 'rel'], env, '/home/u');
  assert.equal(flags.listenPort, 0);
  assert.equal(flags.dataDir, '/home/u/rel');
});

test('listen addresses: HOST:PORT, IPv6 in brackets; anything else is refused', () => {
  assert.deepEqual(parseListen('[::1]:8080'), { host: '::1', port: 8080 });
  for (const bad of ['8080', 'host:', ':80', 'host:99999', 'a:b']) assert.throws(() => parseListen(bad), ConfigError, bad);
});

test('unknown flags, missing values and bad numbers are refused', () => {
  assert.throws(() => loadServerConfig(['--nope', '1'], {}), /unknown option --nope/);
  assert.throws(() => loadServerConfig(['--listen'], {}), /needs a value/);
  assert.throws(() => loadServerConfig(['--rate-limit', '-1'], {}), /whole number/);
  assert.throws(() => loadServerConfig([], { SVC_BASE_URL: 'example.com' }), /http/);
});

test('--managed-disable lists provider versions, from the flag or SVC_MANAGED_DISABLE; none by default', () => {
  assert.deepEqual(loadServerConfig([], {}, '/srv').managedDisabled, []);
  assert.deepEqual(loadServerConfig(['--managed-disable', 'postgres:15, redis:7'], {}, '/srv').managedDisabled, ['postgres:15', 'redis:7']);
  assert.deepEqual(loadServerConfig([], { SVC_MANAGED_DISABLE: 'postgres:16' }, '/srv').managedDisabled, ['postgres:16']);
});

test('--insecure-registries lists host:port entries (SVC_INSECURE_REGISTRIES alike); anything else is refused', () => {
  assert.deepEqual(loadServerConfig([], {}, '/srv').insecureRegistries, []);
  assert.deepEqual(loadServerConfig(['--insecure-registries', '127.0.0.1:5000, Registry.local'], {}, '/srv').insecureRegistries, ['127.0.0.1:5000', 'registry.local']);
  assert.deepEqual(loadServerConfig([], { SVC_INSECURE_REGISTRIES: 'localhost:5000' }, '/srv').insecureRegistries, ['localhost:5000']);
  assert.throws(() => loadServerConfig(['--insecure-registries', 'http://127.0.0.1:5000'], {}), /host:port/);
});

test('--registry-stall-timeout and --registry-pull-timeout are whole seconds, 60 and 1800 by default', () => {
  const defaults = loadServerConfig([], {}, '/srv');
  assert.equal(defaults.registryStallSeconds, 60);
  assert.equal(defaults.registryPullTimeoutSeconds, 1800);
  const set = loadServerConfig(['--registry-stall-timeout', '5'], { SVC_REGISTRY_PULL_TIMEOUT: '600', SVC_REGISTRY_STALL_TIMEOUT: '9' }, '/srv');
  assert.equal(set.registryStallSeconds, 5, 'the flag wins over the environment');
  assert.equal(set.registryPullTimeoutSeconds, 600);
  for (const bad of ['0', '1.5', 'soon', '-3']) {
    assert.throws(() => loadServerConfig(['--registry-stall-timeout', bad], {}), /registry stall timeout must be a whole number/, bad);
    assert.throws(() => loadServerConfig([], { SVC_REGISTRY_PULL_TIMEOUT: bad }), /registry pull timeout must be a whole number/, bad);
  }
});

test('--images-max-size takes MiB or a size with a unit; 20 GiB by default', () => {
  assert.equal(loadServerConfig([], {}, '/srv').imagesMaxBytes, 20 * 2 ** 30);
  assert.equal(loadServerConfig(['--images-max-size', '512'], {}, '/srv').imagesMaxBytes, 512 * 2 ** 20);
  assert.equal(loadServerConfig([], { SVC_IMAGES_MAX_SIZE: '1.5GiB' }, '/srv').imagesMaxBytes, 1.5 * 2 ** 30);
  for (const bad of ['0', 'lots', '-5', '10GB']) assert.throws(() => loadServerConfig(['--images-max-size', bad], {}), /size/, bad);
});

test('TLS: --tls-listen works with either data plane; the wildcard certificate needs its key and --tls-listen', () => {
  assert.deepEqual(loadServerConfig(['--tls-listen', '0.0.0.0:443', '--data-plane', 'node'], {}, '/srv').tlsListen, { host: '0.0.0.0', port: 443 });
  const wildcard = loadServerConfig(['--tls-listen', '127.0.0.1:0', '--tls-wildcard-cert', 'w.pem', '--tls-wildcard-key', 'w.key'], {}, '/srv');
  assert.deepEqual([wildcard.tlsWildcardCert, wildcard.tlsWildcardKey], ['/srv/w.pem', '/srv/w.key']);
  assert.throws(() => loadServerConfig(['--tls-listen', '127.0.0.1:0', '--tls-wildcard-cert', 'w.pem'], {}), /go together/);
  assert.throws(() => loadServerConfig([], { SVC_TLS_WILDCARD_CERT: 'w.pem', SVC_TLS_WILDCARD_KEY: 'w.key' }), /needs --tls-listen/);
});

test("the pods' egress settings: resolvers and CIDR lists, flag or environment; IPv6 and nonsense refused", () => {
  const config = loadServerConfig(['--egress-allow', '10.1.0.0/16, 192.0.2.7', '--pod-dns', '198.51.100.53'], { SVC_EGRESS_DENY: '8.8.8.8/32' }, '/');
  assert.deepEqual([config.egressAllow, config.egressDeny, config.podDns], [['10.1.0.0/16', '192.0.2.7/32'], ['8.8.8.8/32'], ['198.51.100.53']]);
  assert.deepEqual([loadServerConfig([], {}, '/').egressAllow, loadServerConfig([], {}, '/').podDns], [[], undefined]);
  assert.throws(() => loadServerConfig(['--egress-deny', 'fd00::/8'], {}, '/'), (e: unknown) => e instanceof ConfigError && /egress deny: "fd00::\/8" is not an IPv4/.test(e.message));
  assert.throws(() => loadServerConfig(['--pod-dns', 'dns.example'], {}, '/'), ConfigError);
});

test('--metrics-listen (or SVC_METRICS_LISTEN) is HOST:PORT; none by default', () => {
  assert.equal(loadServerConfig([], {}).metricsListen, undefined);
  assert.deepEqual(loadServerConfig(['--metrics-listen', '127.0.0.1:9464'], {}).metricsListen, { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(loadServerConfig([], { SVC_METRICS_LISTEN: '[::1]:0' }).metricsListen, { host: '::1', port: 0 });
  assert.throws(() => loadServerConfig(['--metrics-listen', '9464'], {}), /HOST:PORT/);
});
