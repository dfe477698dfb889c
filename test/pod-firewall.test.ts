// What a pod reaches of the host (server as root, issue 33 item 5): nothing it opens itself. Canaries listening on
// the host's 0.0.0.0 and [::] are refused from an editor pod and from a replica, at the host end of each of their
// links (the pod's /30, the service network, and the IPv6 link-local address of each), while the pod's own paths
// still work: the agent (every exec here goes through it), a replica reached from the host at its address (the
// router's path) and by name from the editor pod. Workspace ids are random in a block of their own.
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import type { ServiceNetwork } from '../src/runtime/local/addresses.ts';
import { installationPodNetwork } from '../src/runtime/local/index.ts';
import { networkOwner } from '../src/runtime/local/network.ts';
import { installPodFirewall, podFirewallInstalled, podFirewallKeeper, podFirewallOf } from '../src/runtime/local/pod-firewall.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { asRoot, execInPod, replicaSpec, run, startPodBench, type PodBench } from './helpers/driver-pods.ts';
import { until } from './helpers/wait.ts';

const skip = !asRoot && 'needs root (network namespaces, nftables)';
let pods: PodBench;
const canaries: net.Server[] = [];
/** Connections the canaries accepted: any is a pod reaching the host. */
let accepted = 0;

const SERVER = `require('node:http').createServer((q, r) => r.end('web ' + process.env.REPLICA)).listen(8080, '0.0.0.0');\n`;
// Tries each [host, port] once; prints "<host> <outcome>" per line (connected, or the error's code).
const PROBE = `const net = require('node:net');
const targets = JSON.parse(process.argv[2]);
// EADDRNOTAVAIL: the pod's own link-local address is still in duplicate address detection; tried again until it is not.
const deadline = Date.now() + 20000;
const probe = (host, port) => new Promise((resolve) => {
  const socket = net.connect({ host, port, timeout: 10000 });
  socket.on('connect', () => { socket.destroy(); resolve(host + ' connected'); });
  socket.on('timeout', () => { socket.destroy(); resolve(host + ' timeout'); });
  socket.on('error', (e) => {
    if (e.code === 'EADDRNOTAVAIL' && Date.now() < deadline) setTimeout(() => probe(host, port).then(resolve), 100);
    else resolve(host + ' ' + e.code);
  });
});
Promise.all(targets.map(([host, port]) => probe(host, port))).then((lines) => console.log(lines.join('\\n')));
`;

function canary(host: string): Promise<number> {
  const server = net.createServer((socket) => {
    accepted++;
    socket.on('error', () => undefined); // the prober hangs up at once
    socket.end('canary\n');
  });
  canaries.push(server);
  return new Promise((resolve) => server.listen({ host, port: 0, ipv6Only: host === '::' }, () => resolve((server.address() as net.AddressInfo).port)));
}

/** The host link's IPv6 link-local address, once duplicate address detection is over. */
async function linkLocal(link: string): Promise<string> {
  return until(async () => {
    const { stdout } = await run('ip', ['-6', '-o', 'addr', 'show', 'dev', link, 'scope', 'link']);
    return stdout.includes('tentative') ? undefined : /inet6 (fe80::[0-9a-f:]+)\//.exec(stdout)?.[1];
  }, `the link-local address of ${link}`, 20_000);
}

before(async () => {
  if (skip) return;
  pods = await startPodBench({ name: 'pod-firewall', editorBlock: 4_000, cycleFrom: 120_000, uidBase: 4_300_000, count: 2 });
});

after(async () => {
  await pods?.close();
  for (const server of canaries) server.close();
});

test("a pod's connections to the host's 0.0.0.0 and [::] are refused on each of its links; its agent, its replica and names still work", { skip }, async () => {
  const [port4, port6] = [await canary('0.0.0.0'), await canary('::')];
  const ws = pods.workspace(0);
  await pods.volumeWith(ws, { 'server.cjs': SERVER, 'probe.cjs': PROBE });
  await pods.driver.startEditor(ws, () => undefined);
  const web = await pods.driver.startReplica(ws, replicaSpec('web', { steps: [{ run: 'exec node server.cjs' }], env: { REPLICA: '0' }, ports: [8080], health: { port: 8080, path: '/', mode: 'http-2xx' } }));
  await pods.reaches(ws, 'web', 'running');

  // the host reaches the replica at its address (as the router does), the editor pod reaches it by name
  assert.equal(await (await fetch(`http://${web.host}:8080/`)).text(), 'web 0');
  const byName = await execInPod(pods.driver, ws, { kind: 'editor' }, ['node', '-e', "fetch('http://web:8080/').then((r) => r.text()).then(console.log)"]);
  assert.deepEqual([byName.exitCode, byName.stdout], [0, 'web 0\n'], byName.stderr);

  const podNetwork = installationPodNetwork(pods.dataDir, ws.id);
  const serviceNetwork = JSON.parse(await readFile(path.join(pods.dataDir, 'pods', String(ws.id), 'network.json'), 'utf8')) as ServiceNetwork;
  const [podLinkLocal, serviceLinkLocal] = [await linkLocal(podNetwork.hostVeth), await linkLocal(serviceNetwork.hostVeth)];
  const fromEditor: Array<[string, number]> = [
    [podNetwork.hostAddress, port4],
    [serviceNetwork.hostAddress, port4],
    [`${podLinkLocal}%${podNetwork.podVeth}`, port6],
    [`${serviceLinkLocal}%lan0`, port6],
  ];
  const fromReplica: Array<[string, number]> = [[serviceNetwork.hostAddress, port4], [`${serviceLinkLocal}%lan0`, port6]];
  const probed = [
    await execInPod(pods.driver, ws, { kind: 'editor' }, ['node', 'probe.cjs', JSON.stringify(fromEditor)]),
    await execInPod(pods.driver, ws, { kind: 'replica', service: 'web', index: 0 }, ['node', '/data/app/probe.cjs', JSON.stringify(fromReplica)]),
  ];
  assert.deepEqual(probed.map((p) => [p.exitCode, p.stderr]), [[0, ''], [0, '']]);
  assert.deepEqual(probed.map((p) => p.stdout.trim().split('\n')), [
    fromEditor.map(([host]) => `${host} ECONNREFUSED`),
    fromReplica.map(([host]) => `${host} ECONNREFUSED`),
  ]);
  assert.equal(accepted, 0);

  // the host itself still reaches its canaries (the rules refuse what comes in on the pods' links only)
  const local = await new Promise<string>((resolve, reject) => net.connect({ host: '127.0.0.1', port: port4 }).on('data', (d) => resolve(String(d))).on('error', reject));
  assert.equal(local, 'canary\n');
});

test("the installation's table holds the group of its links; written again it stays one table; another installation's is another", { skip }, async () => {
  const owner = networkOwner(pods.dataDir);
  const firewall = podFirewallOf(owner);
  const ws = pods.workspace(0);
  assert.equal((await readFile(`/sys/class/net/${installationPodNetwork(pods.dataDir, ws.id).hostVeth}/netdev_group`, 'utf8')).trim(), String(firewall.group));
  const before = (await run('nft', ['list', 'table', 'inet', firewall.table])).stdout;
  assert.match(before, new RegExp(`iifgroup \\{ ${firewall.group}, ${firewall.offGroup} \\} ct state established,related accept`));
  await installPodFirewall(firewall, podFirewallKeeper(owner).egress); // what a start after a kill -9 does
  assert.equal((await run('nft', ['list', 'table', 'inet', firewall.table])).stdout, before);
  const other = podFirewallOf(networkOwner(path.join(pods.scratch, 'another')));
  assert.notEqual(other.table, firewall.table);
  assert.notEqual(other.group, firewall.group);
});

test('a shutdown with pods running keeps the table; a start writes it again over their links; with no link left a shutdown removes it', { skip }, async () => {
  const firewall = podFirewallOf(networkOwner(pods.dataDir));
  await pods.driver.close();
  assert.equal(await podFirewallInstalled(firewall), true, 'the pods outlive the server, their firewall with them');
  // lost while the server was away (and a link without its group, as a release before the firewall left it)
  await run('nft', ['delete', 'table', 'inet', firewall.table]);
  await writeFile(`/sys/class/net/${installationPodNetwork(pods.dataDir, pods.workspace(0).id).hostVeth}/netdev_group`, '0');
  const restarted = createLocalDriver({ dataDir: pods.dataDir });
  await until(async () => ((await podFirewallInstalled(firewall)) ? true : undefined), 'the table written at start', 20_000);
  await until(async () => ((await readFile(`/sys/class/net/${installationPodNetwork(pods.dataDir, pods.workspace(0).id).hostVeth}/netdev_group`, 'utf8')).trim() === String(firewall.group) ? true : undefined), 'the link in the group', 20_000);
  for (const n of [0, 1]) await restarted.stopWorkspace(pods.workspace(n));
  await restarted.close();
  assert.equal(await podFirewallInstalled(firewall), false);
});
