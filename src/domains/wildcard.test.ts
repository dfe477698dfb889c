import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NginxSettings } from '../router/nginx-config.ts';
import { tlsServers } from '../router/nginx-tls.ts';
import { certificateAtStart } from './index.ts';
import { certificateFor } from './wildcard.ts';

const covers = (name: string) => /^[a-z0-9-]+\.apps\.test$/.test(name);

test("a name's own certificate wins; else the wildcard when it covers the name; else none", () => {
  const own = new Map([['own.apps.test', 'own']]);
  assert.equal(certificateFor('OWN.apps.test.', own, { covers }, 'wild'), 'own');
  assert.equal(certificateFor('w1.apps.test', own, { covers }, 'wild'), 'wild');
  assert.equal(certificateFor('elsewhere.test', own, { covers }, 'wild'), undefined);
  assert.equal(certificateFor('w1.apps.test', own, undefined, undefined), undefined);
});

test('at a start, verified domains follow the means: covered names become Covered; uploaded and issued ones stay unless covered', () => {
  assert.equal(certificateAtStart('being-issued', 'covered'), 'covered');
  assert.equal(certificateAtStart('issued', 'covered'), 'covered');
  assert.equal(certificateAtStart('not-managed', 'covered'), 'covered');
  assert.equal(certificateAtStart('uploaded', 'covered'), undefined);
  assert.equal(certificateAtStart('covered', 'covered'), undefined);
  assert.equal(certificateAtStart('covered', 'being-issued'), 'being-issued');
  assert.equal(certificateAtStart('covered', 'not-managed'), 'not-managed');
  assert.equal(certificateAtStart('not-managed', 'being-issued'), 'being-issued');
  assert.equal(certificateAtStart('failed', 'not-managed'), 'not-managed');
  assert.equal(certificateAtStart('issued', 'not-managed'), undefined);
  assert.equal(certificateAtStart('waits-for-verification', 'covered'), undefined);
});

test("nginx's TLS listener: a server per own certificate, the wildcard's names without those, unknown names refused", () => {
  const settings = { internalPort: 1, admitSecret: 's' } as NginxSettings;
  const text = tlsServers(settings, '127.0.0.1:8443', [{ name: 'own.apps.test', certificate: '/c/own.crt', key: '/c/own.key' }], { names: ['*.apps.test', 'own.apps.test'], certificate: '/c/w.crt', key: '/c/w.key' });
  assert.match(text, /listen 127\.0\.0\.1:8443 ssl default_server;\n    ssl_reject_handshake on;/);
  assert.match(text, /server_name own\.apps\.test;\n    ssl_certificate \/c\/own\.crt;/);
  assert.match(text, /server_name \*\.apps\.test;\n    ssl_certificate \/c\/w\.crt;/);
  assert.equal(text.match(/X-Forwarded-Proto https/g)?.length, 2);
});
