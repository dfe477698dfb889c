// Two installations on one machine never meet (issue 35 item 1, docs/runtime.md "Two installations on one
// machine"): two servers on two data directories and two databases, each with a running workspace of id 1 and a
// dev URL, both answer their own pages while both run; their pods have network namespaces, host links and address
// blocks of their own; one's purge of its workspace 1 leaves the other's pods running.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { recordedAddressBlocks } from '../src/runtime/local/address-blocks.ts';
import { createLocalDriver, installationPodNetwork, installationTag } from '../src/runtime/local/index.ts';
import { netnsExists } from '../src/runtime/local/network.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces, servedWorkspace, type ServedWorkspace } from './helpers/workspaces.ts';

const asRoot = process.getuid?.() === 0;
const skip = !asRoot && 'needs root (pods with networks of their own)';

const filesOf = (name: string) => ({
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
  'web.js': `require('node:http').createServer((req, res) => res.end('${name} saw ' + req.url)).listen(8080, '0.0.0.0');\n`,
});

interface Installation {
  server: TestServer;
  driver: RuntimeDriver;
  dataDir: string;
  ws: ServedWorkspace;
}

const installations: Installation[] = [];

async function startInstallation(name: string): Promise<Installation> {
  let driver: RuntimeDriver | undefined;
  let dataDir = '';
  const server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: (context) => {
      dataDir = context.dataDir;
      return (driver = createLocalDriver({ dataDir: context.dataDir, clock: context.clock }));
    },
  });
  const installation = { server, driver: driver!, dataDir, ws: undefined as unknown as ServedWorkspace };
  installations.push(installation);
  // what two real installations have: the test databases' own blocks of ids (helpers/database.ts) set aside
  await server.server.database.pool.query('ALTER TABLE workspaces ALTER COLUMN id RESTART WITH 1');
  installation.ws = await servedWorkspace(server, name, filesOf(name));
  return installation;
}

/** The dev URL of workspace `ws` on `installation`'s server (fetch cannot set Host). */
function devUrl(installation: Installation, target: string): Promise<{ status: number; text: string }> {
  const { server, ws } = installation;
  const headers = { host: `w${ws.id}.${server.server.config.workspaceDomain}`, 'svc-authorization': `Bearer ${ws.key}` };
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: Number(new URL(server.url).port), path: target, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

before(async () => {
  if (skip) return;
  await startInstallation('one');
  await startInstallation('two');
});

after(async () => {
  for (const { driver, server, ws } of installations) {
    if (ws) await removeWorkspaces(driver, [ws.id]);
    await server.close();
    await ws?.repository.remove();
  }
});

test('two servers, each with a running workspace 1, answer their own dev URLs while both run; one purge leaves the other alone', { skip }, async () => {
  const [one, two] = installations;
  assert.deepEqual([one.ws.id, two.ws.id], [1, 1], 'both installations have a workspace 1');

  // names and blocks of their own
  assert.notEqual(installationTag(one.dataDir), installationTag(two.dataDir));
  const [blocksOne, blocksTwo] = [recordedAddressBlocks(one.dataDir), recordedAddressBlocks(two.dataDir)];
  assert.equal(new Set([blocksOne.pods, blocksOne.services, blocksTwo.pods, blocksTwo.services]).size, 4, 'four distinct address blocks');
  // a third installation told to take one's block is refused, naming the range and the option
  const third = await mkdtemp(path.join(os.tmpdir(), 'svc-third-'));
  try {
    assert.throws(() => createLocalDriver({ dataDir: third, podAddressRange: blocksOne.pods }), new RegExp(`the pod address range ${blocksOne.pods.replaceAll('.', '\\.')} \\(--pod-address-range\\) is used by another svc installation`));
  } finally {
    await rm(third, { recursive: true, force: true });
  }
  const [podsOne, podsTwo] = [installationPodNetwork(one.dataDir, 1), installationPodNetwork(two.dataDir, 1)];
  assert.notEqual(podsOne.netns, podsTwo.netns);
  assert.notEqual(podsOne.hostVeth, podsTwo.hostVeth);
  assert.notEqual(podsOne.podAddress, podsTwo.podAddress);
  assert.deepEqual([await netnsExists(podsOne.netns), await netnsExists(podsTwo.netns)], [true, true]);

  // both serve their own page, each asked twice in turn
  for (let round = 0; round < 2; round++) {
    assert.deepEqual(await devUrl(one, '/page'), { status: 200, text: 'one saw /page' });
    assert.deepEqual(await devUrl(two, '/page'), { status: 200, text: 'two saw /page' });
  }

  // one's purge of its workspace 1 takes its pods only
  const owner = one.ws.owner;
  const shown = await owner.get(`/workspaces/${one.ws.id}`);
  const deleted = await owner.delete(`/workspaces/${one.ws.id}`, { headers: { 'if-match': shown.headers.get('etag')! } });
  assert.equal((await operationFinished(owner, deleted.body.id)).state, 'succeeded');
  const purged = await owner.post(`/workspaces/${one.ws.id}/purge`);
  assert.equal((await operationFinished(owner, purged.body.id)).state, 'succeeded');
  assert.equal(await netnsExists(podsOne.netns), false, "one's editor pod network is gone");

  assert.equal(await netnsExists(podsTwo.netns), true, "two's editor pod keeps its network");
  assert.equal((await two.ws.owner.get(`/workspaces/${two.ws.id}`)).body.state, 'running');
  assert.deepEqual(await devUrl(two, '/after'), { status: 200, text: 'two saw /after' }, "two's service still answers");
});
