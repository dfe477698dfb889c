// Pods' outbound network and its egress policy in the kernel (issue 34, item 1), server as root. An "internet" host
// in a namespace of its own at 198.51.100.x (internet-host.ts) serves files, an npm registry and a git repository,
// with its name in its own dnsmasq, which the driver gives the pods as their resolver (`podDns`). From the editor
// pod: curl by name, npm install and git clone/push succeed; a replica and a stage step reach it too; the clone at
// create runs under the policy (the host's loopback is not reached). Refused: a port of the host, another
// workspace's pod, 169.254.169.254, a private address; a second installation whose operator allowed those ranges
// (`egressAllow`) reaches all but the other pod. A workspace with egress off reaches nothing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_AGENT_PORT } from '../src/agent/protocol.ts';
import { RuntimeFailure } from '../src/runtime/driver.ts';
import { installationPodNetwork } from '../src/runtime/local/index.ts';
import { asRoot, execInPod, replicaSpec, startPodBench, type PodBench } from './helpers/driver-pods.ts';
import { createBareRepository, serveOverHttp } from './helpers/git.ts';
import { hostAddress as hostOwnAddress, startInternetHost, type InternetHost } from './helpers/internet-host.ts';

const run = promisify(execFile);
const skip = !asRoot && 'needs root (network namespaces, nftables)';
let internet: InternetHost;
let plain: PodBench;
let allowing: PodBench;
let canary: net.Server;
let canaryPort = 0;
let accepted = 0;
let hostAddress = '';
const privateAddress = `192.168.${1 + Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;
const METADATA = '169.254.169.254';

// Tries each [host, port] once; prints "<host>:<port> <outcome>" per line (connected, or the error's code).
const PROBE = `const net = require('node:net');
const targets = JSON.parse(process.argv[1]);
const probe = (host, port) => new Promise((resolve) => {
  const socket = net.connect({ host, port, timeout: 10000 });
  socket.on('connect', () => { socket.destroy(); resolve(host + ':' + port + ' connected'); });
  socket.on('timeout', () => { socket.destroy(); resolve(host + ':' + port + ' timeout'); });
  socket.on('error', (e) => resolve(host + ':' + port + ' ' + e.code));
});
Promise.all(targets.map(([host, port]) => probe(host, port))).then((lines) => console.log(lines.join('\\n')));
`;

const sh = (bench: PodBench, n: number, script: string) => execInPod(bench.driver, bench.workspace(n), { kind: 'editor' }, ['bash', '-c', script]);

async function probe(bench: PodBench, n: number, targets: Array<[string, number]>): Promise<string[]> {
  const result = await execInPod(bench.driver, bench.workspace(n), { kind: 'editor' }, ['node', '-e', PROBE, JSON.stringify(targets)]);
  assert.equal(result.exitCode, 0, result.stderr);
  return result.stdout.trim().split('\n');
}

before(async () => {
  if (skip) return;
  internet = await startInternetHost();
  await writeFile(`${internet.files}/hello.txt`, 'hello from the internet\n');
  await internet.publishPackage('tiny-pkg', '1.0.0', { 'index.js': "module.exports = 'tiny ' + require('./package.json').version;\n" });
  await internet.addRepository('app', { 'README.md': 'the app\n' });
  await internet.addAddress(METADATA);
  await internet.addAddress(privateAddress);
  hostAddress = await hostOwnAddress();
  canary = net.createServer((socket) => {
    accepted++;
    socket.on('error', () => undefined);
    socket.end('canary\n');
  });
  canaryPort = await new Promise<number>((resolve) => canary.listen(0, '0.0.0.0', () => resolve((canary.address() as net.AddressInfo).port)));
  const podDns = [internet.address];
  plain = await startPodBench({ name: 'pod-egress', editorBlock: 8_000, cycleFrom: 160_000, uidBase: 4_700_000, count: 5, driverOptions: { podDns } });
  allowing = await startPodBench({
    name: 'pod-egress-allow', editorBlock: 12_000, cycleFrom: 180_000, uidBase: 4_900_000, count: 1,
    driverOptions: { podDns, egressAllow: [`${hostAddress}/32`, `${METADATA}/32`, `${privateAddress}/32`, '10.0.0.0/8'] },
  });
  for (const [bench, n, egress] of [[plain, 0, 'on'], [plain, 1, 'on'], [plain, 2, 'off'], [allowing, 0, 'on']] as const) {
    const ws = bench.workspace(n, { egress });
    await bench.volumeWith(ws, { 'keep.txt': 'x\n' });
    await bench.driver.startEditor(ws, () => undefined);
  }
});

after(async () => {
  await plain?.close();
  await allowing?.close();
  await internet?.close();
  canary?.close();
});

test('from the editor pod: curl by name, npm install from the registry there, git clone and push over HTTP', { skip }, async () => {
  const curl = await sh(plain, 0, `curl -sSf ${internet.url}/files/hello.txt`);
  assert.deepEqual([curl.exitCode, curl.stdout], [0, 'hello from the internet\n'], curl.stderr);
  const npm = await sh(plain, 0, `mkdir -p /tmp/proj && cd /tmp/proj && echo '{"name":"proj","version":"0.0.0"}' > package.json && HOME=/tmp npm install --no-audit --no-fund --registry=${internet.registry} tiny-pkg >&2 && node -e "console.log(require('tiny-pkg'))"`);
  assert.deepEqual([npm.exitCode, npm.stdout], [0, 'tiny 1.0.0\n'], npm.stderr);
  const git = await sh(plain, 0, [
    `git clone -q ${internet.url}/git/app.git /tmp/app && cat /tmp/app/README.md`,
    'cd /tmp/app && echo more >> README.md && git -c user.name=dev -c user.email=dev@example.test commit -qam more && git push -q origin main',
  ].join(' && '));
  assert.deepEqual([git.exitCode, git.stdout], [0, 'the app\n'], git.stderr);
  const upstream = await run('git', ['-C', `${internet.files}/../git/app.git`, 'log', '-1', '--format=%an %s', 'main']);
  assert.equal(upstream.stdout, 'dev more\n');
});

test('a replica and a stage step reach the internet host by name too', { skip }, async () => {
  const ws = plain.workspace(0, { egress: 'on' });
  await plain.driver.startReplica(ws, replicaSpec('web', { steps: [{ run: 'exec sleep 600' }] }));
  await plain.reaches(ws, 'web', 'running');
  const fromReplica = await execInPod(plain.driver, ws, { kind: 'replica', service: 'web', index: 0 }, ['curl', '-sSf', `${internet.url}/files/hello.txt`]);
  assert.deepEqual([fromReplica.exitCode, fromReplica.stdout], [0, 'hello from the internet\n'], fromReplica.stderr);
  const step = await plain.driver.runStageStep(ws, 'egress-step', { run: `curl -sSf -o /data/app/step.txt ${internet.url}/files/hello.txt`, env: {} });
  assert.deepEqual(await step.exited, { exitCode: 0 });
  const read = await sh(plain, 0, 'cat /data/app/step.txt');
  assert.equal(read.stdout, 'hello from the internet\n');
});

test("the clone at create runs under the policy: from the internet host by name, never from the host's loopback", { skip }, async () => {
  const cloned = plain.workspace(3);
  await plain.driver.cloneRepository(cloned, { url: `${internet.url}/git/app.git` }, () => undefined);
  const loopback = await serveOverHttp(await createBareRepository({ 'README.md': 'on the host\n' }));
  try {
    const error = await plain.driver.cloneRepository(plain.workspace(4), { url: loopback.url }, () => undefined).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof RuntimeFailure, String(error));
    assert.match(error.reason, /127\.0\.0\.1|connect|refused/i);
  } finally {
    await loopback.close();
  }
});

test('refused from a pod: a port of the host, another workspace\'s pod, 169.254.169.254, a private address; allowed by the operator, reached (but never another pod)', { skip }, async () => {
  const otherPod = installationPodNetwork(plain.dataDir, plain.workspace(1).id).podAddress;
  const targets: Array<[string, number]> = [[hostAddress, canaryPort], [otherPod, DEFAULT_AGENT_PORT], [METADATA, 80], [privateAddress, 80]];
  const refused = await probe(plain, 0, targets);
  assert.equal(refused.length, 4);
  for (const line of refused) assert.doesNotMatch(line, /connected/, refused.join('; '));
  assert.equal(accepted, 0);
  const allowed = await probe(allowing, 0, targets);
  assert.deepEqual(allowed.map((line) => line.endsWith(' connected')), [true, false, true, true], allowed.join('; '));
  assert.equal(accepted, 1);
  // the internet itself stays reached from the pod whose installation allows more
  const curl = await sh(allowing, 0, `curl -sSf ${internet.url}/files/hello.txt`);
  assert.equal(curl.stdout, 'hello from the internet\n', curl.stderr);
});

test('egress off: the pod reaches neither the internet host nor its resolver', { skip }, async () => {
  const curl = await sh(plain, 2, `curl -sS --max-time 20 http://${internet.address}/files/hello.txt`);
  assert.notEqual(curl.exitCode, 0);
  const lookup = await sh(plain, 2, `getent hosts ${internet.name}`);
  assert.notEqual(lookup.exitCode, 0);
});

test('egress turned off while the pods run applies at once (a replica too), and on again', { skip }, async () => {
  const on = plain.workspace(0, { egress: 'on' });
  const off = plain.workspace(0, { egress: 'off' });
  const fetchFrom = (target: { kind: 'editor' } | { kind: 'replica'; service: string; index: number }) =>
    execInPod(plain.driver, on, target, ['curl', '-sS', '--max-time', '20', `http://${internet.address}/files/hello.txt`]);
  const replica = { kind: 'replica' as const, service: 'web', index: 0 };
  await plain.driver.applyEgress!(off);
  const refused = [await fetchFrom({ kind: 'editor' }), await fetchFrom(replica)];
  assert.deepEqual(refused.map((r) => r.exitCode === 0), [false, false], refused.map((r) => r.stderr).join('; '));
  await plain.driver.applyEgress!(on);
  const reached = [await fetchFrom({ kind: 'editor' }), await fetchFrom(replica)];
  assert.deepEqual(reached.map((r) => r.stdout), ['hello from the internet\n', 'hello from the internet\n'], reached.map((r) => r.stderr).join('; '));
});
