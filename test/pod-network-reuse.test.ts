// A sleeping workspace keeps its networks (as root): the wake finds its pod network and its service network as the
// sleep left them and starts no `ip` to rebuild them; a stop removes them. A namespace of the same name that this
// installation did not make whole (a killed run's, another data directory's) is taken over: removed and made
// afresh, where `ip netns add` used to fail with "File exists". Workspace ids 900111+ are this file's own.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { RuntimeDriver, WorkspaceRef } from '../src/runtime/driver.ts';
import { createLocalDriver, installationPodNetwork, installationServiceNetwork, type ServiceNetwork } from '../src/runtime/local/index.ts';
import { linkIndex, linkMark, netnsExists, networkOwner, podNetworkExists } from '../src/runtime/local/network.ts';
import { workspaceRuntimeDir } from '../src/runtime/local/replica-files.ts';
import { processesOf } from './helpers/processes.ts';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
const skip = !asRoot && 'needs root (network namespaces)';
const ids = [900111, 900112];
const workspace = (id: number): WorkspaceRef => ({ id, uid: 20000 + id, storageGib: 1 });

let scratch: string;
let dataDir: string;
let driver: RuntimeDriver;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-pod-network-reuse-'));
  await run('chmod', ['755', scratch]);
  dataDir = path.join(scratch, 'data');
  driver = createLocalDriver({ dataDir, editorTimeoutMs: 30_000 });
  for (const id of ids) {
    await driver.createVolume(workspace(id));
    await driver.prepareEmptyVolume(workspace(id), () => undefined);
  }
});

after(async () => {
  for (const id of ids) {
    await driver.stopWorkspace(workspace(id)).catch(() => undefined);
    await driver.deleteVolume(workspace(id)).catch(() => undefined);
  }
  await driver.close();
  await rm(scratch, { recursive: true, force: true });
});

const recordedServiceNetwork = async (id: number) =>
  JSON.parse(await readFile(path.join(workspaceRuntimeDir(dataDir, id), 'network.json'), 'utf8')) as ServiceNetwork;

/** The host links of the pod network and the service network, by index: a link made again has another. */
async function linkIndexes(id: number): Promise<Array<string | undefined>> {
  return [await linkIndex(installationPodNetwork(dataDir, id).hostVeth), await linkIndex((await recordedServiceNetwork(id)).hostVeth)];
}

async function answers(host: string, port: number): Promise<number> {
  const response = await fetch(`http://${host}:${port}/`, { headers: { connection: 'close' } });
  await response.arrayBuffer();
  return response.status;
}

test('a sleeping workspace keeps its networks, its wake reuses them as they are, and a stop removes them', { skip }, async () => {
  const ws = workspace(ids[0]);
  const network = installationPodNetwork(dataDir, ws.id);
  await driver.startEditor(ws, () => undefined);
  const made = await linkIndexes(ws.id);
  const service = await recordedServiceNetwork(ws.id);
  assert.match((await linkMark(network.hostVeth))!, new RegExp(`^${networkOwner(dataDir)} ${network.subnet} lan \\d+ ${service.editorAddress.replaceAll('.', '\\.')}$`));

  await driver.stopWorkspace(ws, { sleeping: true });
  assert.deepEqual(await processesOf(ws.uid), []);
  assert.deepEqual(await driver.editorState(ws), { state: 'absent' });
  assert.equal(await podNetworkExists(network), true);
  assert.equal(await netnsExists(service.netns), true);

  const address = await driver.startEditor(ws, () => undefined);
  assert.deepEqual(await linkIndexes(ws.id), made, 'the wake made its networks again instead of reusing them');
  assert.equal(await answers(address.host, address.port), 200);
  // still linked to its service network: the host reaches the editor at the pod's address there too
  assert.equal(await answers(service.editorAddress, address.port), 200);

  await driver.stopWorkspace(ws);
  assert.equal(await podNetworkExists(network), false);
  assert.equal(await netnsExists(service.netns), false);
});

test("half-made leftovers of the installation's names are taken over at the start; a link another installation marked is left alone", { skip }, async () => {
  const ws = workspace(ids[1]);
  const network = installationPodNetwork(dataDir, ws.id);
  const service = installationServiceNetwork(dataDir, ws.id);
  // What a run killed half-way leaves: both namespaces, their host links (not marked yet), the switch's address.
  await run('ip', ['netns', 'add', network.netns]);
  await run('ip', ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', network.podVeth, 'netns', network.netns]);
  await run('ip', ['netns', 'add', service.netns]);
  await run('ip', ['link', 'add', service.hostVeth, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', service.netns]);
  await run('ip', ['addr', 'add', `${service.hostAddress}/26`, 'dev', service.hostVeth]);
  const stale = [await linkIndex(network.hostVeth), await linkIndex(service.hostVeth)];

  // marked by another installation (two sharing a tag): refused, not removed
  await run('ip', ['link', 'set', network.hostVeth, 'alias', `svc:another ${network.subnet}`]);
  await assert.rejects(driver.startEditor(ws, () => undefined), /belongs to another svc installation \(svc:another\)/);
  assert.equal(await linkIndex(network.hostVeth), stale[0], "the other installation's link is still there");
  await run('ip', ['link', 'set', network.hostVeth, 'alias', '']);

  const address = await driver.startEditor(ws, () => undefined);
  assert.equal(await answers(address.host, address.port), 200);
  const [podLink, serviceLink] = await linkIndexes(ws.id);
  assert.notEqual(podLink, stale[0], 'the stale pod network was reused');
  assert.notEqual(serviceLink, stale[1], 'the stale service network was reused');
  assert.ok((await linkMark(network.hostVeth))!.startsWith(`${networkOwner(dataDir)} `));
  await driver.stopWorkspace(ws);
  assert.equal(await podNetworkExists(network), false);
});
