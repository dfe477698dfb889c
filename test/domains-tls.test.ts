// Certificates of custom domains over ACME against Debian's pebble on loopback, served by the nginx data plane
// (issue 20): issued after verification (HTTP-01 answered by the router), served over HTTPS by SNI to a client that
// trusts pebble's root, plain HTTP redirected to HTTPS, renewed 30 days before expiry and reloaded into nginx.
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, test } from 'node:test';
import { DAY } from '../src/core/clock.ts';
import type { ApiClient } from './helpers/client.ts';
import { startDns, type TestDns } from './helpers/dns.ts';
import { preparePebble, type TestPebble } from './helpers/pebble.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace } from './helpers/workspaces.ts';

let server: TestServer;
let dns: TestDns;
let pebble: TestPebble;
let owner: ApiClient;
let workspace: number;
let domainPath: string;
let port: number;
let tlsPort: number;
let root: string;

function overTls(path: string, servername = 'shop.test'): Promise<{ status: number; text: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request({ host: '127.0.0.1', port: tlsPort, path, servername, headers: { host: servername }, ca: root, agent: false }, (response) => {
      let text = '';
      const serial = (response.socket as TLSSocket).getPeerCertificate().serialNumber;
      response.setEncoding('utf8');
      response.on('data', (c: string) => (text += c));
      response.on('end', () => resolve({ status: response.statusCode!, text, serial }));
    });
    request.on('error', reject);
    request.end();
  });
}

function plain(path: string): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, headers: { host: 'shop.test' }, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, location: response.headers.location }));
    }).on('error', reject);
  });
}

before(async () => {
  dns = await startDns(['shop.test']);
  pebble = await preparePebble();
  server = await startTestServer({
    env: { SVC_DNS_RESOLVER: dns.address, SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TLS_LISTEN: '127.0.0.1:0', SVC_ACME_DIRECTORY: pebble.directoryUrl, SVC_ACME_CA_FILE: pebble.caFile, SVC_DATA_PLANE: 'nginx' },
  });
  port = Number(new URL(server.url).port);
  tlsPort = server.server.dataPlane!.tlsPort!;
  await pebble.start(port, dns.address);
  root = await pebble.root();
  const served = await servedWorkspace(server, 'tlssite');
  owner = served.owner;
  workspace = served.id;
  const team = (await owner.get(`/workspaces/${workspace}`)).body.team_id;
  const added = await owner.post(`/teams/${team}/domains`, { name: 'shop.test', routes: [{ path: '/', workspace_id: workspace }] });
  assert.equal(added.status, 201, added.text);
  domainPath = `/teams/${team}/domains/${added.body.id}`;
  await dns.set({ '_svc.shop.test': [added.body.txt_record.value] });
});
after(async () => {
  await removeWorkspaces(server.server.driver, [workspace]);
  await server?.close();
  await pebble?.stop();
  await dns?.stop();
});

test('after verification pebble issues the certificate; nginx serves it by SNI and the workspace answers over HTTPS', async () => {
  assert.equal((await owner.post(`${domainPath}/check`)).status, 202);
  const issued = await until(async () => {
    const body = (await owner.get(domainPath)).body;
    if (body.certificate.state === 'failed') throw new Error(body.certificate.detail);
    return body.certificate.state === 'issued' ? body : undefined;
  }, 'the certificate to be issued', 60_000);
  assert.equal(issued.verification.status, 'verified');
  const answer = await until(() => overTls('/hello').then((a) => (a.status === 200 ? a : undefined)), 'HTTPS to serve the domain', 15_000);
  assert.equal(answer.text, 'web saw /hello');
  await assert.rejects(overTls('/', 'other.test'), 'a name without a certificate gets no handshake');
});

test('plain HTTP redirects to HTTPS once the certificate is issued', async () => {
  const answer = await plain('/page?x=1');
  assert.equal(answer.status, 308);
  assert.equal(answer.location, `https://shop.test:${tlsPort}/page?x=1`);
});

test('30 days before expiry the certificate is renewed and nginx serves the new one', async () => {
  const before = (await overTls('/')).serial;
  const notAfter = (await server.server.database.pool.query('SELECT certificate_not_after FROM custom_domains WHERE name = $1', ['shop.test'])).rows[0].certificate_not_after as Date;
  server.clock.set(new Date(notAfter.getTime() - 29 * DAY));
  await server.server.domains.checker.checkDue();
  const renewed = await until(() => overTls('/').then((a) => (a.serial !== before ? a : undefined)), 'nginx to serve the renewed certificate', 15_000);
  assert.equal(renewed.text, 'web saw /');
  assert.equal((await owner.get(domainPath)).body.certificate.state, 'issued');
});
