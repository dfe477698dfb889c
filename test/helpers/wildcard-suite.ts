// The installation's wildcard certificate over real TLS handshakes (issue 20), for either data plane: a custom
// domain under its parent is Covered (no ACME order although a CA is configured) and served with it; workspace hosts
// answer over HTTPS; a domain's own certificate wins over the wildcard by SNI; other names get no handshake; and a
// request in flight over TLS finishes while new certificates are loaded (nginx reloads, node swaps contexts); a
// renewed wildcard certificate is served without a restart, and names it no longer covers are no longer Covered.
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { after, before, test } from 'node:test';
import type { ApiClient } from './client.ts';
import { madeCertificate, type MadeCertificate } from './certificates.ts';
import { startDns, type TestDns } from './dns.ts';
import { startTestServer, type TestServer } from './server.ts';
import { until } from './wait.ts';
import { removeWorkspaces, servedWorkspace } from './workspaces.ts';

/** `web` answers what it saw; `/hold` answers only once `/release` came; `/held` counts the requests held. */
const files = {
  'svc.yml': `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080 }
`,
  'web.js': `const held = [];
require('node:http').createServer((req, res) => {
  if (req.url === '/hold') return void held.push(res);
  if (req.url === '/held') return void res.end(String(held.length));
  if (req.url === '/release') { for (const r of held.splice(0)) r.end('released'); return void res.end('ok'); }
  res.end('web saw ' + req.url);
}).listen(8080, '0.0.0.0');
`,
};

export function wildcardSuite(dataPlane: 'nginx' | 'node'): void {
  let dir: string;
  let server: TestServer;
  let dns: TestDns;
  let owner: ApiClient;
  let key: string;
  let workspace: number;
  let team: number;
  let wildcard: MadeCertificate;
  let port: number;
  let tlsPort: number;

  const overTls = (name: string, target: string, ca: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; text: string; peer: PeerCertificate; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const request = https.request({ host: '127.0.0.1', port: tlsPort, path: target, servername: name, headers: { host: name, ...headers }, ca, agent: false }, (response) => {
        const peer = (response.socket as TLSSocket).getPeerCertificate();
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (c: string) => (text += c));
        response.on('end', () => resolve({ status: response.statusCode!, text, peer, headers: response.headers }));
      });
      request.on('error', reject);
      request.end();
    });

  const plain = (name: string, target: string) =>
    new Promise<{ status: number; location?: string }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: target, headers: { host: name }, agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, location: response.headers.location }));
      }).on('error', reject);
    });

  const verifiedDomain = async (name: string, records: Record<string, string[]>) => {
    const added = await owner.post(`/teams/${team}/domains`, { name, routes: [{ path: '/', workspace_id: workspace }] });
    assert.equal(added.status, 201, added.text);
    await dns.set({ ...records, [`_svc.${name}`]: [added.body.txt_record.value] });
    const domainPath = `/teams/${team}/domains/${added.body.id}`;
    await owner.post(`${domainPath}/check`);
    await until(async () => ((await owner.get(domainPath)).body.verification.status === 'verified' ? true : undefined), `${name} to be verified`, 15_000);
    return { path: domainPath, token: added.body.txt_record.value as string };
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-wildcard-'));
    wildcard = await madeCertificate(dir, ['*.apps.test', '*.custom.test']);
    await writeFile(path.join(dir, 'wildcard.pem'), wildcard.certificate);
    await writeFile(path.join(dir, 'wildcard.key'), wildcard.key);
    dns = await startDns(['custom.test']);
    server = await startTestServer({
      env: {
        SVC_DATA_PLANE: dataPlane,
        SVC_WORKSPACE_DOMAIN: 'apps.test',
        SVC_DNS_RESOLVER: dns.address,
        SVC_ALLOW_LOCAL_REPOSITORIES: 'true',
        SVC_TLS_LISTEN: '127.0.0.1:0',
        SVC_TLS_WILDCARD_CERT: path.join(dir, 'wildcard.pem'),
        SVC_TLS_WILDCARD_KEY: path.join(dir, 'wildcard.key'),
        // A CA that is never reached: a covered domain places no order (one would fail, not stay Covered).
        SVC_ACME_DIRECTORY: 'https://127.0.0.1:9/dir',
      },
    });
    port = Number(new URL(server.url).port);
    tlsPort = server.server.tlsPort()!;
    const served = await servedWorkspace(server, `wild${dataPlane}`, files);
    ({ owner, key } = served);
    workspace = served.id;
    team = (await owner.get(`/workspaces/${workspace}`)).body.team_id;
  });
  after(async () => {
    await removeWorkspaces(server?.server.driver, [workspace]);
    await server?.close();
    await dns?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  let shopRecords: Record<string, string[]> = {};
  let ownCa: string;

  test(`${dataPlane}: a custom domain under the wildcard's parent is Covered (no ACME order) and served over HTTPS with it; plain HTTP redirects`, async () => {
    const shop = await verifiedDomain('shop.custom.test', {});
    shopRecords = { '_svc.shop.custom.test': [shop.token] };
    const body = (await owner.get(shop.path)).body;
    assert.equal(body.certificate.state, 'covered');
    await server.server.domains.checker.checkDue();
    assert.equal((await owner.get(shop.path)).body.certificate.state, 'covered', 'no order was placed with the (unreachable) CA');
    const answer = await overTls('shop.custom.test', '/page', wildcard.ca);
    assert.equal(answer.status, 200);
    assert.equal(answer.text, 'web saw /page');
    assert.match(answer.peer.subjectaltname ?? "", /DNS:\*\.custom\.test/);
    const redirect = await plain('shop.custom.test', '/page?x=1');
    assert.equal(redirect.status, 308);
    assert.equal(redirect.location, `https://shop.custom.test:${tlsPort}/page?x=1`);
  });

  test(`${dataPlane}: workspace hosts answer over HTTPS with the wildcard certificate; names it does not cover get no handshake`, async () => {
    const answer = await overTls(`w${workspace}.apps.test`, '/hello', wildcard.ca, { 'svc-authorization': `Bearer ${key}` });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.text, 'web saw /hello');
    assert.match(answer.peer.subjectaltname ?? "", /DNS:\*\.apps\.test/);
    // Without credentials the private dev URL answers the sign-in page, over HTTPS too.
    assert.equal((await overTls(`w${workspace}.apps.test`, '/hello', wildcard.ca)).status, 401);
    await assert.rejects(overTls('elsewhere.test', '/', wildcard.ca), 'a name no certificate covers gets no handshake');
    await assert.rejects(overTls('deep.shop.custom.test', '/', wildcard.ca), 'a wildcard covers one label only (the client refuses it for a deeper name)');
  });

  test(`${dataPlane}: a domain's own certificate wins over the wildcard by SNI, and a request in flight over TLS finishes while it is loaded`, async () => {
    const host = `w${workspace}.apps.test`;
    const auth = { 'svc-authorization': `Bearer ${key}` };
    const held = overTls(host, '/hold', wildcard.ca, auth);
    await until(async () => ((await overTls(host, '/held', wildcard.ca, auth)).text === '1' ? true : undefined), 'the request to be held by the workspace');
    const own = await madeCertificate(dir, ['own.custom.test']);
    ownCa = own.ca;
    // Uploaded certificates are checked against the server's clock, which stands still in tests.
    server.clock.set(new Date(Date.now() + 60_000));
    const domain = await verifiedDomain('own.custom.test', shopRecords);
    assert.equal((await owner.get(domain.path)).body.certificate.state, 'covered');
    const uploaded = await owner.put(`${domain.path}/certificate`, { certificate: own.certificate, private_key: own.key });
    assert.equal(uploaded.status, 200, uploaded.text);
    assert.equal(uploaded.body.certificate.state, 'uploaded');
    const answer = await until(() => overTls('own.custom.test', '/mine', own.ca).then((a) => a, () => undefined), 'the uploaded certificate to be served', 15_000);
    assert.equal(answer.text, 'web saw /mine');
    assert.match(answer.peer.subjectaltname ?? "", /^DNS:own\.custom\.test$/);
    assert.equal((await overTls('shop.custom.test', '/', wildcard.ca)).status, 200, 'the wildcard still serves the other names');
    await overTls(host, '/release', wildcard.ca, auth);
    const finished = await held;
    assert.equal(finished.status, 200);
    assert.equal(finished.text, 'released');
  });

  test(`${dataPlane}: a renewed wildcard certificate is served without a restart; a broken one is not taken; names it drops are no longer Covered`, async () => {
    const renewed = await madeCertificate(dir, ['*.apps.test', '*.custom.test']);
    await writeFile(path.join(dir, 'wildcard.pem'), renewed.certificate);
    await writeFile(path.join(dir, 'wildcard.key'), renewed.key);
    assert.equal(await server.server.wildcard!.checkNow(), true);
    assert.equal((await overTls('shop.custom.test', '/new', renewed.ca)).text, 'web saw /new');
    await assert.rejects(overTls('shop.custom.test', '/', wildcard.ca), 'the old certificate is no longer served');

    await writeFile(path.join(dir, 'wildcard.key'), (await madeCertificate(dir, ['*.apps.test'])).key);
    assert.equal(await server.server.wildcard!.checkNow(), false, 'a key that does not match is not taken');
    assert.equal((await overTls(`w${workspace}.apps.test`, '/still', renewed.ca, { 'svc-authorization': `Bearer ${key}` })).text, 'web saw /still');

    const narrower = await madeCertificate(dir, ['*.apps.test']);
    await writeFile(path.join(dir, 'wildcard.pem'), narrower.certificate);
    await writeFile(path.join(dir, 'wildcard.key'), narrower.key);
    assert.equal(await server.server.wildcard!.checkNow(), true);
    const shop = (await owner.get(`/teams/${team}/domains`)).body.items.find((d: { name: string }) => d.name === 'shop.custom.test');
    // An ACME order is due now (Being issued; the CA configured is unreachable, so it fails once acme-client gives up).
    assert.ok(['being-issued', 'failed'].includes(shop.certificate.state), shop.certificate.state);
    await assert.rejects(overTls('shop.custom.test', '/', narrower.ca), 'a name the wildcard no longer covers gets no handshake');
    assert.equal((await overTls(`w${workspace}.apps.test`, '/', narrower.ca, { 'svc-authorization': `Bearer ${key}` })).status, 200);
    assert.equal((await overTls('own.custom.test', '/', ownCa)).status, 200, 'an uploaded certificate stays');
  });
}
