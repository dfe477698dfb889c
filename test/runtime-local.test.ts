// The local runtime driver against real bubblewrap, git and tar: volumes, clones, editor pods with their own
// network, a driver that finds its pods again, complete stops, archives. Workspace ids 900001+ are this file's own.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { processesOf } from './helpers/processes.ts';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { RuntimeFailure, type RuntimeDriver, type WorkspaceRef } from '../src/runtime/driver.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { createLocalDriver, installationPodNetwork } from '../src/runtime/local/index.ts';
import { hostCgroups } from '../src/runtime/local/cgroups.ts';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
const firstId = 900001;
const lastId = 900012;
const workspace = (id: number): WorkspaceRef => ({ id, uid: 20000 + id, storageGib: 1 });

let scratch: string;
let dataDir: string;
let repository: BareRepository;
let repositoryUrl: string;
let featureCommit: string;
let driver: RuntimeDriver;
const drivers: RuntimeDriver[] = [];

function localDriver(options: Partial<Parameters<typeof createLocalDriver>[0]> = {}): RuntimeDriver {
  const created = createLocalDriver({ dataDir, editorTimeoutMs: 30_000, ...options });
  drivers.push(created);
  return created;
}

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-runtime-local-'));
  await run('chmod', ['755', scratch]);
  dataDir = path.join(scratch, 'data');
  await mkdir(dataDir);
  await mkdir(path.join(scratch, 'git'));
  repository = await createBareRepository(
    { 'README.md': '# Demo\n', 'src/app.js': 'console.log("hello");\n' },
    { feature: { 'feature.txt': 'feature\n' } },
  );
  repositoryUrl = repository.url;
  featureCommit = repository.commits.feature;
  driver = localDriver();
});

after(async () => {
  for (let id = firstId; id <= lastId; id++) await driver.stopWorkspace(workspace(id)).catch(() => undefined);
  if (asRoot) {
    for (let id = firstId; id <= lastId; id++) {
      const network = installationPodNetwork(dataDir, id);
      await run('ip', ['netns', 'del', network.netns]).catch(() => undefined);
      await run('ip', ['link', 'del', network.hostVeth]).catch(() => undefined);
    }
  }
  for (const created of drivers) await created.close();
  await repository?.remove();
  await rm(scratch, { recursive: true, force: true });
});

/** Every file under `dir` with its content hash, owner, group and mode. */
async function describeTree(dir: string): Promise<Record<string, string>> {
  const described: Record<string, string> = {};
  const walk = async (current: string) => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const info = await stat(full);
      const hash = entry.isFile() ? createHash('sha256').update(await readFile(full)).digest('hex') : 'dir';
      described[path.relative(dir, full)] = `${hash} ${info.uid}:${info.gid} ${(info.mode & 0o7777).toString(8)}`;
      if (entry.isDirectory()) await walk(full);
    }
  };
  await walk(dir);
  return described;
}

const volumePath = (id: number) => path.join(dataDir, 'volumes', String(id));
/** The volume's code, the pods' /data/app (volume-layout.ts). */
const codePath = (id: number) => path.join(volumePath(id), 'app');

async function ownersUnder(dir: string): Promise<Set<string>> {
  const owners = new Set<string>();
  for (const line of Object.values(await describeTree(dir))) owners.add(line.split(' ')[1]);
  return owners;
}

async function rejectsWith(promise: Promise<unknown>, stage: RuntimeFailure['stage'], reason: RegExp): Promise<RuntimeFailure> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof RuntimeFailure, `expected a RuntimeFailure, got ${String(error)}`);
  assert.equal(error.stage, stage);
  assert.match(error.reason, reason);
  return error;
}

async function networkLeftovers(id: number): Promise<string[]> {
  if (!asRoot) return [];
  const network = installationPodNetwork(dataDir, id);
  const namespaces = (await run('ip', ['netns', 'list'])).stdout.split('\n').map((line) => line.split(' ')[0]);
  const links = (await run('ip', ['-o', 'link', 'show'])).stdout;
  return [
    ...(namespaces.includes(network.netns) ? [network.netns] : []),
    ...(links.includes(`${network.hostVeth}@`) || links.includes(`${network.hostVeth}:`) ? [network.hostVeth] : []),
  ];
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function fetchText(url: string, init?: RequestInit): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { ...init, headers: { connection: 'close', ...init?.headers } });
  return { status: response.status, text: await response.text() };
}

test('a volume belongs to the workspace UID and group 0, setgid, with group permissions equal to the user\'s', async () => {
  const ws = workspace(900001);
  await driver.createVolume(ws);
  await driver.createVolume(ws);
  const info = await stat(volumePath(ws.id));
  if (asRoot) assert.deepEqual([info.uid, info.gid], [ws.uid, 0]);
  assert.equal((info.mode & 0o7777).toString(8), '2770');
  assert.equal(((await stat(path.join(dataDir, 'volumes'))).mode & 0o777).toString(8), '711');
  assert.equal((await driver.volumeUsage(ws)).bytes > 0, true);
  await driver.deleteVolume(ws);
  await driver.deleteVolume(ws);
  await assert.rejects(stat(volumePath(ws.id)), { code: 'ENOENT' });
  assert.deepEqual(await driver.volumeUsage(ws), { bytes: 0, enforced: false }); // a directory: measured, not enforced
});

test('clone fills /data/app from a local bare repository, every file owned by the workspace UID and group 0', async () => {
  const ws = workspace(900002);
  const texts: string[] = [];
  await driver.createVolume(ws);
  await driver.cloneRepository(ws, { url: repositoryUrl }, (text) => texts.push(text));
  assert.deepEqual(texts, ['Cloning repository']);
  assert.equal(await readFile(path.join(codePath(ws.id), 'README.md'), 'utf8'), '# Demo\n');
  assert.equal(await readFile(path.join(codePath(ws.id), 'src/app.js'), 'utf8'), 'console.log("hello");\n');
  await assert.rejects(stat(path.join(codePath(ws.id), 'feature.txt')), { code: 'ENOENT' });
  if (asRoot) assert.deepEqual([...(await ownersUnder(codePath(ws.id)))], [`${ws.uid}:0`]);
});

test('clone checks out the branch or the commit given as ref', async () => {
  const byBranch = workspace(900003);
  await driver.createVolume(byBranch);
  await driver.cloneRepository(byBranch, { url: repositoryUrl, ref: 'feature' }, () => undefined);
  assert.equal(await readFile(path.join(codePath(byBranch.id), 'feature.txt'), 'utf8'), 'feature\n');
  await driver.deleteVolume(byBranch);
  await driver.createVolume(byBranch);
  await driver.cloneRepository(byBranch, { url: repositoryUrl.replace('file://', ''), ref: featureCommit }, () => undefined);
  const head = await run('git', ['-c', `safe.directory=${codePath(byBranch.id)}`, '-C', codePath(byBranch.id), 'rev-parse', 'HEAD']);
  assert.equal(head.stdout.trim(), featureCommit);
  await driver.deleteVolume(byBranch);
});

test('a repository that does not exist fails the clone with git\'s reason and leaves the volume empty', async () => {
  const ws = workspace(900004);
  await driver.createVolume(ws);
  const missing = path.join(scratch, 'git', 'missing.git');
  await rejectsWith(driver.cloneRepository(ws, { url: missing }, () => undefined), 'clone', /^repository '.*missing\.git' does not exist$/);
  assert.deepEqual(await readdir(codePath(ws.id)), []);
});

test('a branch that does not exist fails the clone with git\'s reason', async () => {
  const ws = workspace(900004);
  await rejectsWith(driver.cloneRepository(ws, { url: repositoryUrl, ref: 'nope' }, () => undefined), 'clone', /^Remote branch nope not found/);
  assert.deepEqual(await readdir(codePath(ws.id)), []);
  await driver.deleteVolume(ws);
});

test('an empty workspace\'s volume is prepared as the workspace UID and stays empty', async () => {
  const ws = workspace(900005);
  const texts: string[] = [];
  await driver.createVolume(ws);
  await driver.prepareEmptyVolume(ws, (text) => texts.push(text));
  assert.deepEqual(texts, ['Preparing the volume']);
  assert.deepEqual(await readdir(codePath(ws.id)), []);
});

test('the editor starts in a pod and serves its page at the returned address; saved files belong to the workspace UID', async () => {
  const ws = workspace(900002); // cloned above
  const texts: string[] = [];
  const address = await driver.startEditor(ws, (text) => texts.push(text));
  assert.deepEqual(texts, ['Starting', 'Starting IDE']);
  if (asRoot) assert.deepEqual(address, { host: installationPodNetwork(dataDir, ws.id).podAddress, port: 8443, template: driver.podTemplate!(ws) });
  const base = `http://${address.host}:${address.port}`;
  const page = await fetchText(`${base}/`);
  assert.equal(page.status, 200);
  assert.match(page.text, /<textarea id="text"/);
  const tree = JSON.parse((await fetchText(`${base}/api/tree`)).text) as { entries: Array<{ path: string }> };
  assert.ok(tree.entries.some((entry) => entry.path === 'src/app.js'));
  assert.equal((await fetchText(`${base}/api/file?path=README.md`)).text, '# Demo\n');
  const saved = await fetchText(`${base}/api/file?path=notes/todo.txt`, { method: 'PUT', body: 'write tests\n' });
  assert.equal(saved.status, 204);
  assert.equal(await readFile(path.join(codePath(ws.id), 'notes/todo.txt'), 'utf8'), 'write tests\n');
  if (asRoot) assert.deepEqual([...(await ownersUnder(codePath(ws.id)))], [`${ws.uid}:0`]);
  assert.equal((await fetchText(`${base}/api/file?path=../../etc/passwd`)).status, 400);
  assert.deepEqual(await driver.editorState(ws), { state: 'ready', address });
});

test('the pod runs as the workspace UID and group 0 and sees neither the data directory nor the server\'s environment', async () => {
  const ws = workspace(900006);
  await driver.createVolume(ws);
  const probe = [
    'id -u > probe-uid; id -g > probe-gid; ls -A / > probe-root; ls -A /data > probe-data; env > probe-env',
    `test -e ${dataDir} && echo visible > probe-datadir || echo hidden > probe-datadir`,
    'ls /proc | grep -c "^[0-9]" > probe-processes',
    'exec python3 -m http.server "$PORT" --bind "$HOST"',
  ].join('; ');
  const probing = localDriver({ editorCommand: probe });
  await probing.startEditor(ws, () => undefined);
  const read = (name: string) => readFile(path.join(codePath(ws.id), name), 'utf8').then((text) => text.trim());
  assert.equal(await read('probe-uid'), String(ws.uid));
  assert.equal(await read('probe-gid'), '0');
  // /run/svc: the agent's token; /nix: the workspace's; /.svc-limits: the cgroup's memory events (with cgroups)
  const limits = hostCgroups(asRoot) ? ['.svc-limits'] : [];
  assert.deepEqual((await read('probe-root')).split('\n').sort(), [...limits, 'bin', 'data', 'dev', 'etc', 'lib', 'lib64', 'nix', 'opt', 'proc', 'run', 'sbin', 'tmp', 'usr']);
  assert.equal(await read('probe-data'), '.svc\napp\nhome', 'the code, HOME and svc\'s own files');
  assert.equal(await read('probe-datadir'), 'hidden');
  assert.doesNotMatch(await read('probe-env'), /DATABASE_URL|SVC_DATA_DIR/);
  assert.ok(Number(await read('probe-processes')) <= 10, 'the pod sees only its own processes');
  await probing.stopWorkspace(ws);
  await driver.deleteVolume(ws);
});

test('two workspaces\' editors listen on the same port at the same time', { skip: !asRoot && 'needs root (own network namespaces)' }, async () => {
  const [first, second] = [workspace(900007), workspace(900008)];
  for (const ws of [first, second]) {
    await driver.createVolume(ws);
    await driver.prepareEmptyVolume(ws, () => undefined);
  }
  const [a, b] = await Promise.all([first, second].map((ws) => driver.startEditor(ws, () => undefined)));
  assert.equal(a.port, 8443);
  assert.equal(b.port, 8443);
  assert.notEqual(a.host, b.host);
  for (const address of [a, b]) assert.equal((await fetchText(`http://${address.host}:${address.port}/`)).status, 200);
});

test('a fresh driver on the same data directory finds the running pod and does not start another', async () => {
  const ws = workspace(900007);
  const before = await driver.editorState(ws);
  assert.equal(before.state, 'ready');
  const fresh = localDriver();
  assert.deepEqual(await fresh.editorState(ws), before);
  const texts: string[] = [];
  const address = await fresh.startEditor(ws, (text) => texts.push(text));
  assert.deepEqual(texts, []);
  assert.deepEqual({ state: 'ready', address }, before);
});

test('a pod outlives the server process that started it, and the next one finds it', async () => {
  const ws = workspace(900012);
  await driver.createVolume(ws);
  const server = [
    `import { createLocalDriver } from ${JSON.stringify(pathToFileURL(path.resolve('src/runtime/local/index.ts')).href)};`,
    `const driver = createLocalDriver({ dataDir: ${JSON.stringify(dataDir)} });`,
    `console.log(JSON.stringify(await driver.startEditor(${JSON.stringify(ws)}, () => undefined)));`,
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', server], { timeout: 60_000 });
  const address = JSON.parse(stdout.trim().split('\n').at(-1)!) as { host: string; port: number };
  assert.deepEqual(await driver.editorState(ws), { state: 'ready', address });
  assert.equal((await fetchText(`http://${address.host}:${address.port}/`)).status, 200);
  await driver.stopWorkspace(ws);
  assert.deepEqual(await processesOf(ws.uid), []);
  assert.deepEqual(await networkLeftovers(ws.id), []);
});

test('stop ends every process of the pod and removes its network; stopping again is fine', async () => {
  const ws = workspace(900007);
  const state = await driver.editorState(ws);
  assert.equal(state.state, 'ready');
  assert.ok((await processesOf(ws.uid)).length > 0);
  await driver.stopWorkspace(ws);
  assert.deepEqual(await processesOf(ws.uid), []);
  assert.deepEqual(await networkLeftovers(ws.id), []);
  assert.deepEqual(await driver.editorState(ws), { state: 'absent' });
  if (state.state === 'ready') await assert.rejects(fetch(`http://${state.address.host}:${state.address.port}/`));
  await driver.stopWorkspace(ws);
  await localDriver().stopWorkspace(ws);
  assert.deepEqual(await readdir(path.join(dataDir, 'pods')).then((names) => names.filter((n) => n.endsWith('.json') && n.startsWith(`${ws.id}`))), []);
  // the other pod was not touched, and the stopped one starts again
  assert.equal((await driver.editorState(workspace(900008))).state, 'ready');
  assert.equal((await driver.startEditor(ws, () => undefined)).port, asRoot ? 8443 : (await driver.editorState(ws) as { address: { port: number } }).address.port);
  await driver.stopWorkspace(ws);
});

test('an editor that keeps crashing fails with its last error line, and the state says so', async () => {
  const ws = workspace(900009);
  await driver.createVolume(ws);
  const crashing = localDriver({ editorCommand: 'echo "editor: cannot open the workbench" >&2; exit 3' });
  const texts: string[] = [];
  await rejectsWith(crashing.startEditor(ws, (text) => texts.push(text)), 'ide', /^editor: cannot open the workbench$/);
  assert.deepEqual(texts, ['Starting', 'Starting IDE']);
  const state = await crashing.editorState(ws);
  assert.equal(state.state, 'failed');
  if (state.state === 'failed') assert.equal(state.failure.stage, 'ide');
  await crashing.stopWorkspace(ws);
  assert.deepEqual(await processesOf(ws.uid), []);
});

test('a pod whose agent cannot start fails with the reason its log gives, and leaves nothing running', async () => {
  const ws = workspace(900010);
  await rejectsWith(driver.startEditor(ws, () => undefined), 'agent', /^the workspace has no volume$/);
  await driver.createVolume(ws);
  const project = path.join(scratch, 'broken-agent');
  await mkdir(path.join(project, 'src/agent'), { recursive: true });
  await writeFile(path.join(project, 'package.json'), '{ "type": "module" }\n');
  await writeFile(path.join(project, 'src/agent/main.ts'), "throw new Error('the agent cannot read its settings');\n");
  await writeFile(path.join(project, 'src/agent/editor.ts'), 'export {};\n');
  await writeFile(path.join(project, 'src/agent/code-server-launch.ts'), 'export {};\n');
  await run('chmod', ['-R', 'a+rX', project]);
  const broken = localDriver({ projectDir: project });
  const texts: string[] = [];
  await rejectsWith(broken.startEditor(ws, (text) => texts.push(text)), 'agent', /^the agent cannot read its settings$/);
  assert.deepEqual(texts, ['Starting']);
  assert.deepEqual(await processesOf(ws.uid), []);
  assert.deepEqual(await networkLeftovers(ws.id), []);
  assert.deepEqual(await broken.editorState(ws), { state: 'absent' });
});

test('a pod that died is reported absent, and starting the editor again starts a new pod', async () => {
  const ws = workspace(900008); // running since the same-port test
  assert.equal((await driver.editorState(ws)).state, 'ready');
  for (const pid of await processesOf(ws.uid)) process.kill(pid, 'SIGKILL');
  await waitUntil(async () => (await driver.editorState(ws)).state === 'absent', 'the dead pod is reported absent');
  const texts: string[] = [];
  const address = await driver.startEditor(ws, (text) => texts.push(text));
  // The agent starts the editor before its own status server: a quick editor may answer before "Starting IDE" is seen.
  assert.ok([['Starting'], ['Starting', 'Starting IDE']].some((expected) => JSON.stringify(expected) === JSON.stringify(texts)), texts.join(', '));
  assert.equal((await fetchText(`http://${address.host}:${address.port}/`)).status, 200);
  await driver.stopWorkspace(ws);
  assert.deepEqual(await networkLeftovers(ws.id), []);
});

test('archive packs the volume and frees it; restore brings back identical files with their owners', async () => {
  const ws = workspace(900002);
  await driver.stopWorkspace(ws);
  const original = await describeTree(volumePath(ws.id));
  const archiveFile = path.join(dataDir, 'archives', `${ws.id}.tar.gz`);
  const packed = await driver.archiveVolume(ws, archiveFile);
  const bytes = await readFile(archiveFile);
  assert.equal(packed.bytes, bytes.length);
  assert.equal(packed.sha256, createHash('sha256').update(bytes).digest('hex'));
  assert.equal(bytes[0], 0x1f); // gzip
  await assert.rejects(stat(volumePath(ws.id)), { code: 'ENOENT' });
  assert.deepEqual(await driver.archiveVolume(ws, archiveFile), packed, 'archiving again answers the same archive');
  await driver.restoreVolume(ws, archiveFile);
  assert.deepEqual(await describeTree(volumePath(ws.id)), original);
  const root = await stat(volumePath(ws.id));
  assert.equal((root.mode & 0o7777).toString(8), '2770');
  if (asRoot) assert.deepEqual([root.uid, root.gid], [ws.uid, 0]);
});

test('without root a pod shares the host network: agent and editor on free loopback ports', async () => {
  const ws = workspace(900011);
  const unprivileged = localDriver({ asRoot: false });
  await unprivileged.createVolume(ws);
  const address = await unprivileged.startEditor(ws, () => undefined);
  assert.equal(address.host, '127.0.0.1');
  assert.notEqual(address.port, 8443);
  assert.equal((await fetchText(`http://${address.host}:${address.port}/`)).status, 200);
  assert.deepEqual(await localDriver({ asRoot: false }).editorState(ws), { state: 'ready', address });
  await unprivileged.stopWorkspace(ws);
  await assert.rejects(fetch(`http://${address.host}:${address.port}/`));
  await unprivileged.deleteVolume(ws);
});

test('nothing is left behind: no process, network namespace, veth pair or volume', async () => {
  for (let id = firstId; id <= lastId; id++) {
    await driver.stopWorkspace(workspace(id));
    await driver.deleteVolume(workspace(id));
  }
  for (let id = firstId; id <= lastId; id++) {
    assert.deepEqual(await processesOf(workspace(id).uid), [], `processes of workspace ${id}`);
    assert.deepEqual(await networkLeftovers(id), [], `network of workspace ${id}`);
  }
  assert.deepEqual(await readdir(path.join(dataDir, 'volumes')), []);
  assert.deepEqual((await readdir(path.join(dataDir, 'pods'))).filter((name) => name.endsWith('.json') || name.endsWith('.log')), [], 'records and pod logs');
});
