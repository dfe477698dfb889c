// `svc conformance URL` as a process: green against a real server (a workspace cloned from a repository with a
// svc.yml, synced, torn down, slept, deleted and purged), red against the same server behind a proxy that breaks one
// rule on purpose (it drops Svc-Version from error answers).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node -e "require('http').createServer((q, s) => s.end('hi')).listen(8080, '0.0.0.0')"
    ports:
      - port: 8080
        routes:
          - path: /
`;

let server: TestServer;
let driver: RuntimeDriver;
let repository: BareRepository;
let team: number;
let proxy: http.Server;
let proxyUrl: string;

const conformance = (url: string, ...args: string[]) =>
  runSvc(['conformance', url, ...args], { SVC_TOKEN: server.admin.auth.token, SVC_URL: undefined, XDG_CONFIG_HOME: '/nonexistent' });

/** A proxy in front of the server that removes Svc-Version from every answer of 400 and above. */
function brokenProxy(target: URL): Promise<http.Server> {
  const proxy = http.createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = Object.entries(request.headers).flatMap(([name, value]) => (typeof value === 'string' && name !== 'host' && name !== 'connection' ? [[name, value]] : [])) as [string, string][];
      const forward = () => fetch(new URL(request.url!, target), { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined, redirect: 'manual' });
      // a pooled connection the server's front closed while idle fails once; the proxy must not turn that into a rule
      const answer = await forward().catch(forward);
      const forwarded = [...answer.headers].filter(([name]) => !['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name));
      response.writeHead(answer.status, Object.fromEntries(answer.status >= 400 ? forwarded.filter(([name]) => name !== 'svc-version') : forwarded));
      if (answer.body) for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
      response.end();
    } catch {
      response.destroy();
    }
  });
  proxy.keepAliveTimeout = 120_000; // the CLI's pooled connections stay open between its requests
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

before(async () => {
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const org = (await server.admin.post('/orgs', { name: 'Conformance' })).body.id;
  team = (await server.admin.post('/teams', { org_id: org, name: 'Conformance' })).body.id;
  repository = await createBareRepository({ 'svc.yml': svcYml });
  proxy = await brokenProxy(new URL(server.url));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

after(async () => {
  proxy?.close();
  proxy?.closeAllConnections();
  // the suite purges its workspace; whatever a failed run left behind goes here
  const left = await server.server.database.pool.query<{ id: number }>('SELECT id FROM workspaces');
  await removeWorkspaces(driver, left.rows.map((row) => row.id));
  await server?.close();
  await repository?.remove();
});

test('svc conformance passes every rule against a correct installation and cleans up what it created', async (t) => {
  const run = await conformance(server.url, '--team', String(team), '--repo', repository.url);
  t.diagnostic(run.stdout);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  const lines = run.stdout.trim().split('\n');
  assert.match(lines.at(-1)!, /^conformance: \d+ passed, 0 failed, 0 skipped$/, run.stdout);
  assert.ok(lines.length > 25, run.stdout);
  assert.ok(lines.slice(0, -1).every((line) => line.startsWith('pass ')), run.stdout);
  assert.equal(run.stderr, '');
  const left = await server.server.database.pool.query('SELECT id FROM workspaces');
  assert.equal(left.rowCount, 0, 'the workspace is purged');
});

test('svc conformance fails the rule a proxy breaks on purpose, and only that rule, exiting 1', async () => {
  const run = await conformance(proxyUrl, '--section', '4.1,4.2,4.5,5,7,9');
  assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
  const failed = run.stdout.split('\n').filter((line) => line.startsWith('fail '));
  assert.equal(failed.length, 1, run.stdout);
  assert.match(failed[0], /^fail  4\.1 +every answer the suite received carries Svc-Version: \d+ of \d+ answers have none: GET \/api\/v1\/me \(401\)/);
  assert.match(run.stdout, /\nconformance: \d+ passed, 1 failed, \d+ skipped\n$/);
});

test('svc conformance without a key is a usage error (exit 2)', async () => {
  const run = await runSvc(['conformance', server.url], { SVC_TOKEN: undefined, XDG_CONFIG_HOME: '/nonexistent' });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /an administrator's API key is needed/);
});
