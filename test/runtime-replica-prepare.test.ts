// The local driver's prepareReplicas (what a Sync does while it pulls images) against real network namespaces: each
// replica that does not run gets its namespace linked to the switch at the address its start then takes, the link
// down until that start; the start uses it as it is; release removes only what no start took; a replica that runs
// is left alone, and no other replica is given a prepared address. Needs root (own network namespaces).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkspaceRef } from '../src/runtime/driver.ts';
import { replicaSwitchLinkOf } from '../src/runtime/local/addresses.ts';
import { installationTag } from '../src/runtime/local/installation.ts';
import { asRoot, replicaSpec, run, startPodBench, type PodBench } from './helpers/driver-pods.ts';

const SERVER = `require('node:http').createServer((q, r) => r.end(process.env.SERVICE)).listen(3000, '0.0.0.0');\n`;
let pods: PodBench;

before(async () => {
  pods = await startPodBench({ name: 'runtime-replica-prepare', editorBlock: 6_000, cycleFrom: 100_000, uidBase: 3_900_000, count: 2 });
});

after(() => pods.close());

const server = (service: string, index = 0) =>
  replicaSpec(service, { index, env: { SERVICE: `${service} ${index}` }, steps: [{ name: 'serve', run: 'exec node server.cjs' }], ports: [3000], health: { port: 3000, path: '/', mode: 'http-2xx' } });

const netnsOf = (ws: WorkspaceRef, service: string, index = 0) => `svc-${installationTag(pods.dataDir)}-ws${ws.id}-${service}-${index}`;

async function namespacesOf(ws: WorkspaceRef): Promise<string[]> {
  const listed = (await run('ip', ['netns', 'list'])).stdout.split('\n').map((line) => line.split(' ')[0]);
  return listed.filter((name) => name.startsWith(`svc-${installationTag(pods.dataDir)}-ws${ws.id}-`)).sort();
}

/** The pod's end of its link to the switch: its address and whether it is up. */
async function podLink(netns: string): Promise<{ address: string; up: boolean }> {
  const shown = (await run('ip', ['-n', netns, '-o', '-4', 'addr', 'show', 'dev', 'lan0'])).stdout;
  const flags = (await run('ip', ['-n', netns, '-o', 'link', 'show', 'dev', 'lan0'])).stdout;
  return { address: /inet (\S+)\//.exec(shown)![1], up: /<[^>]*\bUP\b[^>]*>/.test(flags) };
}

/** The switch's end of the replica's link, by index: a link made again has another. */
const switchLink = async (ws: WorkspaceRef, service: string, index = 0) =>
  (await run('ip', ['-n', `svc-${installationTag(pods.dataDir)}-ws${ws.id}-net`, '-o', 'link', 'show', replicaSwitchLinkOf(service, index)])).stdout.split(':')[0];

async function answer(host: string): Promise<string> {
  return (await fetch(`http://${host}:3000/`, { headers: { connection: 'close' } })).text();
}

test('prepared namespaces are linked down at the addresses the starts take; a start uses its own; release removes the rest', { skip: !asRoot && 'needs root' }, async () => {
  const ws = pods.workspace(0);
  await pods.volumeWith(ws, { 'server.cjs': SERVER });
  const prepared = await pods.driver.prepareReplicas!(ws, [{ service: 'api', index: 0 }, { service: 'api', index: 1 }]);
  assert.deepEqual(await namespacesOf(ws), [netnsOf(ws, 'api', 0), netnsOf(ws, 'api', 1), `svc-${installationTag(pods.dataDir)}-ws${ws.id}-net`]);
  const [first, second] = [await podLink(netnsOf(ws, 'api', 0)), await podLink(netnsOf(ws, 'api', 1))];
  assert.notEqual(first.address, second.address);
  assert.deepEqual([first.up, second.up], [false, false], 'a prepared link stays down until its start');
  const linked = await switchLink(ws, 'api', 0);

  assert.deepEqual(await pods.driver.startReplica(ws, server('api', 0)), { host: first.address });
  assert.equal(await switchLink(ws, 'api', 0), linked, 'the start made the prepared link again');
  assert.deepEqual(await podLink(netnsOf(ws, 'api', 0)), { address: first.address, up: true });
  await pods.reaches(ws, 'api', 'running');
  assert.equal(await answer(first.address), 'api 0');

  await prepared.release();
  assert.deepEqual(await namespacesOf(ws), [netnsOf(ws, 'api', 0), `svc-${installationTag(pods.dataDir)}-ws${ws.id}-net`], 'what no start took is removed, the running replica keeps its own');
  assert.equal(await answer(first.address), 'api 0');
  await prepared.release(); // again: nothing left to remove
  assert.deepEqual(await namespacesOf(ws), [netnsOf(ws, 'api', 0), `svc-${installationTag(pods.dataDir)}-ws${ws.id}-net`]);
});

test('a replica that runs is left as it is; no other replica gets a prepared address', { skip: !asRoot && 'needs root' }, async () => {
  const ws = pods.workspace(1);
  await pods.volumeWith(ws, { 'server.cjs': SERVER });
  const web = await pods.driver.startReplica(ws, server('web'));
  await pods.reaches(ws, 'web', 'running');
  const webLink = await switchLink(ws, 'web');
  const prepared = await pods.driver.prepareReplicas!(ws, [{ service: 'web', index: 0 }, { service: 'api', index: 0 }]);
  assert.equal(await switchLink(ws, 'web'), webLink, 'the running replica was linked again');
  assert.equal(await answer(web.host), 'web 0');
  const api = await podLink(netnsOf(ws, 'api', 0));
  assert.notEqual(api.address, web.host);

  const other = await pods.driver.startReplica(ws, server('other'));
  assert.ok(![web.host, api.address].includes(other.host), `other got ${other.host}, which is taken`);
  assert.deepEqual(await pods.driver.startReplica(ws, server('api')), { host: api.address });
  await prepared.release();
  assert.deepEqual(await namespacesOf(ws), [netnsOf(ws, 'api', 0), `svc-${installationTag(pods.dataDir)}-ws${ws.id}-net`, netnsOf(ws, 'other', 0), netnsOf(ws, 'web', 0)].sort());
});
