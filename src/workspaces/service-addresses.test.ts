import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeLandscape, parseLandscape } from '../landscape/index.ts';
import { serviceAddresses } from './service-addresses.ts';

const landscape = (text: string) => {
  const parsed = parseLandscape(text);
  assert.deepEqual(parsed.errors, []);
  return normalizeLandscape(parsed.landscape!);
};

const urls = { scheme: 'https', domain: 'dev.example.com', port: 443 };

test('routes get their URL on the dev URL, public ports their own host, internal ports neither', () => {
  const found = serviceAddresses(
    landscape(`schema: svc/v1
services:
  web:
    type: steps
    steps: [{ run: node web.js }]
    ports:
      - { port: 8080, routes: [{ path: / }, { path: /api, strip: true }] }
      - { port: 9090, public: true }
      - { port: 5000 }
  docs:
    type: forward
    target: https://docs.example.org
    routes: [{ path: /docs }]
`),
    7,
    urls,
  );
  assert.deepEqual(found.get('web'), [
    { port: 8080, public: false, routes: [{ path: '/', strip: false, url: 'https://w7.dev.example.com/' }, { path: '/api', strip: true, url: 'https://w7.dev.example.com/api' }] },
    { port: 9090, public: true, public_url: 'https://w7-9090.dev.example.com/', routes: [] },
    { port: 5000, public: false, routes: [] },
  ]);
  assert.deepEqual(found.get('docs'), [{ port: 0, public: false, routes: [{ path: '/docs', strip: false, url: 'https://w7.dev.example.com/docs' }] }]);
});

test('a port other than the scheme default stays in the URLs; no landscape has no addresses', () => {
  const found = serviceAddresses(landscape('schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{ run: x }]\n    ports: [{ port: 3000, public: true }]\n'), 3, { scheme: 'http', domain: 'localhost', port: 8080 });
  assert.equal(found.get('web')![0].public_url, 'http://w3-3000.localhost:8080/');
  assert.equal(serviceAddresses(undefined, 3, urls).size, 0);
});
