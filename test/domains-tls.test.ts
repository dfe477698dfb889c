// Certificates of custom domains over ACME against Debian's pebble on loopback, served by the nginx data plane, or
// node's TLS server with SVC_DATA_PLANE=node (issue 20): issued after verification (HTTP-01 answered by the router),
// served over HTTPS by SNI to a client that trusts pebble's root, plain HTTP redirected to HTTPS, renewed 30 days
// before expiry and reloaded into nginx.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, test } from 'node:test';
import { assertProblem } from './helpers/client.ts';
import { madeCertificate } from './helpers/certificates.ts';
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

function overTls(path: string, servername = 'shop.test', ca = root): Promise<{ status: number; text: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request({ host: '127.0.0.1', port: tlsPort, path, servername, headers: { host: servername }, ca, agent: false }, (response) => {
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
  dns = await startDns(['shop.test', 'docs.test']);
  pebble = await preparePebble();
  server = await startTestServer({
    env: { SVC_DNS_RESOLVER: dns.address, SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TLS_LISTEN: '127.0.0.1:0', SVC_ACME_DIRECTORY: pebble.directoryUrl, SVC_ACME_CA_FILE: pebble.caFile, SVC_DATA_PLANE: process.env.SVC_DATA_PLANE ?? 'nginx' },
  });
  port = Number(new URL(server.url).port);
  tlsPort = server.server.tlsPort()!;
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
  // One new worker answered; the workers of the configuration before may still take a connection for a moment.
  await server.server.dataPlane?.settled();
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

test('an uploaded certificate is checked (key, name, chain: 422) and served over HTTPS once the domain is verified', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-upload-'));
  try {
    // The renewal test moved the server's clock years ahead; uploaded certificates are checked against it.
    const good = await madeCertificate(dir, ['docs.test']);
    const other = await madeCertificate(dir, ['elsewhere.test']);
    server.clock.set(new Date(Date.now() + 60_000));
    const team = (await owner.get(`/workspaces/${workspace}`)).body.team_id;
    const added = await owner.post(`/teams/${team}/domains`, { name: 'docs.test', routes: [{ path: '/', workspace_id: workspace, strip: false }] });
    const docs = `/teams/${team}/domains/${added.body.id}`;
    const mismatch = await owner.put(`${docs}/certificate`, { certificate: good.certificate, private_key: other.key });
    assertProblem(mismatch, 422, 'validation');
    assert.equal(mismatch.body.errors[0].pointer, '/private_key');
    const wrongName = await owner.put(`${docs}/certificate`, { certificate: other.certificate, private_key: other.key });
    assertProblem(wrongName, 422, 'validation');
    assert.match(wrongName.body.errors[0].message, /does not name docs\.test/);
    const brokenChain = await owner.put(`${docs}/certificate`, { certificate: good.certificate.replace(good.ca, other.ca), private_key: good.key });
    assert.match(brokenChain.body.errors[0].message, /not signed by certificate 2/);
    assertProblem(await owner.put(`${docs}/certificate`, { certificate: 'not a pem', private_key: good.key }), 422, 'validation');
    // A day's certificate two days on (the domain, never verified, keeps its name for 7 days).
    const short = await madeCertificate(dir, ['docs.test'], 1);
    server.clock.set(new Date(Date.now() + 2 * DAY));
    const expired = await owner.put(`${docs}/certificate`, { certificate: short.certificate, private_key: short.key });
    assertProblem(expired, 422, 'validation');
    assert.match(expired.body.errors[0].message, /certificate 1 expired at/);
    server.clock.set(new Date(Date.now() + 60_000));
    const uploaded = await owner.put(`${docs}/certificate`, { certificate: good.certificate, private_key: good.key });
    assert.equal(uploaded.status, 200, uploaded.text);
    assert.equal(uploaded.body.certificate.state, 'uploaded');
    assert.doesNotMatch(uploaded.text, /PRIVATE KEY/);
    await dns.set({ '_svc.shop.test': [(await owner.get(domainPath)).body.txt_record.value], '_svc.docs.test': [added.body.txt_record.value] });
    await owner.post(`${docs}/check`);
    const answer = await until(() => overTls('/doc', 'docs.test', good.ca).then((a) => (a.status === 200 ? a : undefined), () => undefined), 'the uploaded certificate to be served', 30_000);
    assert.equal(answer.text, 'web saw /doc');
    assert.equal((await owner.get(docs)).body.certificate.state, 'uploaded', 'the installation does not replace it');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a certificate the CA refuses is Failed with the CA's reason, and the domain keeps serving plain HTTP", async () => {
  const team = (await owner.get(`/workspaces/${workspace}`)).body.team_id;
  // A name the DNS server has no address for: pebble cannot reach the HTTP-01 answer.
  const added = await owner.post(`/teams/${team}/domains`, { name: 'nowhere.example', routes: [{ path: '/', workspace_id: workspace }] });
  assert.equal(added.status, 201, added.text);
  const path = `/teams/${team}/domains/${added.body.id}`;
  const records = (await owner.get(`/teams/${team}/domains`)).body.items.map((d: { name: string; txt_record: { value: string } }) => [`_svc.${d.name}`, [d.txt_record.value]]);
  await dns.set(Object.fromEntries(records));
  await owner.post(`${path}/check`);
  const failed = await until(async () => {
    const body = (await owner.get(path)).body;
    return body.certificate.state === 'failed' ? body : undefined;
  }, 'the issuance to fail', 60_000);
  assert.equal(failed.verification.status, 'verified');
  assert.match(failed.certificate.detail, /^The CA refused: .+/);
  assert.doesNotMatch(failed.certificate.detail, /undefined/);
  const answer = await new Promise<number>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/x', headers: { host: 'nowhere.example' }, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    }).on('error', reject);
  });
  assert.equal(answer, 200, 'no redirect to HTTPS without a certificate');
});
